#pragma once
// Notices when watched files hold something new. Compares what reading the path yields, not
// the inode or mtime of the path: a mounted Secret or ConfigMap is updated by swapping the
// `..data` symlink, which changes neither for the path the pod was given.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "rdma_webhook/server/env.h"

namespace rw::server {

class FileWatch {
 public:
  // Records what the files hold now (read through `env`, regular files only, bounded);
  // Changed() reports differences from this point on. `env` outlives the watch.
  explicit FileWatch(std::vector<std::string> paths, Env& env = Env::Default());

  // True when some file's content (or readability) differs from the previous call. Not
  // thread-safe: one poller owns it.
  bool Changed();

 private:
  std::optional<std::size_t> Fingerprint(const std::string& path) const;

  Env& env_;
  std::vector<std::string> paths_;
  std::vector<std::optional<std::size_t>> seen_;
};

}  // namespace rw::server
