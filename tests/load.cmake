# The load generator's tests and bench (runner/load*.c, db/requests.c), and
# `ratchet bench load` with vLLM's flags against a vLLM result file (test_load_vllm).
# The misbehaving test server (tests/load/testserver.c) needs libmicrohttpd;
# without it only the pure unit tests are built.
rt_add_test(test_load SOURCES ${CMAKE_SOURCE_DIR}/tests/load/test_load.c
            LIBS rt_load rt_db rt_base PkgConfig::CURL PkgConfig::JANSSON TIMEOUT 30 LABELS load unit)
if(MHD_FOUND)
  add_library(rt_load_testserver STATIC ${CMAKE_SOURCE_DIR}/tests/load/testserver.c)
  target_link_libraries(rt_load_testserver PUBLIC rt_base PkgConfig::MHD PkgConfig::JANSSON Threads::Threads)
  rt_add_test(test_load_run SOURCES ${CMAKE_SOURCE_DIR}/tests/load/test_load_run.c
              LIBS rt_load rt_load_testserver rt_db rt_base TIMEOUT 60 LABELS load)
  add_executable(load_testserver ${CMAKE_SOURCE_DIR}/tests/load/testserver_main.c)
  target_link_libraries(load_testserver PRIVATE rt_load_testserver)
  rt_add_test(test_load_vllm SOURCES ${CMAKE_SOURCE_DIR}/tests/load/test_load_vllm.c
              LIBS rt_bench rt_load rt_load_testserver rt_db rt_base TIMEOUT 60 LABELS load e2e)
  # The total cap on response memory across streams.
  rt_add_test(test_load_memcap SOURCES ${CMAKE_SOURCE_DIR}/tests/load/test_load_memcap.c
              LIBS rt_load rt_load_testserver rt_db rt_base TIMEOUT 60 LABELS load)
  # A server that echoes the key (tests/gate/echo_server.c): errors redacted.
  if(TARGET rt_echo_server)
    rt_add_test(test_load_redact SOURCES ${CMAKE_SOURCE_DIR}/tests/load/test_load_redact.c
                LIBS rt_echo_server rt_load rt_db rt_base TIMEOUT 60 LABELS load)
    target_include_directories(test_load_redact PRIVATE ${CMAKE_SOURCE_DIR}/tests/gate)
  endif()
  rt_add_test(test_load_cli COMMAND sh ${CMAKE_SOURCE_DIR}/tests/load/cli.sh TIMEOUT 60 LABELS load e2e)
  # vLLM's connection flags, and the exact command line of vLLM's docs example, against simserve.
  rt_add_test(test_load_vllm_flags COMMAND sh ${CMAKE_SOURCE_DIR}/tests/load/vllm_flags.sh
              TIMEOUT 60 LABELS load e2e)
  set_tests_properties(test_load_vllm_flags PROPERTIES SKIP_RETURN_CODE 77)
  # A server that drops kept-alive connections (simserve --keepalive-drop):
  # libcurl's per-handle retry budget (runner/oai/oai_client.c, xfer_renew).
  rt_add_test(test_load_keepalive COMMAND sh ${CMAKE_SOURCE_DIR}/tests/load/keepalive.sh
              TIMEOUT 60 LABELS load e2e)
  set_tests_properties(test_load_keepalive PROPERTIES SKIP_RETURN_CODE 77)
  rt_add_bench(load SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_load.c
               LIBS rt_load rt_load_testserver rt_base)
endif()
