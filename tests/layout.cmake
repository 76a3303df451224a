# The module layering: no include crosses upward (tools/check-includes.sh).
rt_add_test(layout_includes COMMAND sh ${CMAKE_SOURCE_DIR}/tools/check-includes.sh TIMEOUT 30 LABELS unit)
rt_add_test(layout_size COMMAND sh ${CMAKE_SOURCE_DIR}/tools/check-size.sh TIMEOUT 30 LABELS unit)
