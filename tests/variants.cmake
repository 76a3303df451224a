# Unit tests of the variant kinds (variants/).
rt_add_test(test_var SOURCES ${CMAKE_SOURCE_DIR}/tests/variants/test_var.c
            LIBS rt_var rt_bench rt_spec rt_base TIMEOUT 30 LABELS unit)
# Which files a change touches and how they come back (issue 17).
rt_add_test(test_var_files SOURCES ${CMAKE_SOURCE_DIR}/tests/variants/test_var_files.c
            LIBS rt_var rt_bench rt_spec rt_base TIMEOUT 60 LABELS unit)
# Table edits keep every byte they do not change (issue 17.16).
rt_add_test(test_var_bytes SOURCES ${CMAKE_SOURCE_DIR}/tests/variants/test_var_bytes.c
            LIBS rt_var rt_bench rt_base TIMEOUT 30 LABELS unit)
