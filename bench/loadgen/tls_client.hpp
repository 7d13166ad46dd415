// The client side of TLS (--tls): one ssl::context for every connection of a run, and what each
// connection sets on its own stream.
#ifndef IDLEWHEEL_LOADGEN_TLS_CLIENT_HPP
#define IDLEWHEEL_LOADGEN_TLS_CLIENT_HPP

#include "scenario.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>

namespace loadgen {

/// The context every TLS connection of the run is made from (one per run, shared by all client
/// threads: OpenSSL allows that once it is set up). Without `plan.tls_ca` the server's
/// certificate is not verified (demo_server's default one is self-signed); with it, the chain
/// must lead to that file and the certificate must name `plan.host`. Returns nullptr without
/// `plan.tls`; throws std::runtime_error when the CA file cannot be read.
[[nodiscard]] std::unique_ptr<boost::asio::ssl::context> make_tls_context(const scenario& plan);

/// Sets the SNI host name on `stream` before its handshake (the name the context verifies).
template <class NextLayer>
void set_server_name(boost::asio::ssl::stream<NextLayer>& stream, const std::string& host,
                     boost::system::error_code& ec) {
    // A macro around SSL_ctrl: it returns 1 on success.
    if (SSL_set_tlsext_host_name(stream.native_handle(), const_cast<char*>(host.c_str())) != 1)
        ec = boost::system::error_code(static_cast<int>(::ERR_get_error()), boost::asio::error::get_ssl_category());
}

}  // namespace loadgen

#endif
