#include "kubectl.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace rw::cli {
namespace {

std::string Quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t'\"\\$*?[]{}|&;<>()`!#~") == std::string::npos)
    return arg;
  std::string out = "'";
  for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// kubectl's stderr, trimmed, or a note that it said nothing.
std::string Said(const std::string& err) {
  std::string trimmed = err;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  return trimmed.empty() ? "(nothing on stderr)" : trimmed;
}

}  // namespace

KubectlRun::KubectlRun(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"kubectl"};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const auto& a : argv) command_ += (command_.empty() ? "" : " ") + Quoted(a);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    throw KubectlError(command_ + ": cannot make a pipe: " + std::strerror(errno));
  stderr_file_ = std::tmpfile();
  if (stderr_file_ == nullptr) {
    close(out[0]);
    close(out[1]);
    throw KubectlError(command_ + ": cannot make a temporary file: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fileno(stderr_file_), STDERR_FILENO);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, "kubectl", &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  stdout_fd_ = out[0];
  if (rc != 0) {
    pid_ = -1;
    throw KubectlError(command_ + ": cannot run kubectl (" + std::strerror(rc) +
                       "): is it installed and on PATH?");
  }
}

KubectlRun::~KubectlRun() {
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (stderr_file_ != nullptr) std::fclose(stderr_file_);
}

std::size_t KubectlRun::Read(char* buffer, std::size_t capacity) {
  while (true) {
    const ssize_t n = read(stdout_fd_, buffer, capacity);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR)
      throw KubectlError(command_ + ": reading its output: " + std::strerror(errno));
  }
}

std::string KubectlRun::Finish() {
  char drain[1 << 14];
  while (Read(drain, sizeof drain) > 0) {
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) throw KubectlError(command_ + ": waitpid: " + std::strerror(errno));
  }
  pid_ = -1;
  std::string err;
  std::rewind(stderr_file_);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, stderr_file_)) > 0) err.append(buffer, n);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return err;
  const std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
  throw KubectlError("`" + command_ + "` failed (" + how + "): " + Said(err));
}

std::string RunKubectl(const std::vector<std::string>& args) {
  KubectlRun run(args);
  std::string out;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = run.Read(buffer, sizeof buffer)) > 0) out.append(buffer, n);
  run.Finish();
  return out;
}

}  // namespace rw::cli
