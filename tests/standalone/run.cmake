# ctest driver: compiles main.cpp as a user of standalone Asio would (only idlewheel's include
# directory, standalone Asio's and -DIDLEWHEEL_STANDALONE_ASIO), with the compiler's own
# dependency list (-MD); fails if any Boost header is in it, or if asio.hpp's headers are not
# (a list that proves nothing); then runs the program.
# Inputs: CXX, SOURCE_DIR, ASIO_INCLUDE_DIR, WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(asio_flag "")
if(ASIO_INCLUDE_DIR)
  set(asio_flag "-isystem${ASIO_INCLUDE_DIR}")
endif()
execute_process(
  COMMAND "${CXX}" -std=c++20 -DIDLEWHEEL_STANDALONE_ASIO "-I${SOURCE_DIR}/lib/include" ${asio_flag}
          -MD -MF "${WORK_DIR}/main.d" -o "${WORK_DIR}/standalone_program" "${SOURCE_DIR}/tests/standalone/main.cpp" -pthread
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "standalone program: compilation failed (${rc})")
endif()
file(READ "${WORK_DIR}/main.d" deps)
string(REGEX MATCHALL "[^ \\\\\n]*boost/[^ \\\\\n]*" boost_headers "${deps}")
if(boost_headers)
  list(LENGTH boost_headers n)
  list(GET boost_headers 0 first)
  message(FATAL_ERROR "standalone program: ${n} Boost headers in its dependency list, e.g. ${first}")
endif()
if(NOT deps MATCHES "/asio/io_context\\.hpp" OR NOT deps MATCHES "idlewheel/wheel_timer\\.hpp")
  message(FATAL_ERROR "standalone program: the dependency list lacks Asio or idlewheel headers: ${WORK_DIR}/main.d")
endif()
execute_process(COMMAND "${WORK_DIR}/standalone_program" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "standalone program: exited with ${rc}")
endif()
message(STATUS "standalone program: compiled with no Boost header, ran, exit 0")
