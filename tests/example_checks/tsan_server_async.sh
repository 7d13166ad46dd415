#!/usr/bin/env bash
# examples/websocket_server_async (one io_context on N threads, a strand per session, Beast's
# WebSocket timeouts on an idlewheel::wheel_pool) under ThreadSanitizer, driven by server_async_check.py with 4
# threads (more than this machine's 2 cores) and with 2; examples/websocket_server_async_ssl
# (the same over TLS, its stream on idlewheel::beast::tcp_stream) driven by
# server_async_ssl_check.py with 2 threads; test_wheel_pool (the pool on an io_context run
# by 4 threads), test_teardown (a server torn down in each order, 3 threads) and
# test_beast_websocket_timeout. Builds those three alone in BUILD_DIR (default
# SOURCE_DIR/build/tsan-examples), with IDLEWHEEL_TSAN_JOBS build jobs (default 2). Exit 0 only
# if every run passes every check with no ThreadSanitizer report (halt_on_error: a report ends
# the server, which the check sees).
#
#   tsan_server_async.sh [SOURCE_DIR [BUILD_DIR [UPSTREAM_EXAMPLES]]]
#
# The examples are the patches of examples/beast/ applied to UPSTREAM_EXAMPLES (default: the
# doc package's, /usr/share/doc/libboost1.81-doc/examples/libs), as examples/CMakeLists.txt does.
#
# Also examples/advanced_server_flex (plain and TLS, HTTP and WebSocket), built in the same call and
# checked by advanced_server_flex_check.py at 2 threads; and the C++20-coroutine conversions
# (examples/http_server_awaitable, websocket_server_awaitable and advanced_server_flex_awaitable,
# each session a coroutine on a shard's strand), each checked once at 2 threads by the check of
# its async counterpart. And Asio's timeouts server converted (examples/asio/timeouts_server.patch).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
build=${2:-$src/build/tsan-examples}
upstream=${3:-/usr/share/doc/libboost1.81-doc/examples/libs}  # the upstream examples (examples/CMakeLists.txt)
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" -DIDLEWHEEL_SANITIZE=thread \
  -DIDLEWHEEL_BUILD_DEMO=OFF -DIDLEWHEEL_BUILD_TESTS=ON -DIDLEWHEEL_BUILD_BENCH=OFF \
  -DIDLEWHEEL_UPSTREAM_EXAMPLES="$upstream" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target websocket_server_async websocket_server_async_ssl http_server_async advanced_server_flex \
  http_server_awaitable websocket_server_awaitable advanced_server_flex_awaitable timeouts_server \
  test_wheel_pool test_teardown test_beast_websocket_timeout -j "${IDLEWHEEL_TSAN_JOBS:-2}" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 1; }
server=$build/examples/websocket_server_async
ssl_server=$build/examples/websocket_server_async_ssl
for s in "$server" "$ssl_server"; do
  [[ $(nm "$s" | grep -c __tsan_func_entry || true) != 0 ]] || { echo "$s is not instrumented" >&2; exit 1; }
done
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4"
# The pool's own multi-threaded unit test first (4 threads on the io_context), then a server
# with sessions of every kind stopped and torn down in each order on 3 threads, and the
# one-line WebSocket timeouts.
"$build/tests/test_wheel_pool" --log_level=warning --report_level=short
"$build/tests/test_teardown" --log_level=warning --report_level=short
"$build/tests/test_beast_websocket_timeout" --log_level=warning --report_level=short
for threads in 4 2; do
  /usr/bin/python3 "$here/server_async_check.py" "$server" "$threads" 1500
done
# examples/http_server_async (Beast's async HTTP server on idlewheel::beast::tcp_stream and a
# wheel_pool), at 2 threads.
/usr/bin/python3 "$here/http_server_async_check.py" "$build/examples/http_server_async" 2 1500
/usr/bin/python3 "$here/server_async_ssl_check.py" "$ssl_server" 2 1500
# examples/advanced_server_flex (plain and TLS, HTTP and WebSocket) at 2 threads.
/usr/bin/python3 "$here/advanced_server_flex_check.py" "$build/examples/advanced_server_flex" 2 1500
# The coroutine servers at 2 threads.
/usr/bin/python3 "$here/http_server_async_check.py" "$build/examples/http_server_awaitable" 2 1500
/usr/bin/python3 "$here/server_async_check.py" "$build/examples/websocket_server_awaitable" 2 1500
/usr/bin/python3 "$here/advanced_server_flex_check.py" "$build/examples/advanced_server_flex_awaitable" 2 1500 \
  --one-request-per-connection
# Asio's timeouts server converted (examples/asio/timeouts_server.patch: its deadlines on one
# wheel_timer), one thread, with churn.
/usr/bin/python3 "$here/timeouts_server_check.py" "$build/examples/timeouts_server" 1 1500
echo "tsan_server_async.sh: clean at 4 and 2 threads; HTTP, TLS, flex and the coroutine servers at 2; Asio's timeouts server"
