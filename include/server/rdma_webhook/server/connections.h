#pragma once
// The open TLS connections: their limit (--max-connections), the open-connections gauge and the
// refusal counter, and the drain's reach into them. No sockets here: a session hands in how to
// close it while it is idle, so the limit and the drain are testable without a connection.
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "rdma_webhook/server/metrics.h"

namespace rw::server {

class Connections {
 public:
  // One admitted connection's place. Destroying it gives the place back. Move-only.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : owner_(other.owner_), id_(other.id_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

    // What the drain calls to close this connection if it is between requests. Called from the
    // drain's thread: it must only post to the session's own strand. Set once, early.
    void OnDrain(std::function<void()> close_if_idle);

   private:
    friend class Connections;
    Slot(Connections* owner, std::size_t id) : owner_(owner), id_(id) {}
    Connections* owner_;
    std::size_t id_;
  };

  // `limit` at least 1; `metrics` outlives this.
  Connections(std::size_t limit, Metrics& metrics);

  // A place for a new connection, or nothing (counted as refused) when `limit` are open or the
  // drain has begun. Thread-safe.
  std::optional<Slot> Admit();

  // From now on no connection is admitted, draining() is true, and every open connection's
  // OnDrain action runs once. Returns how many were open.
  std::size_t StartDrain();
  // True once StartDrain ran: sessions close instead of waiting for another request.
  bool draining() const { return draining_; }

  std::size_t open() const;
  std::size_t limit() const { return limit_; }

 private:
  void Release(std::size_t id);
  void SetOnDrain(std::size_t id, std::function<void()> close_if_idle);

  const std::size_t limit_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  std::map<std::size_t, std::function<void()>> open_;  // by id; empty until OnDrain
  std::size_t next_id_ = 0;
  std::atomic<bool> draining_{false};
};

// Descriptors the process holds besides its TLS connections: stdio, the two listeners, the event
// loop's own, policy and certificate files being read, probe and metrics connections.
inline constexpr std::size_t kDescriptorHeadroom = 64;

// The connection limit the process's descriptors allow: raises the soft RLIMIT_NOFILE toward
// `requested + kDescriptorHeadroom` (never above the hard limit, never lowering it) and returns
// `requested`, or what fits under the soft limit then in force, at least 1.
std::size_t FitConnectionLimit(std::size_t requested);

}  // namespace rw::server
