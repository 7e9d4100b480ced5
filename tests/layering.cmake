# The layering check of src/README.md: lower layers never include upper ones.
add_test(NAME layering COMMAND ${ETC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.py)
set_tests_properties(layering PROPERTIES ENVIRONMENT "ETC_SRC=${PROJECT_SOURCE_DIR}" LABELS unit)
