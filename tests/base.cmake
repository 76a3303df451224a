# Unit tests of the cross-cutting utilities (runner/util_*.c).
rt_add_test(test_base SOURCES ${CMAKE_SOURCE_DIR}/tests/base/test_base.c
            LIBS rt_base TIMEOUT 30 LABELS unit)
# The markup escaper: entities, and always well-formed UTF-8 out.
rt_add_test(test_markup SOURCES ${CMAKE_SOURCE_DIR}/tests/base/test_markup.c
            LIBS rt_base TIMEOUT 60 LABELS unit)
# The one redaction function (issue 17 item 5).
rt_add_test(test_redact SOURCES ${CMAKE_SOURCE_DIR}/tests/base/test_redact.c
            LIBS rt_base TIMEOUT 30 LABELS unit)
# What containing a measured command (the keeper, rt_keep.c) costs per start.
rt_add_bench(spawn SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_spawn.c LIBS rt_base)
