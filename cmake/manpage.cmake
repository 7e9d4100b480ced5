# Writes the man page of etcompare with help2man from its --help. The
# "Examples:" block of --help becomes the EXAMPLES section as preformatted
# text (help2man would reflow it into paragraphs), and the "Exit status:"
# paragraph gives way to the EXIT STATUS section of the include file (one
# entry per code): help2man reads the help through a wrapper that prints
# it without that paragraph.
# Usage: cmake -DETC=etcompare -DHELP2MAN=help2man -DINCLUDE=etcompare.h2m -DOUT=etcompare.1
#              -P manpage.cmake
execute_process(COMMAND ${ETC} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${ETC} --help failed (${rc})")
endif()
file(READ ${INCLUDE} include)
string(FIND "${help}" "\nExamples:\n" at)
if(at GREATER -1)
  math(EXPR at "${at} + 11")
  string(SUBSTRING "${help}" ${at} -1 examples)
  string(REPLACE "\\" "\\e" examples "${examples}")
  string(APPEND include "\n[=EXAMPLES]\n.nf\n${examples}.fi\n")
endif()
string(REGEX REPLACE "\nExit status:[^\n]*\n([^\n]+\n)*\n" "\n" help "${help}")
set(wrap_dir ${OUT}.wrap)
file(REMOVE_RECURSE ${wrap_dir})
file(WRITE ${wrap_dir}/help.txt "${help}")
file(WRITE ${wrap_dir}/src/etcompare
     "#!/bin/sh\nif [ \"$1\" = --help ]; then cat '${wrap_dir}/help.txt'; else exec '${ETC}' \"$@\"; fi\n")
file(COPY ${wrap_dir}/src/etcompare DESTINATION ${wrap_dir}
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
file(WRITE ${OUT}.h2m "${include}")
execute_process(COMMAND ${HELP2MAN} --no-info --section=1
                        "--name=numerical debugging and profiling of ExecuTorch runs"
                        --include=${OUT}.h2m --output=${OUT}.tmp ${wrap_dir}/etcompare
                RESULT_VARIABLE rc)
file(REMOVE_RECURSE ${wrap_dir})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
