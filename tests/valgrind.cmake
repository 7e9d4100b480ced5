# Memcheck (label `valgrind`, only with -DETC_VALGRIND=ON; scripts/valgrind.sh):
# every unit test, every fuzz replay (the corpus and the past crashers) and a
# sample of CLI invocations (tests/valgrind_cli.sh) under
# valgrind --leak-check=full; any error or leak fails the test (exit 99).
option(ETC_VALGRIND "Add the valgrind-labelled tests" OFF)
if(ETC_VALGRIND)
  find_program(ETC_VALGRIND_EXE valgrind REQUIRED)
  set(ETC_VALGRIND_CMD ${ETC_VALGRIND_EXE} --leak-check=full --show-leak-kinds=definite,indirect,possible
      --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 --track-fds=no --quiet)
  foreach(src ${ETC_UNIT_TESTS})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME valgrind.${name} COMMAND ${ETC_VALGRIND_CMD} $<TARGET_FILE:${name}>)
    set_tests_properties(valgrind.${name} PROPERTIES LABELS valgrind
      ENVIRONMENT "ETC_SRC=${PROJECT_SOURCE_DIR}")
  endforeach()
  file(GLOB ETC_FUZZ_TARGETS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
  foreach(src ${ETC_FUZZ_TARGETS})
    get_filename_component(target ${src} NAME_WE)
    string(REGEX REPLACE "^fuzz_" "" name ${target})
    add_test(NAME valgrind.fuzz.${name} COMMAND ${ETC_VALGRIND_CMD} $<TARGET_FILE:${target}_replay>
             ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/crashers/${name})
    set_tests_properties(valgrind.fuzz.${name} PROPERTIES LABELS valgrind)
  endforeach()
  string(REPLACE ";" " " ETC_VALGRIND_CMD_STR "${ETC_VALGRIND_CMD}")
  add_test(NAME valgrind.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/valgrind_cli.sh)
  set_tests_properties(valgrind.cli PROPERTIES LABELS valgrind
    ENVIRONMENT "${ETC_TEST_ENV};ETC_VALGRIND=${ETC_VALGRIND_CMD_STR}")
endif()
