#include "fields.h"

namespace rw::policy {

void Fail(const std::string& path, const std::string& message) { throw PolicyError(path, message); }

bool ValidInterface(std::string_view s) {
  if (s.empty() || s.size() > 15) return false;  // IFNAMSIZ
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c != '/' && c != '@' && c != ',' && c != ' ' && c != ':' && c > 32 && c < 127;
  });
}

}  // namespace rw::policy
