# Writes the man page of etcompare with help2man from its --help. The
# "Examples:" block of --help becomes the EXAMPLES section as preformatted
# text (help2man would reflow it into paragraphs).
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
file(WRITE ${OUT}.h2m "${include}")
execute_process(COMMAND ${HELP2MAN} --no-info --section=1
                        "--name=numerical debugging and profiling of ExecuTorch runs"
                        --include=${OUT}.h2m --output=${OUT}.tmp ${ETC}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
