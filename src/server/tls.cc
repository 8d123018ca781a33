#include "tls.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "rdma_webhook/server/env.h"

namespace rw::server {
namespace {

namespace ssl = boost::asio::ssl;

// Mozilla "intermediate" (v5.7): TLS 1.2 suites; TLS 1.3 keeps OpenSSL's defaults, which are
// the same list.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";
constexpr const char* kGroups = "X25519:prime256v1:secp384r1";

std::string OpenSslError() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

// Chooses http/1.1 when the client offers it; otherwise no ALPN, and the client decides
// whether HTTP/1.1 without ALPN is acceptable.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
  static constexpr unsigned char kHttp11[] = {'h', 't', 't', 'p', '/', '1', '.', '1'};
  for (unsigned int i = 0; i < inlen;) {
    const unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == sizeof kHttp11 && std::memcmp(in + i + 1, kHttp11, len) == 0) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// Startup and reload messages say which of the files is at fault, not only its path.
std::string ReadPem(const std::string& path, const char* role) {
  try {
    return ReadBounded(path, FileKinds::kRegularOnly);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(role) + " " + e.what());
  }
}

bool IsPemPrivateKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return false;
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ERR_clear_error();
  if (pkey == nullptr) return false;
  EVP_PKEY_free(pkey);
  return true;
}

void Check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + ": " + OpenSslError());
}

}  // namespace

std::shared_ptr<ssl::context> MakeTlsContext(const TlsFiles& files) {
  ERR_clear_error();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  Check(SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) == 1, "TLS minimum version");
  Check(SSL_CTX_set_cipher_list(native, kTls12Ciphers) == 1, "TLS 1.2 ciphers");
  Check(SSL_CTX_set1_groups_list(native, kGroups) == 1, "TLS groups");
  // No session tickets: a rotated certificate must not be bypassed by resuming an old session,
  // and the API server keeps connections open anyway.
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_alpn_select_cb(native, SelectAlpn, nullptr);
  // DHE suites need parameters; let OpenSSL pick them to match the key size.
  SSL_CTX_set_dh_auto(native, 1);

  const std::string cert = ReadPem(files.cert, "TLS certificate");
  const std::string key = ReadPem(files.key, "TLS key");
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(cert), ec);
  if (ec)
    throw std::runtime_error(files.cert +
                             ": not a usable PEM certificate chain: " + OpenSslError());
  ctx->use_private_key(boost::asio::buffer(key), ssl::context::pem, ec);
  if (ec) {
    // OpenSSL refuses a key that does not match the certificate already set, leaving nothing
    // in its error queue to say so ("unknown OpenSSL error"): say it when the key itself reads.
    if (IsPemPrivateKey(key)) {
      throw std::runtime_error(files.key + ": private key does not match certificate " +
                               files.cert);
    }
    throw std::runtime_error(files.key + ": not a usable PEM private key: " + OpenSslError());
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    throw std::runtime_error(files.key + ": private key does not match certificate " + files.cert);
  }
  if (!files.client_ca.empty()) {
    const std::string ca = ReadPem(files.client_ca, "client CA");
    ctx->add_certificate_authority(boost::asio::buffer(ca), ec);
    if (ec) {
      throw std::runtime_error(files.client_ca + ": not a usable PEM CA bundle: " + OpenSslError());
    }
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  ERR_clear_error();
  return ctx;
}

std::int64_t CertificateNotAfter(const boost::asio::ssl::context& context) {
  // native_handle() is not const in Asio; reading the certificate does not change the context.
  SSL_CTX* native = const_cast<boost::asio::ssl::context&>(context).native_handle();
  const X509* cert = SSL_CTX_get0_certificate(native);
  if (cert == nullptr) throw std::runtime_error("TLS context has no certificate");
  const ASN1_TIME* not_after = X509_get0_notAfter(cert);
  // Days and seconds from the epoch to notAfter: ASN1_TIME_diff works in UTC, so no timegm and
  // no dependence on the process's time zone.
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  int days = 0, seconds = 0;
  const int ok = epoch != nullptr && ASN1_TIME_diff(&days, &seconds, epoch, not_after);
  ASN1_TIME_free(epoch);
  if (!ok) throw std::runtime_error("TLS certificate notAfter unreadable: " + OpenSslError());
  return static_cast<std::int64_t>(days) * 86400 + seconds;
}

TlsLoad LoadTls(const TlsFiles& files, Env& env) {
  TlsLoad load;
  load.context = MakeTlsContext(files);
  load.not_after = CertificateNotAfter(*load.context);
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(env.Now().time_since_epoch()).count();
  if (load.not_after <= now) {
    env.Log(log::Level::kWarn,
            "the serving certificate has expired; clients will refuse every connection until it "
            "is replaced",
            {{"cert", files.cert}, {"notAfter", load.not_after}});
  }
  return load;
}

}  // namespace rw::server
