#pragma once
// The outside world the server and the CLI read, behind one interface in LevelDB's manner
// (leveldb::Env): files, the clock, the log. The logic that reads them, the policy loader and
// the reload, takes an Env, so it is tested with a fake one instead of files and sleeps.
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rdma_webhook/server/log.h"

namespace rw::server {

// Every input read whole (policies, certificates and keys, manifests read whole, stdin) is at
// most this large: past it the read stops and fails, so /dev/zero, `yes` or an endless FIFO
// costs at most this much memory.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// A file that could not be read. what() is "<path>: <reason>".
class ReadError : public std::runtime_error {
 public:
  enum class Kind { kUnreadable, kTooLarge, kNotAFile };
  ReadError(Kind kind, std::string path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), kind_(kind), path_(std::move(path)) {}
  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }

 private:
  Kind kind_;
  std::string path_;
};

// Which files a read accepts. The server reads only regular files (a symlink to one is fine, as
// in a mounted Secret): a FIFO would block its reload for good and a device never ends. The
// CLI also reads stdin (`-`), FIFOs and process substitutions, within the same bound.
enum class FileKinds { kRegularOnly, kAny };

// The one bounded reader: all of `path` ("-" is stdin when `kinds` is kAny), at most `limit`
// bytes. Throws ReadError naming the path: kTooLarge as soon as more than `limit` bytes came,
// without reading the rest.
std::string ReadBounded(const std::string& path, FileKinds kinds,
                        std::size_t limit = kMaxInputBytes);

class Env {
 public:
  virtual ~Env() = default;
  // ReadBounded, or what a fake holds for `path`.
  virtual std::string ReadFile(const std::string& path, FileKinds kinds) = 0;
  virtual std::chrono::system_clock::time_point Now() = 0;
  virtual void Log(log::Level level, std::string_view message, const nlohmann::json& fields) = 0;

  // The process's: the file system, the system clock and log::Event.
  static Env& Default();
};

}  // namespace rw::server
