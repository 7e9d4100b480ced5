# `cmake --install` into a scratch prefix, then clients built with pkg-config
# and with find_package(etcompare), the man page and the bash completion
# (tests/install_check.sh).
if(NOT ETC_SANITIZE)
  if(ETC_HELP2MAN)
    set(_etc_have_help2man 1)
  else()
    set(_etc_have_help2man 0)
  endif()
  add_test(NAME install.package
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_check.sh ${CMAKE_BINARY_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/install-prefix)
  set_tests_properties(install.package PROPERTIES LABELS cli
    ENVIRONMENT "ETC_HAVE_HELP2MAN=${_etc_have_help2man}")
endif()
