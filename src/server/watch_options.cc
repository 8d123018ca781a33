#include "rdma_webhook/server/watch_options.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace rw::server {
namespace {

bool IsPort(std::string_view text) {
  unsigned port = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  return ec == std::errc() && ptr == text.data() + text.size() && port > 0 && port <= 65535;
}

}  // namespace

std::string ApiServerEndpoint::Url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
}

ApiServerEndpoint ParseApiServerUrl(std::string_view url) {
  const auto bad = [&](std::string_view why) {
    return std::invalid_argument("--kube-api-server '" + std::string(url) +
                                 "': " + std::string(why));
  };
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    throw bad("must start with https:// (the API server serves only TLS)");
  }
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) throw bad("a path is not supported");
  ApiServerEndpoint e;
  std::string_view port = "443";
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) throw bad("an IPv6 address needs its closing ]");
    e.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw bad("expected :port after ]");
      port = rest.substr(1);
    }
  } else {
    const auto colon = rest.rfind(':');
    e.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (e.host.empty()) throw bad("no host");
  if (!IsPort(port)) throw bad("the port must be 1 to 65535");
  e.port = std::string(port);
  return e;
}

ApiServerEndpoint ResolveApiServer(const WatchOptions& options,
                                   const std::function<const char*(const char*)>& getenv) {
  ApiServerEndpoint e;
  if (!options.api_server.empty()) {
    e = ParseApiServerUrl(options.api_server);
  } else {
    const char* host = getenv("KUBERNETES_SERVICE_HOST");
    const char* port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
      throw std::invalid_argument(
          "--watch-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not "
          "in a pod); give --kube-api-server, --kube-ca and --kube-token-file");
    }
    if (!IsPort(port)) {
      throw std::invalid_argument("KUBERNETES_SERVICE_PORT '" + std::string(port) +
                                  "' is not a port");
    }
    e.host = host;
    e.port = port;
  }
  const std::string dir(kServiceAccountDir);
  e.ca_file = options.ca_file.empty() ? dir + "/ca.crt" : options.ca_file;
  e.token_file = options.token_file.empty() ? dir + "/token" : options.token_file;
  return e;
}

std::chrono::milliseconds BackoffDelay(unsigned attempt, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max, double unit_random) {
  // Doubling stops at the cap, so a long outage cannot overflow the count.
  double d = static_cast<double>(initial.count());
  for (unsigned i = 0; i < attempt && d < static_cast<double>(max.count()); ++i) d *= 2;
  d = std::min(d, static_cast<double>(max.count()));
  const double r = std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(d * (0.5 + r / 2)));
}

}  // namespace rw::server
