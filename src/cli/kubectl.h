#pragma once
// Running kubectl as a child process, so the user's kubeconfig, contexts and credential plugins
// all work as they do for kubectl itself. Its output is read as it arrives.
#include <sys/types.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace rw::cli {

// kubectl could not be started, or failed: names the command line and carries its stderr.
class KubectlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One kubectl run: stdout is a pipe read with Read(); stderr goes to a temporary file (no
// deadlock however much kubectl writes there), read by Finish().
class KubectlRun {
 public:
  // `args` without the leading "kubectl". Throws KubectlError when it cannot be started.
  explicit KubectlRun(const std::vector<std::string>& args);
  ~KubectlRun();
  KubectlRun(const KubectlRun&) = delete;
  KubectlRun& operator=(const KubectlRun&) = delete;

  // Up to `capacity` bytes of stdout; 0 at its end.
  std::size_t Read(char* buffer, std::size_t capacity);

  // Reads what is left of stdout, waits for the exit and returns kubectl's stderr; throws
  // KubectlError naming the command and its stderr when it exited non-zero.
  std::string Finish();

  // "kubectl get ..." as a shell would show it.
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::FILE* stderr_file_ = nullptr;
};

// Runs kubectl to its end and returns its stdout (small outputs only: discovery, ConfigMaps).
std::string RunKubectl(const std::vector<std::string>& args);

}  // namespace rw::cli
