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

#include <cstddef>
#include <memory>
#include <string>

namespace demo {

/// What a client may send before its TLS handshake completes (session_stream::limit_handshake;
/// past it the handshake fails: tls_failed): a ClientHello declaring at most `max_client_hello`
/// bytes, the largest that fits one TLS record's plaintext (2^14 bytes, RFC 8446 section 5.1),
/// and `max_handshake_input` bytes in all (the hello with its record headers, then the client's
/// second flight; the server asks for no client certificate and issues no session tickets, so
/// nothing larger follows). OpenSSL alone takes a hello of up to 128 KiB and zeroes a buffer of
/// the declared length as soon as the hello's first bytes arrive.
inline constexpr std::size_t max_client_hello = 16 * 1024;
inline constexpr std::size_t max_handshake_input = 20 * 1024;

struct tls_setup {
    std::unique_ptr<boost::asio::ssl::context> context;
    std::string description;  // for the start-up log line: where the certificate came from, its fingerprint
};

/// The context for cfg.tls. Throws std::runtime_error naming the file and OpenSSL's reason when
/// a certificate or key cannot be loaded or they do not match.
tls_setup make_tls_context(const config& cfg);

}  // namespace demo

#endif
