# Makes the source of an upstream example for the tests (cmake -P, at build time): Beast's (or
# Asio's) file as shipped, with idlewheel's conversion applied when PATCH is given
# (examples/beast/*.patch, examples/asio/*.patch: what a user applies, nothing else), then the
# same test substitutions for the original and the conversion (upstream_test_main.hpp says what
# they give the tests), plus FIXES, bugs of the upstream file fixed for both.
#
#   -DUPSTREAM=file -DOUT=file [-DPATCH=file -DPATCH_EXECUTABLE=patch] [-DFIXES=name;name]
cmake_minimum_required(VERSION 3.16)
get_filename_component(out_dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${out_dir})
if(PATCH)
  execute_process(COMMAND ${PATCH_EXECUTABLE} -s -o ${OUT}.tmp ${UPSTREAM} ${PATCH}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${PATCH} does not apply to ${UPSTREAM}:\n${output}")
  endif()
  file(READ ${OUT}.tmp text)
  file(REMOVE ${OUT}.tmp)
else()
  file(READ ${UPSTREAM} text)
endif()

function(replace_once from to)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "prepare_example.cmake: '${from}' not in ${UPSTREAM} (${OUT})")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(text "${text}" PARENT_SCOPE)
endfunction()

foreach(fix IN LISTS FIXES)
  if(fix STREQUAL "end_of_stream_break")
    # Beast 1.81's http_server_awaitable catches end_of_stream inside its loop and reads again:
    # a client that half-closes is let go at the read deadline only. Leave the loop.
    replace_once("            throw ;\n    }\n" "            throw ;\n        break;\n    }\n")
  elseif(fix STREQUAL "null_exception_ptr")
    # Beast 1.81's http_server_awaitable rethrows a null exception_ptr when a session ends
    # without an exception ("Connection: close"): SIGSEGV, the whole server ends.
    string(REGEX REPLACE "(\\[\\]\\(std::exception_ptr e\\)[ \t\n]*{[ \t\n]*)try" "\\1if (e) try" text "${text}")
  elseif(fix STREQUAL "write_expiry")
    # Beast issue 2865: with pipelining, do_read sets the expiry while a write is pending, and
    # the writes keep the first request's deadline. Set it before each write.
    replace_once("bool keep_alive = msg.keep_alive();\n"
      "bool keep_alive = msg.keep_alive();\n            beast::get_lowest_layer(derived().stream()).expires_after(std::chrono::seconds(30));\n")
  elseif(fix STREQUAL "list_include")
    # Beast 1.81's advanced_server_flex_awaitable uses std::list without including <list>
    # (GCC 12's headers do not bring it in).
    replace_once("#include <cstdlib>\n" "#include <cstdlib>\n#include <list>\n")
  elseif(fix STREQUAL "announce_in_accept")
    # Not a bug: Asio's timeouts server listens in its constructor, so the port is announced
    # where it starts to accept.
    replace_once("  void accept()\n  {\n" "  void accept()\n  {\n    idlewheel_test::announce(acceptor_);\n")
  else()
    message(FATAL_ERROR "prepare_example.cmake: unknown fix ${fix}")
  endif()
endforeach()

string(REPLACE "std::chrono::seconds(30)" "idlewheel_test::timeout()" text "${text}")
string(REGEX REPLACE "websocket::stream_base::timeout::suggested\\([ \t\n]*beast::role_type::server\\)"
  "idlewheel_test::websocket_timeout()" text "${text}")
string(REGEX REPLACE "(acceptor_?)\\.listen\\(([^;]*)\\);" "\\1.listen(\\2); idlewheel_test::announce(\\1);" text "${text}")
string(REGEX REPLACE "int main\\(int argc, char ?\\*+ ?argv(\\[\\])?\\)" "int beast_main(int argc, char* argv[])" text "${text}")
string(FIND "${text}" "int beast_main(" at)
if(at EQUAL -1)
  message(FATAL_ERROR "prepare_example.cmake: no main() in ${UPSTREAM}")
endif()
file(WRITE ${OUT}.new "${text}")
file(RENAME ${OUT}.new ${OUT})
