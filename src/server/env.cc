#include "rdma_webhook/server/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rw::server {
namespace {

// Closes what it opened; never stdin.
struct Descriptor {
  int fd = -1;
  bool owned = false;
  ~Descriptor() {
    if (owned && fd >= 0) ::close(fd);
  }
};

class ProcessEnv final : public Env {
 public:
  std::string ReadFile(const std::string& path, FileKinds kinds) override {
    return ReadBounded(path, kinds);
  }
  std::chrono::system_clock::time_point Now() override { return std::chrono::system_clock::now(); }
  void Log(log::Level level, std::string_view message, const nlohmann::json& fields) override {
    log::Event(level, message, fields);
  }
};

std::string Reason(int error) { return std::strerror(error); }

std::string LargerThan(std::size_t limit) {
  if (limit >= (std::size_t{1} << 20) && limit % (std::size_t{1} << 20) == 0) {
    return "larger than " + std::to_string(limit >> 20) + " MiB";
  }
  return "larger than " + std::to_string(limit) + " bytes";
}

}  // namespace

std::string ReadBounded(const std::string& path, FileKinds kinds, std::size_t limit) {
  using Kind = ReadError::Kind;
  Descriptor in;
  if (path == "-" && kinds == FileKinds::kAny) {
    in.fd = STDIN_FILENO;
  } else {
    // The server's open must not wait for a FIFO's writer (it is refused below), so it opens
    // without blocking, and reads block again once the kind is known. The CLI waits for the
    // writer, as cat does.
    const int nonblock = kinds == FileKinds::kRegularOnly ? O_NONBLOCK : 0;
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | nonblock);
    in.owned = true;
    if (in.fd < 0) throw ReadError(Kind::kUnreadable, path, "cannot read: " + Reason(errno));
    struct stat st {};
    if (::fstat(in.fd, &st) != 0) {
      throw ReadError(Kind::kUnreadable, path, "cannot read: " + Reason(errno));
    }
    if (S_ISDIR(st.st_mode)) throw ReadError(Kind::kNotAFile, path, "is a directory");
    if (kinds == FileKinds::kRegularOnly && !S_ISREG(st.st_mode)) {
      throw ReadError(Kind::kNotAFile, path, "not a regular file");
    }
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit) {
      throw ReadError(Kind::kTooLarge, path, LargerThan(limit));
    }
    if (nonblock != 0) {
      const int flags = ::fcntl(in.fd, F_GETFL);
      if (flags >= 0) ::fcntl(in.fd, F_SETFL, flags & ~O_NONBLOCK);
    }
  }
  std::string text;
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(in.fd, block, sizeof block);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ReadError(Kind::kUnreadable, path, "read error: " + Reason(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > limit) {
      throw ReadError(Kind::kTooLarge, path, LargerThan(limit));
    }
    text.append(block, static_cast<std::size_t>(n));
  }
  return text;
}

Env& Env::Default() {
  static ProcessEnv env;
  return env;
}

}  // namespace rw::server
