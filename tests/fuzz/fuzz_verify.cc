// The verify reader (docs/verify.md): log bytes in, a verdict out.
//
// Invariants:
//  - nothing throws or reads out of bounds (ASan, UBSan), and the JSON of the verdict dumps
//    (bytes that are not UTF-8 replaced, as the command prints them);
//  - the reader streams: the verdict does not depend on how the bytes are split into Feed calls
//    (the first byte picks a chunk size; a line spanning calls, a CRI record split across them);
//  - the bounds hold: no more lines cut than lines, no proof over kMaxProofBytes, no proof line
//    beyond the lines read, the number of processes at most kMaxProcesses.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "rdma_webhook/verify/reader.h"

namespace {

using rw::fuzz::Check;
namespace verify = rw::verify;

std::string Dump(const verify::Verdict& v) {
  return verify::ToJson(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 61;  // 1..61 bytes a call
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const verify::Verdict whole = verify::VerifyText(text, "fuzz.log");
  const std::string json = Dump(whole);

  verify::Reader r;
  r.Begin("fuzz.log");
  for (std::size_t at = 0; at < text.size(); at += chunk) r.Feed(text.substr(at, chunk));
  r.End();
  const verify::Verdict split = r.Decide();
  Check(Dump(split) == json, "the verdict depends on how the bytes were fed", json);

  Check(whole.lines_cut <= whole.lines, "more lines cut than lines read", json);
  Check(whole.processes.size() <= verify::kMaxProcesses, "more processes than the bound", json);
  for (const auto& p : whole.proofs) {
    Check(p.text.size() <= verify::kMaxProofBytes, "a proof over its bound", p.text);
    Check(p.line >= 1 && p.line <= whole.lines, "a proof outside the lines read", p.text);
  }
  return 0;
}
