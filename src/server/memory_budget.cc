#include "rdma_webhook/server/memory_budget.h"

#include <algorithm>
#include <limits>

namespace rw::server {

std::size_t RequestCost(std::uint64_t body_bytes) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::size_t>::max();
  // Saturates: a declared length near 2^64 must not wrap to a small cost.
  if (body_bytes > (kMax - kCostPerRequest) / kCostPerBodyByte) return kMax;
  return static_cast<std::size_t>(body_bytes) * kCostPerBodyByte + kCostPerRequest;
}

std::size_t ReadingCost(std::uint64_t body_bytes) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::size_t>::max();
  if (body_bytes > kMax - kCostPerRequest) return kMax;
  return static_cast<std::size_t>(body_bytes) + kCostPerRequest;
}

MemoryBudget::Lease::~Lease() {
  if (owner_ != nullptr) owner_->Release(bytes_);
}

MemoryBudget::MemoryBudget(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

std::optional<MemoryBudget::Lease> MemoryBudget::Reserve(std::size_t bytes) {
  std::lock_guard lock(mu_);
  if (reserved_ != 0 && (bytes > capacity_ || reserved_ > capacity_ - bytes)) return std::nullopt;
  reserved_ += bytes;
  return Lease(this, bytes);
}

void MemoryBudget::Release(std::size_t bytes) {
  std::lock_guard lock(mu_);
  reserved_ -= bytes;
}

std::size_t MemoryBudget::reserved() const {
  std::lock_guard lock(mu_);
  return reserved_;
}

}  // namespace rw::server
