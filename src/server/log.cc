#include "rdma_webhook/server/log.h"

#include <memory>
#include <stdexcept>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace rw::server::log {
namespace {

bool g_json = true;
std::shared_ptr<spdlog::logger> g_logger;

spdlog::level::level_enum ToSpd(Level l) {
  switch (l) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> Logger() {
  if (!g_logger) Setup("json", "info");
  return g_logger;
}

}  // namespace

void Setup(std::string_view format, std::string_view level) {
  if (format != "json" && format != "text") {
    throw std::invalid_argument("--log-format must be json or text, not '" + std::string(format) +
                                "'");
  }
  spdlog::level::level_enum lvl;
  if (level == "trace") {
    lvl = spdlog::level::trace;
  } else if (level == "debug") {
    lvl = spdlog::level::debug;
  } else if (level == "info") {
    lvl = spdlog::level::info;
  } else if (level == "warn" || level == "warning") {
    lvl = spdlog::level::warn;
  } else if (level == "error") {
    lvl = spdlog::level::err;
  } else if (level == "critical") {
    lvl = spdlog::level::critical;
  } else if (level == "off") {
    lvl = spdlog::level::off;
  } else {
    throw std::invalid_argument(
        "--log-level must be trace, debug, info, warn, error, critical or off, not '" +
        std::string(level) + "'");
  }
  g_json = format == "json";
  // stderr: Kubernetes collects it, and stdout stays free for the CLI's own output.
  auto logger = std::make_shared<spdlog::logger>("rdma-webhook",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern(g_json ? R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})"
                             : "%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                      spdlog::pattern_time_type::utc);
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::debug);
  g_logger = std::move(logger);
}

bool Enabled(Level level) { return Logger()->should_log(ToSpd(level)); }

namespace {

// A value as a line carries it: a string cut at kMaxFieldBytes, a list at kMaxFieldItems, at
// any depth. A review's uid, name or error text is the client's to choose, and one line must not
// carry megabytes of it. A cut inside a UTF-8 sequence is replaced when the line is written.
nlohmann::json Bounded(const nlohmann::json& value) {
  using nlohmann::json;
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() <= kMaxFieldBytes) return value;
    return text.substr(0, kMaxFieldBytes) + "...(" + std::to_string(text.size()) + " bytes)";
  }
  if (value.is_array()) {
    json out = json::array();
    for (std::size_t i = 0; i < value.size() && i < kMaxFieldItems; ++i)
      out.push_back(Bounded(value[i]));
    if (value.size() > kMaxFieldItems)
      out.push_back("...(" + std::to_string(value.size()) + " items)");
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    std::size_t n = 0;
    for (const auto& [k, v] : value.items()) {
      if (n++ == kMaxFieldItems) break;
      out[Bounded(k).get<std::string>()] = Bounded(v);
    }
    return out;
  }
  return value;
}

}  // namespace

std::string FormatFields(bool as_json, std::string_view message, const nlohmann::json& raw) {
  using nlohmann::json;
  const json fields = Bounded(raw);
  if (as_json) {
    // Ordered so the message comes first, right after time and level, where readers look.
    nlohmann::ordered_json line = nlohmann::ordered_json::object();
    line["msg"] = message;
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.items()) line[k] = v;
    }
    std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
    // The pattern supplies the braces around time and level.
    return text.substr(1, text.size() - 2);
  }
  std::string text(message);
  if (fields.is_object()) {
    for (const auto& [k, v] : fields.items()) {
      text += ' ';
      text += k;
      text += '=';
      // Plain strings stay bare; anything a reader could split (spaces, quotes, '=') is
      // quoted the JSON way, so `key=value` pairs stay unambiguous.
      const bool bare =
          v.is_string() && !v.get_ref<const std::string&>().empty() &&
          v.get_ref<const std::string&>().find_first_of(" \"=\n\t") == std::string::npos;
      text += bare ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  return text;
}

void Event(Level level, std::string_view message, const nlohmann::json& fields) {
  auto logger = Logger();
  if (!logger->should_log(ToSpd(level))) return;
  logger->log(ToSpd(level), "{}", FormatFields(g_json, message, fields));
}

}  // namespace rw::server::log
