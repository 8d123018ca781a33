#pragma once
// Structured log lines through spdlog: `json` writes one JSON object per line, `text` writes
// `<time> <level> <message> key=value ...`. Both in UTC.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rw::server::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// Throws std::invalid_argument for an unknown format or level.
void Setup(std::string_view format, std::string_view level);

bool Enabled(Level level);

// `fields` is a JSON object; its members follow the message.
void Event(Level level, std::string_view message, const nlohmann::json& fields = {});

// What one field of a line carries at most: a string's first kMaxFieldBytes bytes, a list's or
// an object's first kMaxFieldItems members, each marked with its real size when cut.
inline constexpr std::size_t kMaxFieldBytes = 4096;
inline constexpr std::size_t kMaxFieldItems = 64;

// The line Event writes, without time and level (for tests).
std::string FormatFields(bool as_json, std::string_view message, const nlohmann::json& fields);

}  // namespace rw::server::log
