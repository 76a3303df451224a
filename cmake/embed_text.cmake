# Turns one text file into a C string constant, so the binary carries it and
# needs no file at run time (reports/report.css -> rep_report_css).
#   cmake -DIN=file -DOUT=file.c -DNAME=identifier [-DHEADER=dir/x.h] [-DCOMPACT=ON] -P embed_text.cmake
# HEADER is included first, so the compiler checks the declaration. COMPACT
# drops /* comments */, the indentation at the start of each line and the line
# breaks (for CSS: a readable file, one line in the output).
include(${CMAKE_CURRENT_LIST_DIR}/c_string.cmake)

file(READ ${IN} text)
if(COMPACT)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
  string(REGEX REPLACE "\n[ \t]*" "" text "${text}")
  string(STRIP "${text}" text)
endif()
c_string(text_c "${text}")
file(RELATIVE_PATH src ${CMAKE_CURRENT_LIST_DIR}/.. ${IN})
set(inc "")
if(HEADER)
  set(inc "#include \"${HEADER}\"\n\n")
endif()
file(WRITE ${OUT}.tmp "/* generated from ${src} by cmake/embed_text.cmake */\n${inc}const char ${NAME}[] =\n  ${text_c};\n")
file(RENAME ${OUT}.tmp ${OUT})
