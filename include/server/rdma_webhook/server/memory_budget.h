#pragma once
// What the requests in flight may hold in memory, all connections together
// (--max-buffered-bytes). A request reserves what it will cost before its body is read and keeps
// the reservation until its answer is written, so a crowd of large reviews, or of clients that
// send large reviews and never read the answers, is refused with 503 instead of growing the
// process past its memory limit. No sockets here; the sessions hold the leases.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace rw::server {

// What one review costs in memory while it is read, decided and answered, per byte of its body:
// the body, the JSON trees built from it, the mutated copy and the answer (a patch is several
// times the body: base64 of operations that repeat paths). Measured (docs/reliability.md) on the
// worst shape found, a Pod of many small GPU containers that are all patched: peak RSS rose 79,
// 76 and 72 bytes per body byte for bodies of 1.0, 4.4 and 7.2 MB (answers 5.6x the body; the
// patch's operations as a JSON tree are the largest part). 64 was the figure of an older, smaller
// patch, and such a review outgrew its reservation.
inline constexpr std::size_t kCostPerBodyByte = 80;
// What any request costs besides its body (parser, answer headers, the coroutine frame).
inline constexpr std::size_t kCostPerRequest = 16 * 1024;
// What a request of `body_bytes` reserves once its body is all here, to be decided and answered.
std::size_t RequestCost(std::uint64_t body_bytes);
// What it reserves while its body is still being read: the body as text (its declared length, or
// the limit when chunked) and the fixed cost. A client that declares a large body and sends
// nothing then holds one body's worth, not the decision's 80 bytes per byte of it.
std::size_t ReadingCost(std::uint64_t body_bytes);

class MemoryBudget {
 public:
  // One request's reservation; destroying it gives the bytes back. Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) {
      other.owner_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    std::size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Lease(MemoryBudget* owner, std::size_t bytes) : owner_(owner), bytes_(bytes) {}
    MemoryBudget* owner_;
    std::size_t bytes_;
  };

  // `capacity` bytes in all, at least 1.
  explicit MemoryBudget(std::size_t capacity);

  // A lease of `bytes`, or nothing when the leases held and this one would pass the capacity
  // (the session then waits for leases to end, or answers 503).
  // A request alone is always admitted, however large, so that a review the body limit
  // accepts can be served on a quiet server. Thread-safe.
  std::optional<Lease> Reserve(std::size_t bytes);

  std::size_t reserved() const;
  std::size_t capacity() const { return capacity_; }

 private:
  void Release(std::size_t bytes);

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::size_t reserved_ = 0;
};

}  // namespace rw::server
