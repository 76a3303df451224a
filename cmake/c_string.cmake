# c_string(VAR TEXT): TEXT as a C string literal (quotes and backslashes
# escaped, one literal per line), for the files the binary embeds
# (cmake/embed_sql.cmake, cmake/embed_text.cmake).
function(c_string var text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n\"\n  \"" text "${text}")
  set(${var} "\"${text}\"" PARENT_SCOPE)
endfunction()
