# Configuration module: core/config/config.c and yamltree.c on their own, so
# the test links only libyaml.
ctp_add_test(test_config test_config.c ${PROJECT_SOURCE_DIR}/core/config/config.c
             ${PROJECT_SOURCE_DIR}/core/config/yamltree.c
             ${PROJECT_SOURCE_DIR}/core/config/recordcfg.c
             ${PROJECT_SOURCE_DIR}/core/util/suggest.c
             LIBS PkgConfig::YAML)
target_include_directories(test_config PRIVATE ${PROJECT_SOURCE_DIR}/core/config
                           ${PROJECT_SOURCE_DIR}/core/util)
