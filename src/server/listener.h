#pragma once
// The two listening ports: binding them, and the accept loops that hand each connection to its
// session (a TLS session on the webhook port, a plain-HTTP session on the probe port).
#include <atomic>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>

#include "sessions.h"

namespace rw::server {

class Listener {
 public:
  // `ioc` and `sessions` (with all it refers to) outlive the listener; sessions keep a
  // reference to `sessions`.
  Listener(boost::asio::io_context& ioc, const SessionContext& sessions);

  // Binds options.listen and options.probe_listen. Throws std::runtime_error naming the address
  // and the step that failed, so a startup error reaches main.
  void Open();
  // Starts accepting on both ports. Call after Open and UseTls.
  void Start();
  // Connections accepted from now on use `context`; those open keep theirs.
  void UseTls(std::shared_ptr<boost::asio::ssl::context> context) {
    tls_.store(std::move(context));
  }
  // Stops accepting TLS connections (the drain); open ones are not touched. Thread-safe.
  void CloseTls();

  std::string TlsAddress() const;
  std::string ProbeAddress() const;

 private:
  // On the TLS acceptor's strand: admits the connection under --max-connections or closes it.
  void HandOffTls(boost::asio::ip::tcp::socket socket);
  // On the probe acceptor's strand: admits the connection under kMaxProbeConnections or closes it.
  void HandOffProbe(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  const SessionContext& sessions_;
  boost::asio::ip::tcp::acceptor tls_acceptor_;
  boost::asio::ip::tcp::acceptor probe_acceptor_;
  std::atomic<std::shared_ptr<boost::asio::ssl::context>> tls_;
  bool at_limit_ = false;  // the last TLS connection was refused; only on the acceptor's strand
  bool probe_at_limit_ = false;  // likewise for the probe port, on its acceptor's strand
};

}  // namespace rw::server
