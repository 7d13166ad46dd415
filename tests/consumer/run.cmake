# ctest driver for tests/consumer: the three ways to consume idlewheel, each configured, built
# and run as a separate project (C++20); a C++17 project consuming the installed package; plus
# find_package refusing an incompatible major version.
# Inputs: SOURCE_DIR, BUILD_DIR (the configured idlewheel build to install), WORK_DIR,
# STANDALONE (ON: that build is IDLEWHEEL_STANDALONE_ASIO, and so are the source consumers),
# ASIO_INCLUDE_DIR (standalone: the Asio that build uses, which the consumers must use too).
file(REMOVE_RECURSE "${WORK_DIR}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: step failed (${rc}): ${ARGN}")
  endif()
endfunction()
set(asio "")
if(STANDALONE AND ASIO_INCLUDE_DIR)
  set(asio "-DIDLEWHEEL_ASIO_INCLUDE_DIR=${ASIO_INCLUDE_DIR}")
endif()
function(consume name)
  step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/${name}" "-DIDLEWHEEL_EXPECT_STANDALONE=${STANDALONE}" ${asio} ${ARGN})
  step(${CMAKE_COMMAND} --build "${WORK_DIR}/${name}")
  step("${WORK_DIR}/${name}/consumer")
  message(STATUS "consumer test: ${name}: built and ran")
endfunction()

# 1. cmake --install, then find_package(idlewheel 1.0 CONFIG).
step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
consume(find_package "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DIDLEWHEEL_WANT_VERSION=1.0)
# ... also from a C++17 project, which must get C++17 (not C++20) and run.
consume(find_package_cxx17 "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DIDLEWHEEL_WANT_VERSION=1.0
        -DIDLEWHEEL_CONSUMER_CXX_STANDARD=17)

# ... and find_package(idlewheel 2.0) must refuse the installed 1.x (SameMajorVersion).
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/find_package_2.0"
                        "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DIDLEWHEEL_WANT_VERSION=2.0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "version: 1\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "consumer test: find_package(idlewheel 2.0) did not refuse the installed 1.x (exit ${rc}):\n${err}")
endif()
message(STATUS "consumer test: find_package(idlewheel 2.0) refused 1.x")

# 2. add_subdirectory of the source tree.
set(flavour "-DIDLEWHEEL_STANDALONE_ASIO=${STANDALONE}")
consume(add_subdirectory ${flavour} "-DIDLEWHEEL_CONSUME=add_subdirectory" "-DIDLEWHEEL_SOURCE=${SOURCE_DIR}")

# 3. FetchContent from a local path: an archive of the sources the way a release ships them
#    (the library, its CMake files and the top-level project file; no tests, no build tree).
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf "${WORK_DIR}/idlewheel.tar.gz" CMakeLists.txt LICENSE lib
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer test: could not pack the sources for FetchContent")
endif()
consume(FetchContent ${flavour} "-DIDLEWHEEL_CONSUME=FetchContent" "-DIDLEWHEEL_SOURCE=${WORK_DIR}/idlewheel.tar.gz")
