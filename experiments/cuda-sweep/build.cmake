# cuda_sweep: the GPU kernel sweep + campaign replay driver (any backend; it
# needs the cuda backend and a GPU to do anything useful). The .cubin files
# are built with nvcc at build time when nvcc is found.
add_executable(cuda_sweep ${CMAKE_SOURCE_DIR}/experiments/cuda-sweep/sweep.c)
target_link_libraries(cuda_sweep PRIVATE rt_bench rt_dev rt_db rt_base)
if(RT_NVCC)
  foreach(k saxpy sgemm)
    add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/cuda/${k}.cubin
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/cuda
      COMMAND ${RT_NVCC} -arch=sm_90 -cubin -O3 -o ${CMAKE_BINARY_DIR}/cuda/${k}.cubin
              ${CMAKE_SOURCE_DIR}/experiments/cuda-${k}/${k}.cu
      DEPENDS ${CMAKE_SOURCE_DIR}/experiments/cuda-${k}/${k}.cu ${CMAKE_SOURCE_DIR}/experiments/cuda-sgemm/sgemm_tile.cuh
      COMMENT "nvcc ${k}.cu -> ${k}.cubin (sm_90)")
  endforeach()
  add_custom_target(cuda_cubins ALL DEPENDS ${CMAKE_BINARY_DIR}/cuda/saxpy.cubin
                    ${CMAKE_BINARY_DIR}/cuda/sgemm.cubin)
endif()
# sweep_points: the exhaustive sweep of a search space, one module per point
# (experiments/search-h200-sgemm, experiments/search-cuda-conv; it needs the
# cuda backend and a GPU to measure anything, and builds everywhere).
add_executable(sweep_points ${CMAKE_SOURCE_DIR}/experiments/cuda-sweep/sweep_points.c)
target_link_libraries(sweep_points PRIVATE rt_bench rt_dev rt_db rt_base)
