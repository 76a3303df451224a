# End to end, one per template of experiments/templates/: the template's own
# engine command against simserve in that engine's personality (vllm,
# llama-server, sglang wrappers in experiments/simserve/bin): baseline, a kept
# change, a gated change, an engine that never gets ready, and a port taken
# over mid-run. Plus the personalities' command lines, routes and logs.
foreach(t vllm-nvidia vllm-rocm llama-server sglang)
  string(REPLACE "-" "_" n ${t})
  rt_add_test(test_template_${n} COMMAND sh ${CMAKE_SOURCE_DIR}/tests/e2e/template_e2e.sh ${t}
              NEEDS_GSM8K TIMEOUT 300 LABELS e2e)
endforeach()
rt_add_test(test_personality COMMAND sh ${CMAKE_SOURCE_DIR}/tests/e2e/personality.sh
            NEEDS_GSM8K TIMEOUT 120 LABELS e2e)

# A real llama-server (llama.cpp from tools/llama.sh's cache: `make llama`)
# serving a random-weight llama, tuned by experiments/llama-cpp's campaign:
# baseline, a kept and a reverted flag change, the ggml-cpu patch rebuilt
# and measured, the gate with 0 failed requests, a hand-started llama-server
# on the engine's port refused by name. Skips (77), saying so, without a
# cached build. The timeout covers the patch's two incremental rebuilds on
# a loaded 2-core machine.
rt_add_test(test_llama_real COMMAND sh ${CMAKE_SOURCE_DIR}/tests/e2e/llama_real.sh
            NEEDS_GSM8K TIMEOUT 900 LABELS e2e llama)
set_tests_properties(test_llama_real PROPERTIES SKIP_RETURN_CODE 77)
# tools/llama.sh configures a cached build made with older options again
# (a fake cache: a CMake project of three custom targets, no llama.cpp).
rt_add_test(test_llama_settle COMMAND sh ${CMAKE_SOURCE_DIR}/tests/e2e/llama_settle.sh
            TIMEOUT 60 LABELS e2e)
# Two tools/llama.sh at once on an empty cache: one clones and builds (a
# stand-in cmake), the other waits on the folder's lock and takes its build.
rt_add_test(test_llama_lock COMMAND sh ${CMAKE_SOURCE_DIR}/tests/e2e/llama_lock.sh
            TIMEOUT 60 LABELS e2e)
set_tests_properties(test_llama_lock PROPERTIES SKIP_RETURN_CODE 77)
