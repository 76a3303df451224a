# The tests need cmocka (unit tests) and libmicrohttpd (the fake servers):
# `make deps` installs both. A missing one fails the configure step instead of
# silently leaving tests out; -DRATCHET_TESTS=OFF builds without tests.
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
if(NOT MHD_FOUND)
  message(FATAL_ERROR "the tests need libmicrohttpd (Debian: libmicrohttpd-dev), or configure with -DRATCHET_TESTS=OFF")
endif()

# rt_add_test(NAME SOURCES files... LIBS libs... [TIMEOUT s] [LABELS l...] [ARGS a...] [NEEDS_GSM8K])
# registers one test with ctest. Every test gets a timeout. Test files in
# tests/*.cmake call this; no test is registered anywhere else.
# The GSM8K data the tests read: the folder $RATCHET_GSM8K names at configure
# time (the variable ratchet itself reads; $RATCHET_GSM8K_DIR, its older
# name, still works), else ../shared/data/gsm8k beside the checkout. Tests
# that need it and do not find it are skipped (exit 77), saying where to put it.
if(DEFINED ENV{RATCHET_GSM8K} AND IS_DIRECTORY "$ENV{RATCHET_GSM8K}")
  set(RT_GSM8K_DIR $ENV{RATCHET_GSM8K})
elseif(DEFINED ENV{RATCHET_GSM8K_DIR})
  set(RT_GSM8K_DIR $ENV{RATCHET_GSM8K_DIR})
else()
  get_filename_component(RT_GSM8K_DIR ${CMAKE_SOURCE_DIR}/../shared/data/gsm8k ABSOLUTE)
endif()
set(RT_TEST_ENV "RATCHET_BIN=$<TARGET_FILE:ratchet>;RATCHET_SRC=${CMAKE_SOURCE_DIR};RATCHET_BUILD=${CMAKE_BINARY_DIR};RATCHET_GSM8K_DIR=${RT_GSM8K_DIR};ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

function(rt_add_test name)
  cmake_parse_arguments(T "NEEDS_GSM8K" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS;COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  foreach(src ${T_SOURCES})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "test ${name}: ${src} does not exist")
    endif()
  endforeach()
  set(skip OFF)
  if(T_NEEDS_GSM8K AND NOT EXISTS ${RT_GSM8K_DIR}/test.jsonl)
    set(skip ON)
  endif()
  if(T_SOURCES)
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE ${T_LIBS})
    target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA)
  endif()
  if(skip)
    add_test(NAME ${name} COMMAND sh -c "echo 'skipped: GSM8K data not found at ${RT_GSM8K_DIR} (set RATCHET_GSM8K to a folder with test.jsonl and train.jsonl and re-run cmake)'; exit 77")
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  elseif(T_SOURCES)
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
  foreach(src ${B_SOURCES})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "bench ${name}: ${src} does not exist")
    endif()
  endforeach()
  add_executable(bench_${name} ${B_SOURCES})
  target_link_libraries(bench_${name} PRIVATE ${B_LIBS})
endfunction()

file(GLOB RT_TEST_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*.cmake)
list(SORT RT_TEST_FILES)
foreach(f ${RT_TEST_FILES})
  include(${f})
endforeach()
