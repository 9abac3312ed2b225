# Writes the man page quire.1 from the --help texts of the built binary, so it
# cannot drift from them. Run by the build (cmake -P):
#   cmake -DQUIRE=path/to/quire -DOUT=quire.1 -DVERSION=x.y.z -P cmake/quire_man.cmake
# Every command listed under "commands:" in `quire --help` gets a section with
# its own `quire COMMAND --help`, verbatim.
execute_process(COMMAND "${QUIRE}" --help OUTPUT_VARIABLE main RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "quire --help failed (${rc})")
endif()

function(roff_escape in outvar)
  string(REPLACE "\\" "\\e" s "${in}")
  string(REPLACE "-" "\\-" s "${s}")
  # a line that starts with . or ' would be a request: guard it
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" s "${s}")
  set(${outvar} "${s}" PARENT_SCOPE)
endfunction()

# the command names: indented lines of the "commands:" paragraph
string(REGEX MATCH "commands:\n(([ ]+[a-z][^\n]*\n)+)" block "${main}")
set(block "${CMAKE_MATCH_1}")
string(REPLACE ";" "," block "${block}")
string(REPLACE "\n" ";" lines "${block}")
set(cmds "")
foreach(line IN LISTS lines)
  if(line MATCHES "^  ([a-z][a-z0-9_-]*)")
    list(APPEND cmds "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT cmds)
  message(FATAL_ERROR "no commands found in quire --help")
endif()

roff_escape("${main}" main_e)
set(page ".TH QUIRE 1 \"\" \"quire ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\nquire \\- render LLM agent transcripts into provider requests, manage system reminders, compact transcripts, replay sessions\n")
string(APPEND page ".SH SYNOPSIS\n.B quire\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n")
string(APPEND page ".SH DESCRIPTION\n.nf\n${main_e}.fi\n")
string(APPEND page ".SH COMMANDS\n")
foreach(c ${cmds})
  execute_process(COMMAND "${QUIRE}" ${c} --help OUTPUT_VARIABLE h RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "quire ${c} --help failed (${rc})")
  endif()
  roff_escape("${h}" h_e)
  string(APPEND page ".SS \"quire ${c}\"\n.nf\n${h_e}.fi\n")
endforeach()
string(APPEND page ".SH FILES AND SAFETY\nSee docs/cli.md: how outputs are written (never half-written, descriptors written in place) and the input limit.\n")
string(APPEND page ".SH SEE ALSO\nThe documentation installed in share/doc/quire (README.md, docs/).\n")
file(WRITE "${OUT}.tmp" "${page}")
file(RENAME "${OUT}.tmp" "${OUT}")
