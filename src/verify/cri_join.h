#pragma once
// The kubelet's CRI log files (and log shippers that forward them as they are) split a line
// longer than 16 KiB into records tagged `P` (partial) followed by one tagged `F` (the end), each
// with its own time and stream: `<RFC 3339> stdout P <part>`. NCCL's own lines are short, but a
// progress bar redrawn with '\r' and no newline, or records glued by processes sharing a stream,
// make such lines, and the split may fall inside an NCCL record. CriJoin puts the parts of a line
// back together before the line is read, one line per stream (stdout and stderr records
// interleave). Pure: no I/O.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace rw::verify {

// A joined line is bounded like any line (kMaxLineBytes): past the bound the parts are skipped
// up to the `F` record, and the line is read as cut.
class CriJoin {
 public:
  struct Piece {
    std::string_view text;    // what to read: the line, or the joined line (the first record's
                              // CRI prefix, then every part's text)
    std::size_t line_no = 0;  // where it starts: the line of its first record
    bool cut = false;         // may not be whole: over the bound, or a part was cut
    bool over_bound = false;  // this joined line hit the bound (count it once as cut)
  };

  // One physical line of the source (its number, and whether the line reader cut it). Returns
  // true with `out` set when there is a line to read now; false when the line is a part held
  // back. `out.text` stays valid up to the next call.
  bool Offer(std::string_view line, std::size_t line_no, bool cut, Piece& out);
  // A line still open when its source ends (no `F` record came): returns true with `out` set,
  // once per open line; then false.
  bool TakeOpen(Piece& out);

 private:
  struct Open {
    std::string text;
    std::size_t line_no = 0;
    bool active = false, cut = false, over_bound = false;
  };
  void Release();
  void Append(Open& o, std::string_view part, bool cut);
  std::array<Open, 2> open_{};  // stdout, stderr
  int handed_ = -1;             // the stream whose joined line `Offer` returned last
};

}  // namespace rw::verify
