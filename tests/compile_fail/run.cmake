# ctest driver: compiles SOURCE, which must fail, and its diagnostics must contain MESSAGE (the
# library's static_assert, not a template error the user must decode).
# Inputs: CXX, SOURCE, INCLUDE_DIR, MESSAGE, WORK_DIR; FLAGS (optional, a ;-list: e.g.
# -Werror=deprecated-declarations, for a deprecation the library detects at compile time).
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(
  COMMAND "${CXX}" -std=c++20 -fsyntax-only ${FLAGS} "-I${INCLUDE_DIR}" "${SOURCE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled: it must not")
endif()
string(FIND "${err}" "${MESSAGE}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE} failed without the message \"${MESSAGE}\":\n${err}")
endif()
message(STATUS "${SOURCE}: refused with the library's message")
