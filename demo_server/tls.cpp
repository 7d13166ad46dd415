#include "tls.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <stdexcept>

namespace demo {

namespace ssl = boost::asio::ssl;

namespace {

template <class T, void (*Free)(T*)>
struct openssl_deleter {
    void operator()(T* p) const noexcept { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, openssl_deleter<X509, X509_free>>;
using ext_ptr = std::unique_ptr<X509_EXTENSION, openssl_deleter<X509_EXTENSION, X509_EXTENSION_free>>;

// OpenSSL's queued reason for the last failure, or `fallback`.
std::string openssl_reason(const char* fallback) {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return fallback;
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("--tls: " + what); }

void add_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
    ext_ptr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail("self-signed certificate: " + openssl_reason("extension"));
}

std::string fingerprint(X509* cert) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return "?";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
        char hex[4];
        std::snprintf(hex, sizeof hex, i + 1 < n ? "%02X:" : "%02X", md[i]);
        out += hex;
    }
    return out;
}

// The self-signed certificate of the header's comment, installed into ctx.
std::string use_self_signed(SSL_CTX* ctx) {
    pkey_ptr key(EVP_EC_gen("P-256"));
    if (!key) fail("self-signed certificate: key: " + openssl_reason("EVP_EC_gen"));
    x509_ptr cert(X509_new());
    if (!cert) fail("self-signed certificate: " + openssl_reason("X509_new"));
    X509_set_version(cert.get(), 2);  // v3: extensions
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) fail("self-signed certificate: " + openssl_reason("RAND_bytes"));
    serial[0] &= 0x7f;  // a positive serial number
    BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("idlewheel demo_server (self-signed)"), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    X509_set_pubkey(cert.get(), key.get());
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
    add_extension(cert.get(), &v3, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
    add_extension(cert.get(), &v3, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), &v3, NID_key_usage, "critical,digitalSignature");
    add_extension(cert.get(), &v3, NID_ext_key_usage, "serverAuth");
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
        fail("self-signed certificate: sign: " + openssl_reason("X509_sign"));
    if (SSL_CTX_use_certificate(ctx, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1)
        fail("self-signed certificate: " + openssl_reason("use"));
    return "no --tls-cert given: a self-signed certificate for localhost, 127.0.0.1 and ::1 was made at start "
           "(in memory, valid 30 days), SHA-256 fingerprint " +
           fingerprint(cert.get()) + "; clients must pin it or skip verification";
}

}  // namespace

tls_setup make_tls_context(const config& cfg) {
    tls_setup out;
    out.context = std::make_unique<ssl::context>(ssl::context::tls_server);
    ssl::context& ctx = *out.context;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    SSL_CTX* native = ctx.native_handle();
    // No session tickets or cache: a demo's clients do not resume, and nothing is kept per peer.
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(native, 0);
    if (cfg.tls_cert.empty()) {
        out.description = use_self_signed(native);
    } else {
        if (SSL_CTX_use_certificate_chain_file(native, cfg.tls_cert.c_str()) != 1)
            fail("cannot load the certificate chain " + cfg.tls_cert + ": " + openssl_reason("no PEM certificate"));
        if (SSL_CTX_use_PrivateKey_file(native, cfg.tls_key.c_str(), SSL_FILETYPE_PEM) != 1)
            fail("cannot load the private key " + cfg.tls_key + ": " + openssl_reason("no PEM key"));
        out.description = "certificate " + cfg.tls_cert + ", SHA-256 fingerprint " +
                           fingerprint(SSL_CTX_get0_certificate(native));
    }
    if (SSL_CTX_check_private_key(native) != 1)
        fail("the private key " + cfg.tls_key + " does not match the certificate " + cfg.tls_cert + ": " +
             openssl_reason("mismatch"));
    return out;
}

}  // namespace demo
