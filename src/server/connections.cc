#include "rdma_webhook/server/connections.h"

#include <sys/resource.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace rw::server {

Connections::Slot::~Slot() {
  if (owner_ != nullptr) owner_->Release(id_);
}

void Connections::Slot::OnDrain(std::function<void()> close_if_idle) {
  owner_->SetOnDrain(id_, std::move(close_if_idle));
}

Connections::Connections(std::size_t limit, Metrics& metrics)
    : limit_(std::max<std::size_t>(limit, 1)), metrics_(metrics) {}

std::optional<Connections::Slot> Connections::Admit() {
  std::lock_guard lock(mu_);
  if (open_.size() >= limit_ || draining_) {
    metrics_.CountRefusedConnection();
    return std::nullopt;
  }
  const std::size_t id = next_id_++;
  open_.emplace(id, nullptr);
  metrics_.SetOpenConnections(open_.size());
  return Slot(this, id);
}

void Connections::Release(std::size_t id) {
  std::lock_guard lock(mu_);
  open_.erase(id);
  metrics_.SetOpenConnections(open_.size());
}

void Connections::SetOnDrain(std::size_t id, std::function<void()> close_if_idle) {
  bool drain_now = false;
  {
    std::lock_guard lock(mu_);
    if (auto it = open_.find(id); it != open_.end()) it->second = close_if_idle;
    drain_now = draining_;
  }
  // Registered after StartDrain collected the actions: run it here so none is missed.
  if (drain_now && close_if_idle) close_if_idle();
}

std::size_t Connections::StartDrain() {
  std::vector<std::function<void()>> actions;
  std::size_t open = 0;
  {
    std::lock_guard lock(mu_);
    draining_ = true;
    open = open_.size();
    for (const auto& [id, action] : open_) {
      if (action) actions.push_back(action);
    }
  }
  // Outside the lock: an action may end its session, whose slot then takes the lock.
  for (const auto& action : actions) action();
  return open;
}

std::size_t Connections::open() const {
  std::lock_guard lock(mu_);
  return open_.size();
}

std::size_t FitConnectionLimit(std::size_t requested) {
  rlimit limits{};
  if (getrlimit(RLIMIT_NOFILE, &limits) != 0) return std::max<std::size_t>(requested, 1);
  const rlim_t wanted = static_cast<rlim_t>(requested) + kDescriptorHeadroom;
  if (limits.rlim_cur != RLIM_INFINITY && limits.rlim_cur < wanted) {
    rlimit raised = limits;
    raised.rlim_cur = limits.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limits.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limits = raised;
  }
  if (limits.rlim_cur == RLIM_INFINITY || limits.rlim_cur >= wanted) {
    return std::max<std::size_t>(requested, 1);
  }
  const rlim_t room =
      limits.rlim_cur > kDescriptorHeadroom ? limits.rlim_cur - kDescriptorHeadroom : 1;
  return std::max<std::size_t>(static_cast<std::size_t>(room), 1);
}

}  // namespace rw::server
