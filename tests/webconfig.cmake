# `serve --web-config` (core/cli/webconfig.c): the exporter-toolkit web
# config schema on the fixture certificates (tests/fixtures/webcfg), every
# key and every error with its position.
ctp_add_test(test_webconfig test_webconfig.c LIBS ctpcore)
target_include_directories(test_webconfig PRIVATE ${PROJECT_SOURCE_DIR}/core/cli
                           ${PROJECT_SOURCE_DIR}/core/config)
