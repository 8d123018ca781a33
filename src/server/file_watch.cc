#include "rdma_webhook/server/file_watch.h"

#include <functional>
#include <utility>

namespace rw::server {

FileWatch::FileWatch(std::vector<std::string> paths, Env& env)
    : env_(env), paths_(std::move(paths)) {
  for (const auto& p : paths_) seen_.push_back(Fingerprint(p));
}

std::optional<std::size_t> FileWatch::Fingerprint(const std::string& path) const {
  try {
    const std::string content = env_.ReadFile(path, FileKinds::kRegularOnly);
    // Size folded in so that a truncated rewrite is never mistaken for the old content.
    return std::hash<std::string>{}(content) ^ (content.size() * 0x9E3779B97F4A7C15ull);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool FileWatch::Changed() {
  bool changed = false;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    auto now = Fingerprint(paths_[i]);
    if (now != seen_[i]) {
      seen_[i] = now;
      changed = true;
    }
  }
  return changed;
}

}  // namespace rw::server
