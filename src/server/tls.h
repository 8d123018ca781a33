#pragma once
// The server's TLS context: TLS 1.2 and 1.3 only, Mozilla "intermediate" ciphers, ALPN
// http/1.1, RSA or ECDSA keys, optional client-certificate verification.
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "rdma_webhook/server/env.h"

namespace rw::server {

struct TlsFiles {
  std::string cert, key, client_ca;  // client_ca empty: clients are not asked for a certificate
};

// Reads the files once and builds a context from what was read. Throws std::runtime_error
// whose message names the file that could not be used.
std::shared_ptr<boost::asio::ssl::context> MakeTlsContext(const TlsFiles& files);

// notAfter of the leaf certificate a context serves, in Unix seconds (UTC). Throws
// std::runtime_error when the context has no certificate or its time cannot be read.
std::int64_t CertificateNotAfter(const boost::asio::ssl::context& context);

// MakeTlsContext and the certificate's notAfter. A certificate already expired by `env`'s clock
// is still served (a rotation replaces it without a restart), but every client will refuse it,
// so it is logged through `env` as a warning naming the file and the time.
struct TlsLoad {
  std::shared_ptr<boost::asio::ssl::context> context;
  std::int64_t not_after = 0;  // Unix seconds
};
TlsLoad LoadTls(const TlsFiles& files, Env& env);

}  // namespace rw::server
