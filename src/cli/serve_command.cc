#include <charconv>
#include <iostream>

#include "commands.h"
#include "rdma_webhook/server/serve.h"

namespace rw::cli {
namespace {

// "5s", "500ms", "1m", "0": the duration syntax users know from kubectl and Go flags.
std::chrono::milliseconds ParseDuration(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || value < 0)
    throw CLI::ValidationError("duration", "'" + text + "' is not a duration like 5s or 500ms");
  const std::string unit(ptr, end);
  double ms = 0;
  if (unit == "ms")
    ms = value;
  else if (unit == "s" || (unit.empty() && value == 0))
    ms = value * 1000;
  else if (unit == "m")
    ms = value * 60000;
  else
    throw CLI::ValidationError("duration", "'" + text + "' needs a unit: ms, s or m");
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

}  // namespace

void AddServeCommand(CLI::App& root, std::function<int()>& run) {
  auto options = std::make_shared<server::ServeOptions>();
  auto delay = std::make_shared<std::string>("5s");
  auto* cmd =
      root.add_subcommand("serve", "Run the admission webhook server (TLS) and its probe port");
  cmd->add_option("--tls-cert", options->tls_cert, "serving certificate (PEM)")->required();
  cmd->add_option("--tls-key", options->tls_key, "serving key (PEM)")->required();
  cmd->add_option("--client-ca", options->client_ca, "verify client certificates against this CA");
  cmd->add_option("--policy", options->policy_file, "policy file (default: the embedded policy)");
  cmd->add_option("--listen", options->listen, "TLS address")->capture_default_str();
  cmd->add_option("--probe-listen", options->probe_listen, "plain HTTP probe and metrics address")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "worker threads (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", options->max_body_bytes, "largest request body accepted")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{64} << 20))
      ->capture_default_str();
  cmd->add_option("--max-connections", options->max_connections,
                  "open TLS connections at most; more are closed at accept and counted")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--max-buffered-bytes", options->max_buffered_bytes,
                  "memory all requests in flight may hold; over it a request is answered 503")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--log-format", options->log_format, "log format")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  cmd->add_option("--shutdown-delay", *delay, "keep serving this long after SIGTERM")
      ->check([](const std::string& s) {
        try {
          ParseDuration(s);
          return std::string();
        } catch (const CLI::ValidationError& e) {
          return std::string(e.what());
        }
      })
      ->capture_default_str();
  cmd->callback([options, delay, &run] {
    options->shutdown_delay = ParseDuration(*delay);
    run = [options] { return server::Serve(*options); };
  });
}

}  // namespace rw::cli
