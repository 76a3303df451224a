# rt_add_test(NAME SOURCES files... LIBS libs... [TIMEOUT s] [LABELS l...] [ARGS a...])
# registers one test with ctest. Every test gets a timeout. Test files in
# tests/*.cmake call this; no test is registered anywhere else.
set(RT_TEST_ENV "RATCHET_BIN=$<TARGET_FILE:ratchet>;RATCHET_SRC=${CMAKE_SOURCE_DIR};RATCHET_BUILD=${CMAKE_BINARY_DIR};RATCHET_GSM8K_DIR=${CMAKE_SOURCE_DIR}/../shared/data/gsm8k;ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

function(rt_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS;COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(T_SOURCES)
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE ${T_LIBS})
    if(CMOCKA_FOUND)
      target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA)
    endif()
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  else()
    add_test(NAME ${name} COMMAND ${T_COMMAND} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${RT_TEST_ENV}")
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()


# rt_add_bench(NAME SOURCES files... LIBS libs...): a benchmark program,
# built as bench_NAME and run by `make bench` (tools/bench.sh), never by ctest.
function(rt_add_bench name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(bench_${name} ${B_SOURCES})
  target_link_libraries(bench_${name} PRIVATE ${B_LIBS})
endfunction()

file(GLOB RT_TEST_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*.cmake)
list(SORT RT_TEST_FILES)
foreach(f ${RT_TEST_FILES})
  include(${f})
endforeach()
