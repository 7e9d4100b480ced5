# Installation (included by the top CMakeLists.txt): the library and its
# headers, the CLI, a pkg-config file, a CMake package (etcompareConfig.cmake
# + version file, target etcompare::etcompare), the man page generated from
# --help by help2man, and the bash completion generated from --help too.
include(CMakePackageConfigHelpers)

get_target_property(_etc_type etcompare TYPE)
if(_etc_type STREQUAL "STATIC_LIBRARY")
  set(ETC_STATIC TRUE)
  # etcompareConfig.cmake defines this target from pkg-config on the consumer's side.
  target_link_libraries(etcompare INTERFACE
    "$<INSTALL_INTERFACE:$<LINK_ONLY:PkgConfig::etcompare_deps>>"
    "$<INSTALL_INTERFACE:$<LINK_ONLY:BLAS::BLAS>>")
else()
  set(ETC_STATIC FALSE)
endif()

install(TARGETS etcompare EXPORT etcompareTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS etcompare_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET etcompare_shared)
  # Runtime library only (no libetcompare.so link), so -letcompare still
  # picks the static library; the Python package loads libetcompare.so.0.
  install(TARGETS etcompare_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP)
endif()
# A shared build's CLI finds its library wherever the prefix is moved
# (-DCMAKE_SKIP_INSTALL_RPATH=ON for a distribution's /usr).
if(NOT ETC_STATIC AND NOT DEFINED CMAKE_INSTALL_RPATH)
  set_target_properties(etcompare_cli PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
install(DIRECTORY include/etcompare DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(ETC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/etcompare)
install(EXPORT etcompareTargets NAMESPACE etcompare:: DESTINATION ${ETC_CMAKE_DIR}
  FILE etcompareTargets.cmake)
configure_package_config_file(cmake/etcompareConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/etcompareConfig.cmake INSTALL_DESTINATION ${ETC_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/etcompareConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/etcompareConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/etcompareConfigVersion.cmake
  DESTINATION ${ETC_CMAKE_DIR})

# Relocatable: the prefix is found relative to the .pc file itself.
# -letcompare finds the static library when that is what is installed (the
# shared one has no libetcompare.so link), so its dependencies must then be
# in Libs and Requires: a plain `pkg-config --libs etcompare` has to link.
if(ETC_STATIC)
  set(ETC_PC_REQUIRES "Requires")
  set(ETC_PC_LIBS "-lopenblas -lm -pthread")
  set(ETC_PC_LIBS_PRIVATE "")
else()
  set(ETC_PC_REQUIRES "Requires.private")
  set(ETC_PC_LIBS "")
  set(ETC_PC_LIBS_PRIVATE "-lopenblas -lm -pthread")
endif()
file(RELATIVE_PATH ETC_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(cmake/etcompare.pc.in ${CMAKE_CURRENT_BINARY_DIR}/etcompare.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/etcompare.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES schema/etdump.fbs schema/bundled_program_schema.fbs schema/etcompare-report.schema.json
  schema/batch-summary.schema.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/etcompare)

# Man page and bash completion: both generated from `etcompare --help` once the
# CLI is built, so they cannot drift from it (not when cross-compiling).
if(NOT CMAKE_CROSSCOMPILING)
  set(ETC_COMPLETION ${CMAKE_CURRENT_BINARY_DIR}/etcompare.bash)
  add_custom_command(OUTPUT ${ETC_COMPLETION}
    COMMAND ${CMAKE_COMMAND} -DETC=$<TARGET_FILE:etcompare_cli> -DOUT=${ETC_COMPLETION}
            -DTEMPLATE=${CMAKE_CURRENT_SOURCE_DIR}/cmake/etcompare.bash.in
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/completion.cmake
    DEPENDS etcompare_cli cmake/completion.cmake cmake/etcompare.bash.in
    COMMENT "Generating the bash completion from --help")
  add_custom_target(etcompare_completion ALL DEPENDS ${ETC_COMPLETION})
  install(FILES ${ETC_COMPLETION} RENAME etcompare
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

  find_program(ETC_HELP2MAN help2man)
  if(ETC_HELP2MAN)
    set(ETC_MAN ${CMAKE_CURRENT_BINARY_DIR}/etcompare.1)
    add_custom_command(OUTPUT ${ETC_MAN}
      COMMAND ${CMAKE_COMMAND} -DETC=$<TARGET_FILE:etcompare_cli> -DHELP2MAN=${ETC_HELP2MAN}
              -DINCLUDE=${CMAKE_CURRENT_SOURCE_DIR}/cmake/etcompare.h2m -DOUT=${ETC_MAN}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/manpage.cmake
      DEPENDS etcompare_cli cmake/etcompare.h2m cmake/manpage.cmake
      COMMENT "Generating the man page from --help (help2man)")
    add_custom_target(etcompare_man ALL DEPENDS ${ETC_MAN})
    install(FILES ${ETC_MAN} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  else()
    message(STATUS "help2man not found: no man page (Debian package help2man)")
  endif()
endif()
