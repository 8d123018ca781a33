#include "rdma_webhook/server/policy_loader.h"

#include <exception>
#include <utility>

namespace rw::server {
namespace {

PolicyLoad Failed(PolicyLoadError::Kind kind, const std::string& file, std::string detail) {
  return PolicyLoad{nullptr, PolicyLoadError{kind, file, std::move(detail)}};
}

// ReadError's what() starts with the path; the load error keeps the file apart.
std::string WithoutPath(const ReadError& e) {
  std::string message = e.what();
  const std::string prefix = e.path() + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  return message;
}

}  // namespace

PolicyLoad LoadPolicy(Env& env, const std::string& file, FileKinds kinds) {
  using Kind = PolicyLoadError::Kind;
  if (file.empty()) {
    return PolicyLoad{std::shared_ptr<const policy::Policy>(&policy::DefaultPolicy(), [](auto*) {}),
                      std::nullopt};
  }
  std::string text;
  try {
    text = env.ReadFile(file, kinds);
  } catch (const ReadError& e) {
    return Failed(e.kind() == ReadError::Kind::kTooLarge ? Kind::kTooLarge : Kind::kUnreadable,
                  file, WithoutPath(e));
  }
  try {
    return PolicyLoad{std::make_shared<const policy::Policy>(policy::ParsePolicyText(text)),
                      std::nullopt};
  } catch (const policy::PolicyError& e) {
    PolicyLoad failed = Failed(Kind::kInvalid, file, e.what());
    failed.error->line = e.line;
    failed.error->column = e.column;
    return failed;
  } catch (const std::exception& e) {
    // The YAML reader's own errors (nesting too deep, a bad scalar) are the file's fault too.
    return Failed(Kind::kInvalid, file, e.what());
  }
}

}  // namespace rw::server
