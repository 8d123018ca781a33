#pragma once
// The sessions the listener starts, one per accepted connection; each runs on the socket's own
// strand and returns nothing: a session ends with its connection, errors included.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

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
  std::atomic<std::size_t>& probe_connections;  // probe sessions alive (ProbeSlot)
};

// A connection on the webhook port: detects plain HTTP, does the TLS handshake with `tls` (the
// context in force at accept, kept alive by the session), then answers requests until the client
// closes, a deadline passes, or the drain finds it between requests. `slot` is its place under
// --max-connections, given back when the session ends.
void StartTlsSession(boost::asio::ip::tcp::socket socket,
                     std::shared_ptr<boost::asio::ssl::context> tls, Connections::Slot slot,
                     const SessionContext& context);

// Probe connections open at once. Kubelet's probes and a few scrapers need a handful; the cap
// keeps a flood on the probe port inside kDescriptorHeadroom, so it cannot take the descriptors
// the TLS connections and the file reloads need.
inline constexpr std::size_t kMaxProbeConnections = 32;

// One probe connection's place under kMaxProbeConnections; destroying it gives the place back.
class ProbeSlot {
 public:
  // A place, or nothing when kMaxProbeConnections are open. `open` outlives the slot.
  static std::optional<ProbeSlot> Admit(std::atomic<std::size_t>& open) {
    if (open.fetch_add(1) >= kMaxProbeConnections) {
      open.fetch_sub(1);
      return std::nullopt;
    }
    return ProbeSlot(open);
  }
  ProbeSlot(ProbeSlot&& other) noexcept : open_(other.open_) { other.open_ = nullptr; }
  ProbeSlot& operator=(ProbeSlot&&) = delete;
  ProbeSlot(const ProbeSlot&) = delete;
  ProbeSlot& operator=(const ProbeSlot&) = delete;
  ~ProbeSlot() {
    if (open_ != nullptr) open_->fetch_sub(1);
  }

 private:
  explicit ProbeSlot(std::atomic<std::size_t>& open) : open_(&open) {}
  std::atomic<std::size_t>* open_;
};

// A connection on the plain-HTTP probe port (kubelet probes, metrics scrapes): small requests,
// the same deadlines; `slot` is given back when it ends.
void StartProbeSession(boost::asio::ip::tcp::socket socket, ProbeSlot slot,
                       const SessionContext& context);

}  // namespace rw::server
