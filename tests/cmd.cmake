# The command line (runner/cmd/): `make install` into a temporary prefix (man
# pages and completions generated from the option tables), quiet builds,
# read commands that never create a database, CAMPAIGN:SEQ everywhere,
# errors that say their cause.
rt_add_test(cmd_install COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/install.sh TIMEOUT 300 LABELS cmd e2e)
rt_add_test(cmd_read_db COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/read_db.sh TIMEOUT 60 LABELS cmd e2e)
rt_add_test(cmd_iteration_ref COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/iteration_ref.sh TIMEOUT 60 LABELS cmd e2e)
rt_add_test(cmd_quiet_build COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/quiet_build.sh TIMEOUT 60 LABELS cmd unit)
rt_add_test(cmd_complete COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/complete.sh TIMEOUT 60 LABELS cmd unit)
rt_add_test(cmd_preflight COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/preflight.sh TIMEOUT 120 LABELS cmd e2e)
rt_add_test(cmd_engine_fail COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/engine_fail.sh TIMEOUT 120 LABELS cmd e2e)
set_tests_properties(cmd_engine_fail PROPERTIES SKIP_RETURN_CODE 77)
rt_add_test(cmd_gate_dead_port COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/gate_dead_port.sh
            NEEDS_GSM8K TIMEOUT 60 LABELS cmd e2e)
# `ratchet __step`, the Slurm steps' wrapper: the signal slurmstepd sent is
# recorded even when the program dies of it first (real signals, no Slurm).
rt_add_test(cmd_step_signal COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/step_signal.sh TIMEOUT 60 LABELS cmd e2e)
add_executable(recipe_fp ${CMAKE_SOURCE_DIR}/tests/cmd/recipe_fp.c)
target_link_libraries(recipe_fp PRIVATE rt_var rt_base)
target_include_directories(recipe_fp PRIVATE ${CMAKE_SOURCE_DIR})
rt_add_test(cmd_recipe COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/recipe.sh TIMEOUT 300 LABELS cmd e2e)
set_tests_properties(cmd_recipe PROPERTIES SKIP_RETURN_CODE 77)
# recipe v2 (docs/replay.md): run.sh serves the copy it runs in, spec.yaml
# re-measures the best, variants.yaml feeds replay; generated changes' builds,
# a newline in the name, a stored path with .., damaged stored bytes.
rt_add_test(cmd_recipe_v2 COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cmd/recipe_v2.sh TIMEOUT 300 LABELS cmd e2e)
