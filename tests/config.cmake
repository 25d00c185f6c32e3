# Configuration module: core/config alone, so the test links ctp_config
# (and ctp_util below it), none of the core's other libraries.
ctp_add_test(test_config test_config.c LIBS ctp_config)
