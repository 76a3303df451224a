# The CPU demo's blocked SGEMM, built as a host-backend module so CI compiles
# it with the project's warnings. The campaign itself loads gemm.c (the host
# backend compiles it with -O3 -march=native), so table edits and patches to
# the source are what gets measured.
add_library(cpu_gemm MODULE ${CMAKE_SOURCE_DIR}/experiments/cpu-gemm/gemm.c)
set_target_properties(cpu_gemm PROPERTIES PREFIX "" OUTPUT_NAME "cpu_gemm")
target_link_libraries(cpu_gemm PRIVATE PkgConfig::JANSSON)
