# runner/oai's unit tests: the URL builder, request bodies, the completion
# parse and the SSE parser. The HTTP client is tested through the load
# generator's and the gate's tests against real servers.
rt_add_test(test_oai SOURCES ${CMAKE_SOURCE_DIR}/tests/oai/test_oai.c
            LIBS rt_oai rt_base TIMEOUT 30 LABELS oai unit)
# The SSE fast path cross-checked against jansson on invalid events.
rt_add_test(test_sse_strict SOURCES ${CMAKE_SOURCE_DIR}/tests/oai/test_sse_strict.c
            LIBS rt_oai rt_base TIMEOUT 60 LABELS oai unit)
