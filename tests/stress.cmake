# Captures under churn (label `stress`; 20 s in the gate, a minute at full
# size, `tools/dev.sh soak`; CTP_STRESS_SECONDS sets another): thousands of
# threads created and joined per second and processes forked, while the
# binary captures with 1 and 2 workers; every capture decodes and accounts
# for every task. Runs in every build, so under the sanitizers too.
ctp_add_test(test_stress_churn test_stress_churn.c e2e_util.c
             LIBS ctpcore Threads::Threads)
# Alone: its load takes every CPU, which timing-sensitive tests must not
# share.
set_tests_properties(test_stress_churn PROPERTIES LABELS stress TIMEOUT 600
                     RUN_SERIAL TRUE)
