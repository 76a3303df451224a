# Unit tests of the cross-cutting utilities (runner/util_*.c).
if(CMOCKA_FOUND)
  rt_add_test(test_util SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_util.c
              LIBS rt_util TIMEOUT 30 LABELS unit)
endif()
