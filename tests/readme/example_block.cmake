# docs/beast_websocket_liveness.md shows
# examples/websocket_echo_server.cpp in full; this check fails when the two differ (the example
# is what the tests build and run).
# cmake -DSOURCE_DIR=<repo> -P example_block.cmake
file(READ ${SOURCE_DIR}/docs/beast_websocket_liveness.md page)
file(READ ${SOURCE_DIR}/examples/websocket_echo_server.cpp example)
set(marker "<!-- examples/websocket_echo_server.cpp: tests/readme/example_block.cmake checks this block is the file -->\n```cpp\n")
string(FIND "${page}" "${marker}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "docs/beast_websocket_liveness.md: the example block (its marker comment) is missing")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR start "${start} + ${marker_length}")
string(SUBSTRING "${page}" ${start} -1 rest)
string(FIND "${rest}" "```\n" stop)
string(SUBSTRING "${rest}" 0 ${stop} block)
if(NOT block STREQUAL example)
  message(FATAL_ERROR "docs/beast_websocket_liveness.md's example block differs from examples/websocket_echo_server.cpp: copy the file into it")
endif()
