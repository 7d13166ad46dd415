#include "tls_client.hpp"

#include <boost/asio/ssl/host_name_verification.hpp>

#include <stdexcept>

namespace loadgen {

namespace ssl = boost::asio::ssl;

std::unique_ptr<ssl::context> make_tls_context(const scenario& plan) {
    if (!plan.tls) return nullptr;
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3);
    // OpenSSL keeps a read and a write buffer per connection; an idle client needs neither, and
    // most of loadgen's clients are idle: let it free them between records.
    SSL_CTX_set_mode(ctx->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    if (plan.tls_ca.empty()) {
        ctx->set_verify_mode(ssl::verify_none);
        return ctx;
    }
    boost::system::error_code ec;
    ctx->load_verify_file(plan.tls_ca, ec);
    if (ec) throw std::runtime_error("--tls-ca " + plan.tls_ca + ": " + ec.message());
    ctx->set_verify_mode(ssl::verify_peer);
    // The same host for every connection: one callback on the context, not one per stream.
    ctx->set_verify_callback(ssl::host_name_verification(plan.host));
    return ctx;
}

}  // namespace loadgen
