# Unit tests of the benchmark kinds (runner/bench/): the command benchmark's
# extractors here; the kernel benchmark's tests are in dev.cmake because they
# need the test kernels.
rt_add_test(test_bench_cmd SOURCES ${CMAKE_SOURCE_DIR}/tests/bench/test_bench_cmd.c
            LIBS rt_bench rt_base TIMEOUT 30 LABELS unit)
# A metric beyond the stdout cap: the error says the output was cut.
rt_add_test(test_bench_cut SOURCES ${CMAKE_SOURCE_DIR}/tests/bench/test_bench_cut.c
            LIBS rt_bench rt_base TIMEOUT 30 LABELS unit)
# vLLM's result file, written by ratchet's writer and read back by the
# format (every key), and llama-bench's JSONL.
rt_add_test(test_bench_vllm SOURCES ${CMAKE_SOURCE_DIR}/tests/bench/test_bench_vllm.c
            LIBS rt_bench rt_load rt_spec rt_db rt_base PkgConfig::CURL PkgConfig::JANSSON TIMEOUT 30 LABELS unit)
# vllm bench serve's result file found per sample ({iteration}, folders,
# globs, vLLM's own naming) and every key read.
rt_add_test(bench_result_file COMMAND sh ${CMAKE_SOURCE_DIR}/tests/bench/result_file.sh TIMEOUT 120 LABELS e2e)
# The format names of the docs are those `ratchet check` accepts.
rt_add_test(bench_format_names COMMAND sh ${CMAKE_SOURCE_DIR}/tests/bench/format_names.sh TIMEOUT 60 LABELS unit)
