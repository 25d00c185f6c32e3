# The capture model (core/capture/model.c): the blob pool and the cache in
# front of it.
ctp_add_test(test_blobpool test_blobpool.c LIBS ctpcore)
