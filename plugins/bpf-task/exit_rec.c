/* The pure parser of one exit ring record (exit_rec.h). */
#include "exit_rec.h"

#include <errno.h>
#include <string.h>

int ctp_bpfexit_rec_parse(const void *buf, size_t len,
			  struct ctp_bpfexit_rec *out)
{
	struct ctp_bpfexit_rec r;

	if (!buf || len != sizeof(r))
		return -EBADMSG;
	memcpy(&r, buf, sizeof(r));
	if (r.size != sizeof(r) || r.version != CTP_BPFEXIT_REC_VERSION ||
	    (r.present & ~CTP_BPFEXIT_HAS_ALL) || r.tgid <= 0 || r.pid <= 0 ||
	    r.ppid < 0 || !memchr(r.comm, '\0', sizeof(r.comm)))
		return -EBADMSG;
	*out = r;
	return 0;
}
