#include "rdma_webhook/verify/reader.h"

#include <utility>

#include "cri_join.h"
#include "evidence.h"

namespace rw::verify {

Reader::Reader() : evidence_(std::make_unique<Evidence>()), join_(std::make_unique<CriJoin>()) {}
Reader::~Reader() = default;

void Reader::Begin(std::string source) {
  End();
  evidence_->source = std::move(source);
  evidence_->line_no = 0;
  evidence_->after_last_error = false;
}

void Reader::Line(std::string_view line, bool cut) {
  ++evidence_->line_no;
  ++evidence_->lines;
  // CRLF (a log saved on Windows): the carriage return is not part of what a proof quotes.
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  CriJoin::Piece piece;
  if (!join_->Offer(line, evidence_->line_no, cut, piece)) return;  // a part: more to come
  if (piece.over_bound) ++evidence_->lines_cut;
  Read(piece.text, piece.line_no, piece.cut);
}

void Reader::Read(std::string_view line, std::size_t line_no, bool cut) {
  // Proofs of a joined line point to its first record; the count of lines read goes on.
  const std::size_t here = evidence_->line_no;
  evidence_->line_no = line_no;
  evidence_->raw = line;
  evidence_->line_cut = cut;
  Observe(*evidence_, ReadLine(line));
  evidence_->raw = {};
  evidence_->line_cut = false;
  evidence_->line_no = here;
}

void Reader::FeedLine(std::string_view line) { Line(line); }

void Reader::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    if (cutting_) {
      // The rest of an over-long line: skipped up to its newline.
    } else if (pending_.size() + part.size() > kMaxLineBytes) {
      pending_.append(part.substr(0, kMaxLineBytes - pending_.size()));
      cutting_ = true;
      ++evidence_->lines_cut;
    } else if (nl != std::string_view::npos && pending_.empty()) {
      Line(part);  // the common case: no copy
    } else {
      pending_.append(part);
    }
    if (nl == std::string_view::npos) return;
    if (cutting_ || !pending_.empty()) Line(pending_, cutting_);
    pending_.clear();
    cutting_ = false;
    bytes.remove_prefix(nl + 1);
  }
}

void Reader::End() {
  // A last line without its newline may have been cut by the collector (a log rotated or
  // copied while it was written): read, but flagged, so a name cut short is not believed.
  if (!pending_.empty()) Line(pending_, true);
  pending_.clear();
  cutting_ = false;
  // A line the kubelet split whose `F` record never came (the file was rotated or copied
  // mid-line): read as cut, like a last line without its newline.
  CriJoin::Piece piece;
  while (join_->TakeOpen(piece)) {
    if (piece.over_bound) ++evidence_->lines_cut;
    Read(piece.text, piece.line_no, true);
  }
}

Verdict Reader::Decide() const { return DecideEvidence(*evidence_); }

Verdict VerifyText(std::string_view text, std::string source) {
  Reader r;
  r.Begin(std::move(source));
  r.Feed(text);
  r.End();
  return r.Decide();
}

}  // namespace rw::verify
