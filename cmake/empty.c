/* Empty: the shared library is the static library linked whole (CMakeLists.txt). */
