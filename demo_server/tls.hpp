// --tls: the server's TLS context (OpenSSL through Boost.Asio's ssl::context).
//
// One context for the whole server, shared by every worker thread (OpenSSL's SSL_CTX may be
// used by many threads once it is set up; it is not changed after make_tls_context returns).
// TLS 1.2 and 1.3 only, with OpenSSL's default cipher lists.
//
// The certificate: the PEM files of --tls-cert (chain, server certificate first) and --tls-key;
// or, when neither is given, a self-signed certificate made at start: an ECDSA P-256 key, valid
// from one hour ago for 30 days, subject CN=localhost, subjectAltName DNS:localhost,
// IP:127.0.0.1, IP:::1. It lives in memory only (nothing written to disk); its SHA-256
// fingerprint is logged on stderr so a client can pin it.
#ifndef IDLEWHEEL_DEMO_TLS_HPP
#define IDLEWHEEL_DEMO_TLS_HPP

#include "config.hpp"

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace demo {

struct tls_setup {
    std::unique_ptr<boost::asio::ssl::context> context;
    std::string description;  // for the start-up log line: where the certificate came from, its fingerprint
};

/// The context for cfg.tls. Throws std::runtime_error naming the file and OpenSSL's reason when
/// a certificate or key cannot be loaded or they do not match.
tls_setup make_tls_context(const config& cfg);

}  // namespace demo

#endif
