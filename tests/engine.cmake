# Unit tests of the engine supervisor's stop and of process trees
# (runner/base/proc.h): a descendant in a new session is stopped with its
# engine, and never holds a stop up.
rt_add_test(test_engine SOURCES ${CMAKE_SOURCE_DIR}/tests/engine/test_engine.c
            LIBS rt_engine TIMEOUT 60 LABELS unit)
