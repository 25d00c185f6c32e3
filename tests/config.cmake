# Configuration module: core/config.c on its own, so the test builds while the
# rest of the core is in flux and links only libyaml.
ctp_add_test(test_config test_config.c ${PROJECT_SOURCE_DIR}/core/config.c
             LIBS PkgConfig::YAML)
