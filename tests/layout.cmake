# The module layering: no include crosses upward (tools/check-includes.sh).
rt_add_test(layout_includes COMMAND sh ${CMAKE_SOURCE_DIR}/tools/check-includes.sh TIMEOUT 30 LABELS unit)
rt_add_test(layout_size COMMAND sh ${CMAKE_SOURCE_DIR}/tools/check-size.sh TIMEOUT 30 LABELS unit)
# The docs name only options that exist: every `--flag` README.md and
# docs/*.md give a ratchet command is in its --help (read at test time), and
# the README's quick-start lines parse (tools/check-docs.sh).
rt_add_test(docs_flags COMMAND sh ${CMAKE_SOURCE_DIR}/tools/check-docs.sh $<TARGET_FILE:ratchet> ${CMAKE_SOURCE_DIR}
            TIMEOUT 60 LABELS unit)
