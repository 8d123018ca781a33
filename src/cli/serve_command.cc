#include <algorithm>
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

// A duration flag: validated when parsed, converted in the command's callback.
void AddDuration(CLI::App* cmd, const std::string& name, std::string& value,
                 const std::string& help) {
  cmd->add_option(name, value, help)
      ->check([](const std::string& s) {
        try {
          ParseDuration(s);
          return std::string();
        } catch (const CLI::ValidationError& e) {
          return std::string(e.what());
        }
      })
      ->capture_default_str();
}

// The flags of the cluster watch (docs/http.md#the-cluster-watch).
struct WatchDurations {
  std::string watch_timeout = "5m", ready_timeout = "30s", absent_retry = "60s",
              backoff_max = "30s", debounce = "250ms";
};

void AddWatchFlags(CLI::App* cmd, server::WatchOptions& watch, WatchDurations& d) {
  cmd->add_flag("--watch-cluster", watch.enabled,
                "list and watch DeviceClasses, claims, NADs, training runtimes and ComputeDomains "
                "with the pod's ServiceAccount (the chart turns it on)");
  cmd->add_option("--kube-api-server", watch.api_server,
                  "API server URL https://host[:port] (default: in-cluster, "
                  "KUBERNETES_SERVICE_HOST and _PORT)");
  cmd->add_option("--kube-ca", watch.ca_file,
                  "CA bundle of the API server (default: the ServiceAccount's ca.crt)");
  cmd->add_option("--kube-token-file", watch.token_file,
                  "bearer token file, read again for every request (default: the "
                  "ServiceAccount's token)");
  AddDuration(cmd, "--watch-timeout", d.watch_timeout,
              "a watch asks the API server to end it after [t, 2t)");
  AddDuration(cmd, "--watch-ready-timeout", d.ready_timeout,
              "/readyz waits at most this long for every resource's first LIST");
  AddDuration(cmd, "--watch-absent-retry", d.absent_retry,
              "a resource not served (404) or forbidden (403) is asked for again after this; "
              "one that was listed keeps its objects through a shorter refusal");
  AddDuration(cmd, "--watch-backoff-max", d.backoff_max,
              "longest wait between retries after connection errors");
  AddDuration(cmd, "--watch-debounce", d.debounce,
              "changes within this period share one rebuild of the webhook's snapshot");
  cmd->add_option("--watch-max-object-bytes", watch.max_object_bytes,
                  "largest watch event (one object) accepted")
      ->check(CLI::Range(std::size_t{64} << 10, std::size_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--watch-max-list-bytes", watch.max_list_bytes, "largest LIST page body accepted")
      ->check(CLI::Range(std::size_t{64} << 10, std::size_t{1} << 32))
      ->capture_default_str();
  cmd->add_option("--watch-page-size", watch.page_size, "objects per LIST page")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000}))
      ->capture_default_str();
  cmd->add_option("--watch-max-objects", watch.max_objects, "objects held per resource at most")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}))
      ->capture_default_str();
}

void ApplyWatchDurations(server::WatchOptions& watch, const WatchDurations& d) {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(ParseDuration(d.watch_timeout));
  if (seconds.count() < 1) {
    throw CLI::ValidationError("--watch-timeout", "must be at least 1s");
  }
  watch.watch_timeout = seconds;
  watch.ready_timeout = ParseDuration(d.ready_timeout);
  watch.absent_retry = ParseDuration(d.absent_retry);
  watch.backoff_max = std::max(ParseDuration(d.backoff_max), std::chrono::milliseconds(1));
  watch.backoff_initial = std::min(watch.backoff_initial, watch.backoff_max);
  watch.debounce = ParseDuration(d.debounce);
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
  AddDuration(cmd, "--shutdown-delay", *delay, "keep serving this long after SIGTERM");
  auto durations = std::make_shared<WatchDurations>();
  AddWatchFlags(cmd, options->watch, *durations);
  cmd->callback([options, delay, durations, &run] {
    options->shutdown_delay = ParseDuration(*delay);
    ApplyWatchDurations(options->watch, *durations);
    run = [options] { return server::Serve(*options); };
  });
}

}  // namespace rw::cli
