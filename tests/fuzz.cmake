# Fuzz targets (tests/fuzz/): always built as replay binaries that ctest runs
# over the corpus and the past crashers; with -DETC_FUZZ=ON (clang) also as
# libFuzzer binaries for scripts/fuzz.sh.
add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
