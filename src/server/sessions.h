#pragma once
// The sessions the listener starts, one per accepted connection; each runs on the socket's own
// strand and returns nothing: a session ends with its connection, errors included.
#include <chrono>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "rdma_webhook/server/connections.h"
#include "rdma_webhook/server/front.h"
#include "rdma_webhook/server/memory_budget.h"
#include "rdma_webhook/server/metrics.h"
#include "rdma_webhook/server/serve.h"

namespace rw::server {

// What a TLS session allows its close_notify exchange after the last answer (the drain waits
// for it too).
inline constexpr std::chrono::seconds kTlsShutdownTime{1};

// What every session reads. All of it outlives the sessions (the io_context stops first).
struct SessionContext {
  const ServeOptions& options;  // deadlines and the body limit
  const Front& front;
  Metrics& metrics;
  Connections& connections;
  MemoryBudget& budget;  // what requests in flight hold, all connections together
};

// A connection on the webhook port: detects plain HTTP, does the TLS handshake with `tls` (the
// context in force at accept, kept alive by the session), then answers requests until the client
// closes, a deadline passes, or the drain finds it between requests. `slot` is its place under
// --max-connections, given back when the session ends.
void StartTlsSession(boost::asio::ip::tcp::socket socket,
                     std::shared_ptr<boost::asio::ssl::context> tls, Connections::Slot slot,
                     const SessionContext& context);

// A connection on the plain-HTTP probe port (kubelet probes, metrics scrapes): small requests,
// the same deadlines.
void StartProbeSession(boost::asio::ip::tcp::socket socket, const SessionContext& context);

}  // namespace rw::server
