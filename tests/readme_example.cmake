# The README's "Replace the per-connection timers" section shows examples/websocket_echo_server.cpp
# in full; this check fails when the two differ (the example is what the tests build and run).
# cmake -DSOURCE_DIR=<repo> -P readme_example.cmake
file(READ ${SOURCE_DIR}/README.md readme)
file(READ ${SOURCE_DIR}/examples/websocket_echo_server.cpp example)
set(marker "<!-- examples/websocket_echo_server.cpp: tests/readme_example.cmake checks this block is the file -->\n```cpp\n")
string(FIND "${readme}" "${marker}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "README.md: the example block (its marker comment) is missing")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR start "${start} + ${marker_length}")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "```\n" stop)
string(SUBSTRING "${rest}" 0 ${stop} block)
if(NOT block STREQUAL example)
  message(FATAL_ERROR "README.md's example block differs from examples/websocket_echo_server.cpp: copy the file into it")
endif()
