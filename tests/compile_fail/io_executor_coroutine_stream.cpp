// Must NOT compile, with idlewheel's message (tests/compile_fail/run.cmake): Beast 1.81's
// advanced_server_flex_awaitable types its coroutines on net::io_context::executor_type; with a
// wheel_pool the socket is accepted on a shard's strand, which does not convert to it.
#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/wheel_pool.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace net = boost::asio;

using executor_type = net::io_context::executor_type;  // Beast's
using executor_with_default = net::as_tuple_t<net::use_awaitable_t<executor_type>>::executor_with_default<executor_type>;
using stream_type = idlewheel::beast::tcp_stream::rebind_executor<executor_with_default>::other;

int main() {
    net::io_context ioc;
    idlewheel::wheel_pool pool(ioc);
    idlewheel::beast::use_wheel_pool(ioc, pool);
    net::ip::tcp::socket socket(pool.next().get_executor());
    stream_type stream(std::move(socket));  // the conversion Beast's file makes
    (void)stream;
}
