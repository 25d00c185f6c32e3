/* The pure parser of the iter/task record stream (bpftask_rec.h). */
#include "bpftask_rec.h"

#include <errno.h>
#include <string.h>

int ctp_bpftask_rec_next(const void *buf, size_t len, size_t *off,
			 struct ctp_bpftask_rec *out)
{
	struct ctp_bpftask_rec r;
	if (*off > len)
		return -EBADMSG;
	if (*off == len)
		return 0;
	if (len - *off < sizeof(r))
		return -EBADMSG;
	memcpy(&r, (const char *)buf + *off, sizeof(r));
	if (r.size != sizeof(r) || r.version != CTP_BPFTASK_REC_VERSION ||
	    (r.present & ~CTP_BPFTASK_HAS_ALL) || r.tgid <= 0 || r.pid <= 0 ||
	    !memchr(r.comm, '\0', sizeof(r.comm)))
		return -EBADMSG;
	*out = r;
	*off += sizeof(r);
	return 1;
}
