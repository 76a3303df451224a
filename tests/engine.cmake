# Unit tests of the engine supervisor's stop and of process trees
# (runner/base/proc.h): a descendant in a new session is stopped with its
# engine, and never holds a stop up.
rt_add_test(test_engine SOURCES ${CMAKE_SOURCE_DIR}/tests/engine/test_engine.c
            LIBS rt_engine TIMEOUT 60 LABELS unit)

# Identity without a nonce against real processes (a foreign simserve on the
# expected port is refused), the engines' version answers, a docker argv's
# image, the tree's RSS and per-process device memory (host; NVML absent).
rt_add_test(test_identity SOURCES ${CMAKE_SOURCE_DIR}/tests/engine/test_identity.c
            LIBS rt_engine rt_dev TIMEOUT 60 LABELS unit)
if(TARGET test_identity)
  add_dependencies(test_identity simserve)
endif()

# Engine lifetime (restart: sample | arm | switch, concurrent: 2), a served
# name with {nonce}, each launch's provenance and the engine's cost, end to
# end against simserve; prints each policy's wall-clock.
rt_add_test(test_engine_lifetime COMMAND sh ${CMAKE_SOURCE_DIR}/tests/engine/lifetime.sh
            TIMEOUT 300 LABELS e2e)

# Each launch's provenance through a stand-in docker: image and digest (or
# the reference alone, and why), executable sha256, git HEAD, the
# provenance command's output redacted, and a changed launch flagged.
rt_add_test(test_engine_provenance COMMAND sh ${CMAKE_SOURCE_DIR}/tests/engine/provenance.sh
            TIMEOUT 180 LABELS e2e)

# The shared objects the engine maps are hashed with each launch: a library
# whose bytes change under an unchanged executable flags the launch.
rt_add_test(test_engine_provenance_libs COMMAND sh ${CMAKE_SOURCE_DIR}/tests/engine/provenance_libs.sh
            TIMEOUT 180 LABELS e2e)
