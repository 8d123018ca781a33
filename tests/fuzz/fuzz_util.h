#pragma once
// Helpers shared by the libFuzzer targets: a failed invariant aborts with a message, so libFuzzer
// records the input as a crash.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace rw::fuzz {

[[noreturn]] inline void Fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

inline void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) Fail(what, detail);
}

// RFC 4648 base64 with padding; the webhook writes nothing else.
inline std::string Base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  Check(in.size() % 4 == 0, "base64 length is not a multiple of 4", in);
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (const char c : in) {
    if (c == '=') break;
    const int v = value(c);
    Check(v >= 0, "base64 holds a foreign character", in);
    bits = (bits << 6) | static_cast<unsigned>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFFu);
    }
  }
  return out;
}

}  // namespace rw::fuzz
