#include <cctype>
#include <cstddef>
#include <string_view>

#include "rdma_webhook/verify/records.h"

namespace rw::verify {
namespace {

using std::string_view;

bool Digit(char c) { return c >= '0' && c <= '9'; }

// Digits at the front of `s` as an int (at most 9 of them), -1 when there are none.
int LeadingInt(string_view s) {
  int v = 0;
  std::size_t i = 0;
  for (; i < s.size() && i < 9 && Digit(s[i]); ++i) v = v * 10 + (s[i] - '0');
  return i == 0 ? -1 : v;
}

// kubectl --timestamps: 2024-11-05T08:41:17.204118837Z (or +hh:mm) and one space.
std::size_t Rfc3339(string_view s) {
  if (s.size() < 21 || !Digit(s[0]) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':')
    return 0;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && Digit(s[i]); ++i) {
    }
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i + 6 <= s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    i += 6;
  } else {
    return 0;
  }
  return i < s.size() && s[i] == ' ' ? i + 1 : 0;
}

// The CRI log format the kubelet writes under /var/log/pods (and log shippers forward as is):
// after the RFC 3339 time, the stream and a tag, `stdout F ` (a full line) or `stderr P ` (a part
// of a longer line, which kubelet splits at 16 KiB; the reader joins the parts before it gets
// here, see cri_join.h).
std::size_t CriStream(string_view s) {
  if (!(s.starts_with("stdout ") || s.starts_with("stderr ")) || s.size() < 9) return 0;
  return (s[7] == 'F' || s[7] == 'P') && s[8] == ' ' ? 9 : 0;
}

// `[...]` at the front followed by `<stdout>:`/`<stderr>:`, `:` or ` `; sets the rank of
// mpirun's `[1,N]` and torchrun's `[rankN]`.
std::size_t Bracketed(string_view s, int& rank) {
  if (s.empty() || s[0] != '[') return 0;
  const auto close = s.find(']');
  if (close == string_view::npos || close > 80) return 0;
  const string_view inside = s.substr(1, close - 1);
  if (inside.empty() || inside.find(' ') != string_view::npos) return 0;
  string_view rest = s.substr(close + 1);
  std::size_t used = close + 1;
  if (rest.starts_with("<stdout>:") || rest.starts_with("<stderr>:")) {
    used += 9;
  } else if (rest.starts_with(":")) {
    used += 1;
  } else if (rest.starts_with(" ") && (inside.starts_with("pod/") || LeadingInt(inside) >= 0)) {
    used += 1;  // kubectl --prefix, slurm `[N] `
  } else {
    return 0;
  }
  if (const auto comma = inside.find(','); comma != string_view::npos) {
    if (const int r = LeadingInt(inside.substr(comma + 1)); r >= 0) rank = r;
  } else if (inside.starts_with("rank")) {
    if (const int r = LeadingInt(inside.substr(4)); r >= 0) rank = r;
  }
  return used;
}

// Ray: `(RayTrainWorker pid=4411, ip=10.0.0.1) `.
std::size_t RayTag(string_view s) {
  if (s.empty() || s[0] != '(') return 0;
  const auto close = s.find(") ");
  if (close == string_view::npos || close > 160) return 0;
  return s.substr(0, close).find("pid=") == string_view::npos ? 0 : close + 2;
}

// Control characters end a host too: a progress bar redrawn with '\r' and no newline puts
// NCCL's record after the last '\r' of one long line.
bool HostChar(char c) {
  return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f && c != ' ' && c != ':' && c != ']' &&
         c != '>' && c != ')' && c != '[';
}

// The record header that ends at `end` (the position of "NCCL INFO"/"NCCL WARN"): sets host,
// pid, cudaDev and, for WARN, file:line; returns where the header starts, or `end` when there
// is none (a bare "NCCL WARN" as NCCL 2.2 or a framework prints it).
std::size_t Header(string_view line, std::size_t end, Level level, Record& r) {
  // The `[dev] ` nearest before `end`: right before it for INFO, before file:line for WARN.
  std::size_t close = string_view::npos;
  if (level == Level::kInfo) {
    if (end >= 2 && line[end - 1] == ' ' && line[end - 2] == ']') close = end - 2;
  } else {
    const std::size_t from = end > 240 ? end - 240 : 0;
    const auto found = line.substr(from, end - from).rfind("] ");
    if (found != string_view::npos) close = from + found;
  }
  if (close == string_view::npos) return end;
  std::size_t open = close;
  while (open > 0 && Digit(line[open - 1])) --open;
  if (open == close || open == 0 || line[open - 1] != '[') return end;
  r.cuda_dev = LeadingInt(line.substr(open, close - open));
  if (level == Level::kWarn) {
    string_view where = line.substr(close + 2, end - close - 2);
    while (!where.empty() && where.back() == ' ') where.remove_suffix(1);
    r.where = where;
  }
  // host:pid:tid before " [".
  std::size_t i = open - 1;  // at '['
  if (i == 0 || line[i - 1] != ' ') return end;
  i -= 1;
  const std::size_t tid_end = i;
  while (i > 0 && Digit(line[i - 1])) --i;
  if (i == tid_end || i == 0 || line[i - 1] != ':') return end;
  --i;
  const std::size_t pid_end = i;
  while (i > 0 && Digit(line[i - 1])) --i;
  if (i == pid_end || i == 0 || line[i - 1] != ':') return end;
  r.pid = line.substr(i, pid_end - i);
  --i;
  const std::size_t host_end = i;
  while (i > 0 && HostChar(line[i - 1])) --i;
  if (i == host_end) return end;
  r.host = line.substr(i, host_end - i);
  return i;
}

}  // namespace

CriRecord ReadCriRecord(string_view raw) {
  CriRecord c;
  const std::size_t time = Rfc3339(raw);
  if (time == 0) return c;
  const std::size_t tag = CriStream(raw.substr(time));
  if (tag == 0) return c;
  c.prefix = time + tag;
  c.stream = raw[time + 3] == 'e' ? 1 : 0;  // "stdout"/"stderr": the fourth letter differs
  c.partial = raw[time + 7] == 'P';
  return c;
}

Line ReadLine(string_view raw) {
  Line out;
  string_view s = raw;
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  for (int round = 0; round < 8; ++round) {
    std::size_t n = Rfc3339(s);
    if (n > 0) n += CriStream(s.substr(n));
    if (n == 0) n = Bracketed(s, out.launcher_rank);
    if (n == 0) n = RayTag(s);
    if (n == 0) break;
    s.remove_prefix(n);
  }
  out.text = s;
  // Every "NCCL INFO"/"NCCL WARN" in the line; a record runs to the next one's header.
  std::size_t pos = 0;
  struct Found {
    std::size_t header, body;
    Record r;
  };
  Found prev{};
  bool have_prev = false;
  while (true) {
    const auto info = s.find("NCCL INFO", pos), warn = s.find("NCCL WARN", pos);
    const auto at = info < warn ? info : warn;
    if (at == string_view::npos) break;
    Found f{};
    f.r.level = at == info ? Level::kInfo : Level::kWarn;
    f.header = Header(s, at, f.r.level, f.r);
    f.body = at + 9;
    if (f.body < s.size() && s[f.body] == ' ') ++f.body;
    if (have_prev) {
      prev.r.message = s.substr(prev.body, f.header > prev.body ? f.header - prev.body : 0);
      out.records.push_back(prev.r);
    }
    prev = f;
    have_prev = true;
    pos = at + 9;
  }
  if (have_prev) {
    prev.r.message = s.substr(std::min(prev.body, s.size()));
    out.records.push_back(prev.r);
  } else if (const auto warn22 = s.find(" WARN "); warn22 != string_view::npos) {
    // NCCL 2.2 printed `host:pid:tid [dev] file:line WARN msg`, without "NCCL".
    Record r;
    r.level = Level::kWarn;
    if (Header(s, warn22 + 1, Level::kWarn, r) != warn22 + 1 && !r.where.empty()) {
      r.message = s.substr(warn22 + 6);
      out.records.push_back(r);
    }
  }
  for (auto& r : out.records)
    while (!r.message.empty() && (r.message.back() == ' ' || r.message.back() == '\t'))
      r.message.remove_suffix(1);
  return out;
}

}  // namespace rw::verify
