# Run at build time (CMakeLists.txt, target ratchet_docs): the manual pages
# and the shell completions, written by `ratchet help` from the command and
# option tables, so no page is a hand-written copy of --help.
#   cmake -DRATCHET=path/to/ratchet -DOUT=dir -P gen_docs.cmake
# writes OUT/man1/ratchet.1, OUT/man1/ratchet-COMMAND.1 for every command,
# OUT/completions/ratchet (bash) and OUT/completions/_ratchet (zsh).
file(REMOVE_RECURSE ${OUT}/man1 ${OUT}/completions)
file(MAKE_DIRECTORY ${OUT}/man1 ${OUT}/completions)

function(rt_doc file)
  execute_process(COMMAND ${RATCHET} help ${ARGN} OUTPUT_FILE ${file} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ratchet help ${ARGN} failed (${rc})")
  endif()
endfunction()

execute_process(COMMAND ${RATCHET} help --commands OUTPUT_VARIABLE cmds RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ratchet help --commands failed (${rc})")
endif()
string(REPLACE "\n" ";" cmds "${cmds}")
rt_doc(${OUT}/man1/ratchet.1 --man)
foreach(c ${cmds})
  if(c)
    rt_doc(${OUT}/man1/ratchet-${c}.1 --man ${c})
  endif()
endforeach()
rt_doc(${OUT}/completions/ratchet --completion bash)
rt_doc(${OUT}/completions/_ratchet --completion zsh)
