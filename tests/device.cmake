# Device backends, the kernel benchmark and `ratchet devices`.
# The host backend runs everywhere (CI); cuda/hip/ze are compiled when their
# packages are present, and their no-device answers are tested here.
add_library(rt_test_kernels MODULE ${CMAKE_SOURCE_DIR}/tests/device/kernels.c)
set_target_properties(rt_test_kernels PROPERTIES PREFIX "" OUTPUT_NAME "test_kernels")

# A unit test that loads the test kernels: NAME SOURCE TIMEOUT LIBS...
function(rt_kernel_test name src timeout)
  rt_add_test(${name} SOURCES ${src} LIBS ${ARGN} TIMEOUT ${timeout} LABELS unit dev)
  target_compile_definitions(${name} PRIVATE
    TEST_KERNELS_SO="$<TARGET_FILE:rt_test_kernels>"
    TEST_SRC_DIR="${CMAKE_SOURCE_DIR}")
  add_dependencies(${name} rt_test_kernels)
endfunction()
rt_kernel_test(test_dev ${CMAKE_SOURCE_DIR}/tests/device/test_dev.c 60 rt_dev rt_base)
# The telemetry sampler on the host backend's stand-in (period, medians, throttle flag).
rt_add_test(test_sampler SOURCES ${CMAKE_SOURCE_DIR}/tests/device/test_sampler.c
  LIBS rt_dev rt_base TIMEOUT 60 LABELS unit dev)
rt_kernel_test(test_bench_kernel ${CMAKE_SOURCE_DIR}/tests/bench/test_bench_kernel.c 90
  rt_bench rt_dev rt_db rt_base)

# `ratchet devices`: lists host, and says "not built" or "no device" for the rest, exit 0.
rt_add_test(test_cmd_devices
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/device/cmd_devices.sh
  TIMEOUT 60 LABELS e2e dev)

# make bench: the CPU GEMM demo's kernel benchmarks, once each.
rt_add_bench(kernel_spec
  SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_kernel_spec.c
  LIBS rt_bench rt_spec rt_dev rt_db rt_base)

# The hip backend's telemetry finds the GPU by PCI bus id in amdsmi's list,
# against a stand-in libamd_smi.so (tests/device/fake_amdsmi.c) in a folder
# of its own on LD_LIBRARY_PATH.
add_library(rt_fake_amdsmi SHARED ${CMAKE_SOURCE_DIR}/tests/device/fake_amdsmi.c)
set_target_properties(rt_fake_amdsmi PROPERTIES OUTPUT_NAME "amd_smi"
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake-amdsmi)
rt_add_test(test_amdsmi SOURCES ${CMAKE_SOURCE_DIR}/tests/device/test_amdsmi.c
  LIBS rt_dev rt_base TIMEOUT 30 LABELS unit dev)
add_dependencies(test_amdsmi rt_fake_amdsmi)
set_property(TEST test_amdsmi APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/fake-amdsmi")
