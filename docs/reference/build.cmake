# Builds the API reference: cmake -DSOURCE_DIR=<repo> -DOUTPUT_DIR=<dir> [-DDOXYGEN=<path>]
#   [-DPYTHON=<path>] -P docs/reference/build.cmake
# Runs Doxygen with docs/reference/Doxyfile (from SOURCE_DIR, its paths are relative to the
# repository's root), writing OUTPUT_DIR/html/index.html. Fails, listing them, on any warning:
# an undocumented public name, a @param naming no parameter, a function whose parameters are
# documented in part, a broken reference. Then check_reference.py (this folder) reads the XML
# Doxygen wrote too (OUTPUT_DIR/xml) and fails, listing them, on what Doxygen does not warn
# about: an undocumented enumerator, a brief cut at "e.g.", a @par section repeating its
# heading. (The ctest api_reference, the CMake target `docs` and scripts/docs.sh all run this.)
foreach(var SOURCE_DIR OUTPUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DOXYGEN)
  find_program(DOXYGEN doxygen)
  if(NOT DOXYGEN)
    message(FATAL_ERROR "build.cmake: doxygen not found (scripts/setup.sh test installs it)")
  endif()
endif()
if(NOT PYTHON)
  find_program(PYTHON NAMES python3 python)
  if(NOT PYTHON)
    message(FATAL_ERROR "build.cmake: python3 not found (it runs docs/reference/check_reference.py)")
  endif()
endif()
file(REMOVE_RECURSE "${OUTPUT_DIR}/html" "${OUTPUT_DIR}/xml")
file(MAKE_DIRECTORY "${OUTPUT_DIR}")
set(config "${OUTPUT_DIR}/Doxyfile")
# WARN_NO_PARAMDOC on: a documented function whose parameters are not all documented is an
# error too. (Doxygen 1.9.4 folds "no @return" into the same switch; a getter's one-line
# description says what it returns, so those lines alone are left out.)
file(WRITE "${config}" "@INCLUDE = ${SOURCE_DIR}/docs/reference/Doxyfile
OUTPUT_DIRECTORY = ${OUTPUT_DIR}
WARN_LOGFILE =
WARN_NO_PARAMDOC = YES
WARN_AS_ERROR = NO
GENERATE_XML = YES
XML_OUTPUT = xml
")
execute_process(COMMAND "${DOXYGEN}" "${config}" WORKING_DIRECTORY "${SOURCE_DIR}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE all_warnings)
string(REGEX REPLACE "[^\n]*: (warning|error): return type of member [^\n]* is not documented\n" "" warnings "${all_warnings}")
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  string(REGEX MATCHALL "[^\n]+\n" lines "${warnings}")
  list(LENGTH lines count)
  message(NOTICE "${warnings}${out}")  # unwrapped: file:line: text, one a line
  message(FATAL_ERROR "api reference: doxygen exited with ${rc} and ${count} warning line(s) above: every public name, and every parameter of a public function, needs its documentation (docs/reference/README.md)")
endif()
if(NOT EXISTS "${OUTPUT_DIR}/html/index.html")
  message(FATAL_ERROR "api reference: doxygen wrote no ${OUTPUT_DIR}/html/index.html")
endif()
execute_process(COMMAND "${PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/check_reference.py" "${OUTPUT_DIR}/xml"
  RESULT_VARIABLE rc OUTPUT_VARIABLE problems ERROR_VARIABLE problems)
if(NOT rc EQUAL 0)
  message(NOTICE "${problems}")
  message(FATAL_ERROR "api reference: docs/reference/check_reference.py found the problems above (docs/reference/README.md)")
endif()
message(STATUS "api reference: ${OUTPUT_DIR}/html/index.html")
