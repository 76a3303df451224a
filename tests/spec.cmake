# Tests of the spec loader and `ratchet check` (owner: spec).
rt_add_test(test_spec SOURCES ${CMAKE_SOURCE_DIR}/tests/spec/test_spec.c
            LIBS rt_spec rt_base TIMEOUT 30 LABELS spec unit)
if(TARGET test_spec)
  target_compile_definitions(test_spec PRIVATE RATCHET_SRC_DEFAULT="${CMAKE_SOURCE_DIR}")
endif()
# The base pieces the spec owns (runner/base/rt_duration.c, rt_yaml.c).
rt_add_test(test_duration SOURCES ${CMAKE_SOURCE_DIR}/tests/base/test_duration.c
            LIBS rt_base TIMEOUT 30 LABELS spec unit)
rt_add_test(test_yaml SOURCES ${CMAKE_SOURCE_DIR}/tests/base/test_yaml.c
            LIBS rt_base TIMEOUT 30 LABELS spec unit)
rt_add_test(spec_check_bad COMMAND sh ${CMAKE_SOURCE_DIR}/tests/spec/check_bad.sh
            TIMEOUT 60 LABELS spec e2e)
rt_add_test(spec_check_good COMMAND sh ${CMAKE_SOURCE_DIR}/tests/spec/check_good.sh
            TIMEOUT 30 LABELS spec e2e)
rt_add_test(spec_check_warn COMMAND sh ${CMAKE_SOURCE_DIR}/tests/spec/check_warn.sh TIMEOUT 30 LABELS spec)
rt_add_test(spec_slo_cli COMMAND sh ${CMAKE_SOURCE_DIR}/tests/spec/slo_cli.sh
            TIMEOUT 30 LABELS spec e2e)
rt_add_test(spec_check_experiments COMMAND sh ${CMAKE_SOURCE_DIR}/tests/spec/check_experiments.sh
            TIMEOUT 60 LABELS spec e2e)

# Cases:
#   test_spec               unit tests of runner/spec/*.c (table at the end of test_spec.c)
#   test_duration           rt_parse_duration, rt_parse_number, rt_split_unit (runner/base/rt_duration.c)
#   test_yaml               the YAML<->JSON converter and emitter (runner/base/rt_yaml.c)
#   spec_check_bad          `ratchet check` on every tests/spec/bad/*.yaml: exit 2, first stderr line = .expect
#   spec_check_good         `ratchet check` on tests/spec/good/*.yaml: exit 0, output re-checks to itself, --json
#   spec_slo_cli            `ratchet bench load --slo` reads the spec's SLO names; every --slo is read
#   spec_check_experiments  `ratchet check` on every experiments/**/*.yaml (not under bad/): exit 0
