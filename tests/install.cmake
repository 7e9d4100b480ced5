# `cmake --install` into a scratch prefix, then build a client with pkg-config.
if(NOT ETC_SANITIZE)
add_test(NAME install.pkgconfig
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_check.sh ${CMAKE_BINARY_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/install-prefix)
set_tests_properties(install.pkgconfig PROPERTIES LABELS cli)
endif()
