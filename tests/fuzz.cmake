# The fuzz harnesses (tests/fuzz/fuzz_*.c; docs/reliability.md, "Fuzzing").
# Each harness is built one of two ways:
#   - by default, with tests/fuzz/replay.c as its main(): the test
#     fuzz_replay_NAME feeds it every committed input of tests/fuzz/NAME/seed
#     and tests/fuzz/NAME/crashes, with any compiler (and under ASan and
#     UBSan in the sanitizer pass of `make check`);
#   - with -DRATCHET_FUZZ=ON (tools/fuzz.sh, clang only), as the libFuzzer
#     program fuzz_NAME, and no replay test; the target fuzz_harnesses builds
#     them all.
option(RATCHET_FUZZ "build the libFuzzer harnesses (clang; tools/fuzz.sh sets it)" OFF)
if(RATCHET_FUZZ)
  add_custom_target(fuzz_harnesses)
endif()

# rt_add_fuzz(NAME SOURCE file LIBS libs... [DEFS definitions...])
function(rt_add_fuzz name)
  cmake_parse_arguments(F "" "SOURCE" "LIBS;DEFS" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
  if(RATCHET_FUZZ)
    add_executable(fuzz_${name} ${dir}/fuzz.c ${dir}/${F_SOURCE})
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBS})
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    set(target fuzz_${name})
    add_dependencies(fuzz_harnesses fuzz_${name})
  else()
    rt_add_test(fuzz_replay_${name}
                SOURCES ${dir}/replay.c ${dir}/fuzz.c ${dir}/${F_SOURCE}
                LIBS ${F_LIBS}
                ARGS ${dir}/${name}/seed ${dir}/${name}/crashes
                TIMEOUT 120 LABELS fuzz unit)
    set(target fuzz_replay_${name})
  endif()
  if(F_DEFS)
    target_compile_definitions(${target} PRIVATE ${F_DEFS})
  endif()
endfunction()

rt_add_fuzz(spec SOURCE fuzz_spec.c LIBS rt_spec rt_base)
rt_add_fuzz(table_json SOURCE fuzz_table.c LIBS rt_var rt_base DEFS FUZZ_TABLE_FORMAT=VAR_TBL_JSON)
rt_add_fuzz(table_csv SOURCE fuzz_table.c LIBS rt_var rt_base DEFS FUZZ_TABLE_FORMAT=VAR_TBL_CSV)
rt_add_fuzz(table_yaml SOURCE fuzz_table.c LIBS rt_var rt_base DEFS FUZZ_TABLE_FORMAT=VAR_TBL_YAML)
rt_add_fuzz(csv SOURCE fuzz_csv.c LIBS rt_var rt_base)
rt_add_fuzz(holes SOURCE fuzz_holes.c LIBS rt_research rt_var rt_db rt_base)
rt_add_fuzz(sse SOURCE fuzz_sse.c LIBS rt_oai rt_base)
rt_add_fuzz(extract SOURCE fuzz_extract.c LIBS rt_bench rt_spec rt_base)
rt_add_fuzz(gsm8k SOURCE fuzz_gsm8k.c LIBS rt_gate rt_spec rt_base)
rt_add_fuzz(llm SOURCE fuzz_llm.c LIBS rt_spec rt_agents rt_var rt_base)
rt_add_fuzz(expr SOURCE fuzz_expr.c LIBS rt_agents rt_research rt_var rt_db rt_base)
rt_add_fuzz(profile SOURCE fuzz_profile.c LIBS rt_research rt_var rt_db rt_base)

# Cases (one per harness; the promise each checks is in its file's header):
#   fuzz_replay_spec        the spec loader; a normalized dump reloads to itself
#   fuzz_replay_table_json  table plan/apply/describe, JSON; a change re-applies to the same bytes
#   fuzz_replay_table_csv   the same, CSV
#   fuzz_replay_table_yaml  the same, YAML
#   fuzz_replay_csv         the CSV parser's rows and fields tile the text
#   fuzz_replay_holes       the holes research on a table and a profile
#   fuzz_replay_sse         the SSE parser, cross-checked against jansson
#   fuzz_replay_extract     the command benchmark's output extractors
#   fuzz_replay_gsm8k       GSM8K strict and flexible extraction, normalisation
#   fuzz_replay_llm         strategy llm's answer reader keeps the containment model
#   fuzz_replay_expr        the restriction language: depth bounded, a value in parentheses unchanged
#   fuzz_replay_profile     the profile importers: finite, non-negative times, sums and shares that add up
