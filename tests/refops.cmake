# The reference executor's test tools (tests/tools/): ref_op_eval runs one
# op (tests/refops.py), ref_graph_dump one graph (tests/test_ref_graph.py).
# Both may include the library's private headers, as the unit tests do.
foreach(tool ref_op_eval ref_graph_dump)
  add_executable(${tool} ${CMAKE_CURRENT_SOURCE_DIR}/tools/${tool}.c
                 ${CMAKE_CURRENT_SOURCE_DIR}/tools/npz_out.c)
  target_link_libraries(${tool} PRIVATE etcompare PkgConfig::JANSSON PkgConfig::ZLIB)
  target_include_directories(${tool} PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR}/tools)
endforeach()
