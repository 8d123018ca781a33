#pragma once
// Notices when watched files hold something new. Compares what reading the path yields, not
// the inode or mtime of the path: a mounted Secret or ConfigMap is updated by swapping the
// `..data` symlink, which changes neither for the path the pod was given.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rw::server {

// Reads a whole file. Throws std::runtime_error naming the file.
std::string ReadFile(const std::string& path);

class FileWatch {
 public:
  // Records what the files hold now; Changed() reports differences from this point on.
  explicit FileWatch(std::vector<std::string> paths);

  // True when some file's content (or readability) differs from the previous call. Not
  // thread-safe: one poller owns it.
  bool Changed();

 private:
  std::optional<std::size_t> Fingerprint(const std::string& path) const;

  std::vector<std::string> paths_;
  std::vector<std::optional<std::size_t>> seen_;
};

}  // namespace rw::server
