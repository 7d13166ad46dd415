//
// Copyright (c) 2022 Klemens D. Morgenstern (klemens dot morgenstern at gmx dot net)
//
// Distributed under the Boost Software License, Version 1.0. (See accompanying
// file LICENSE_1_0.txt or copy at http://www.boost.org/LICENSE_1_0.txt)
//
// Official repository: https://github.com/boostorg/beast
//

// idlewheel's conversion: Copyright (c) 2026 The idlewheel authors, same license.
//
// Beast's C++20-coroutine WebSocket echo server
// (example/websocket/server/awaitable/websocket_server_awaitable.cpp of tag boost-1.81.0) with
// its threading kept: ONE io_context run by N threads, a coroutine per session. Its timeouts
// are Beast's, on an idlewheel::wheel_pool instead of a steady_timer per connection: the
// stream is websocket::stream over Beast's spelling,
// `tcp_stream::rebind_executor<use_awaitable_t<>::executor_with_default<...>>::other`, of an
// idlewheel::beast::tcp_stream (moved into do_session by value, as Beast's; its operations
// take use_awaitable by default); where Beast calls ws.set_option(websocket::stream_base::
// timeout::suggested(beast::role_type::server)) the session calls idlewheel::beast::set_option
// (ws, ...) with the same argument (idlewheel/beast/websocket_timeout.hpp): the handshake
// deadline, keep-alive pings after idle_timeout / 2 of silence, a drop when idle_timeout / 2
// more pass with no byte from the peer, a bound on the close handshake; the pending operation
// ends with beast::error::timeout, as with Beast (here: the co_await throws it). Each session
// runs on a pool shard's strand: the socket is accepted on that strand and do_session is
// co_spawned on it, where Beast accepts on the acceptor's executor (the io_context's, no
// strand) and co_spawns there. The stream finds its shard's wheel from its executor.
//
// The conversion is the lines marked `// idlewheel` (a test counts them); everything else is
// the file in bench/beast_original/ (Beast's, in Beast's layout, with the same `// test` lines:
// test_or() puts the test's short times in place of suggested()'s), so that
//     diff bench/beast_original/websocket_server_awaitable.cpp examples/websocket_server_awaitable.cpp
// shows the conversion alone (a test checks that every other line is that file's). As Beast
// wrote it, a session's loop reads again after the peer's close, and that read's
// operation_aborted ends the session with an "Error in session: Operation canceled" line.
//
//     websocket_server_awaitable <address> <port> <threads> [<idle-ms>]
//
// <idle-ms> (test): instead of timeout::suggested(server) (handshake 30 s, idle 300 s, pings
// on), websocket::stream_base::timeout{<idle-ms> / 2, <idle-ms>, true}: the handshake deadline
// is half of it, a ping goes out after half of it of silence, and the peer is dropped if
// nothing comes back in the other half.

//------------------------------------------------------------------------------
//
// Example: WebSocket server, coroutine
//
//------------------------------------------------------------------------------

#include <idlewheel/beast/websocket_timeout.hpp>  // idlewheel: set_option(ws, timeout), tcp_stream, wheel_pool

#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(BOOST_ASIO_HAS_CO_AWAIT)

namespace beast = boost::beast;         // from <boost/beast.hpp>
namespace http = beast::http;           // from <boost/beast/http.hpp>
namespace websocket = beast::websocket; // from <boost/beast/websocket.hpp>
namespace net = boost::asio;            // from <boost/asio.hpp>
using tcp = boost::asio::ip::tcp;       // from <boost/asio/ip/tcp.hpp>

using stream = websocket::stream<
        typename idlewheel::beast::tcp_stream::rebind_executor<  // idlewheel: was beast::tcp_stream
            typename net::use_awaitable_t<>::executor_with_default<net::any_io_executor>>::other>;
idlewheel::wheel_pool* wheels = nullptr;  // idlewheel: the pool main() makes, whose shards run the sessions
std::chrono::milliseconds test_idle{0};  // test: <idle-ms>, or 0 for Beast's suggested timeouts
websocket::stream_base::timeout test_or(websocket::stream_base::timeout t) { if (test_idle.count() != 0) t = {test_idle / 2, test_idle, true}; return t; }  // test

//------------------------------------------------------------------------------

// Echoes back all received WebSocket messages
net::awaitable<void>
do_session(stream ws)
{
    // Set suggested timeout settings for the websocket
    idlewheel::beast::set_option(ws,  // idlewheel: was ws.set_option(
        test_or(websocket::stream_base::timeout::suggested(  // test: <idle-ms>
            beast::role_type::server)));  // test

    // Set a decorator to change the Server of the handshake
    ws.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res)
        {
            res.set(http::field::server,
                std::string(BOOST_BEAST_VERSION_STRING) +
                    " websocket-server-coro");
        }));

    // Accept the websocket handshake
    co_await ws.async_accept();

    for(;;)
        try {
            // This buffer will hold the incoming message
            beast::flat_buffer buffer;

            // Read a message
            co_await ws.async_read(buffer);

            // Echo the message back
            ws.text(ws.got_text());
            co_await ws.async_write(buffer.data());

        }
        catch(boost::system::system_error & se)
        {
            if (se.code() != websocket::error::closed)
                throw;

        }
}

//------------------------------------------------------------------------------

// Accepts incoming connections and launches the sessions
net::awaitable<void>
do_listen(
    tcp::endpoint endpoint)
{

    // Open the acceptor
    auto acceptor = net::use_awaitable.as_default_on(tcp::acceptor(co_await net::this_coro::executor));
    acceptor.open(endpoint.protocol());

    // Allow address reuse
    acceptor.set_option(net::socket_base::reuse_address(true));

    // Bind to the server address
    acceptor.bind(endpoint);

    // Start listening for connections
    acceptor.listen(net::socket_base::max_listen_connections);
    std::cout << "listening on port " << acceptor.local_endpoint().port() << std::endl;  // test

    for(;;)
    {   auto& shard = wheels->next();  // idlewheel: each session on a shard's strand
        boost::asio::co_spawn(
                shard.get_executor(),  // idlewheel: was acceptor.get_executor()
                do_session(stream(co_await acceptor.async_accept(shard.get_executor()))),  // idlewheel
                [](std::exception_ptr e)
                {
                    try
                    {
                        std::rethrow_exception(e);
                    }
                    catch (std::exception &e) {
                        std::cerr << "Error in session: " << e.what() << "\n";
                    }
                });
    }  // idlewheel
}

int main(int argc, char* argv[])
{
    // Check command line arguments.
    if (argc != 4 && argc != 5)  // test: the optional <idle-ms>
    {
        std::cerr <<
            "Usage: websocket-server-awaitable <address> <port> <threads> [<idle-ms>]\n" <<  // test
            "Example:\n" <<
            "    websocket-server-awaitable 0.0.0.0 8080 1\n";
        return EXIT_FAILURE;
    }
    auto const address = net::ip::make_address(argv[1]);
    auto const port = static_cast<unsigned short>(std::atoi(argv[2]));
    auto const threads = std::max<int>(1, std::atoi(argv[3]));
    if (argc == 5) test_idle = std::chrono::milliseconds(std::atoi(argv[4]));  // test

    // The io_context is required for all I/O
    net::io_context ioc(threads);
    idlewheel::wheel_pool pool(ioc); idlewheel::beast::use_wheel_pool(ioc, pool); wheels = &pool;  // idlewheel

    // Spawn a listening port
    boost::asio::co_spawn(
              ioc,
              do_listen(tcp::endpoint{address, port}),
              [](std::exception_ptr e)
              {
                  if (e)
                      try
                      {
                          std::rethrow_exception(e);
                      }
                      catch(std::exception & e)
                      {
                          std::cerr << "Error: " << e.what() << "\n";
                      }
            });

    // Run the I/O service on the requested number of threads
    std::vector<std::thread> v;
    v.reserve(threads - 1);
    for(auto i = threads - 1; i > 0; --i)
        v.emplace_back(
        [&ioc]
        {
            ioc.run();
        });
    ioc.run();

    return EXIT_SUCCESS;
}

#else

int main(int, char * [])
{
    std::printf("awaitables require C++20\n");
    return 1;
}

#endif