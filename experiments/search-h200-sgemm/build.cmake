# sweep_points: the exhaustive sweep of the H200 SGEMM search space (needs the
# cuda backend and a GPU to measure anything; it builds everywhere).
add_executable(sweep_points ${CMAKE_SOURCE_DIR}/experiments/search-h200-sgemm/sweep_points.c)
target_link_libraries(sweep_points PRIVATE rt_bench rt_dev rt_db rt_base)
