#include "cri_join.h"

#include "rdma_webhook/verify/reader.h"
#include "rdma_webhook/verify/records.h"

namespace rw::verify {

void CriJoin::Release() {
  if (handed_ < 0) return;
  Open& o = open_[static_cast<std::size_t>(handed_)];
  o.text.clear();
  o.active = o.cut = o.over_bound = false;
  handed_ = -1;
}

void CriJoin::Append(Open& o, std::string_view part, bool cut) {
  o.cut = o.cut || cut;
  if (o.over_bound) return;  // skipping up to the `F` record
  if (o.text.size() + part.size() > kMaxLineBytes) {
    o.text.append(part.substr(0, kMaxLineBytes - o.text.size()));
    o.over_bound = o.cut = true;
    return;
  }
  o.text.append(part);
}

bool CriJoin::Offer(std::string_view line, std::size_t line_no, bool cut, Piece& out) {
  Release();
  const CriRecord c = ReadCriRecord(line);
  Open* o = c.prefix > 0 ? &open_[static_cast<std::size_t>(c.stream)] : nullptr;
  if (!o || (!o->active && !c.partial)) {  // the common case: a whole line, read as it is
    out = {line, line_no, cut, false};
    return true;
  }
  if (!o->active) {  // the first part keeps its CRI prefix, so the line reads like any record
    o->active = true;
    o->line_no = line_no;
    Append(*o, line, cut);
  } else {
    Append(*o, line.substr(c.prefix), cut);
  }
  if (c.partial) return false;
  out = {o->text, o->line_no, o->cut, o->over_bound};
  handed_ = c.stream;
  return true;
}

bool CriJoin::TakeOpen(Piece& out) {
  Release();
  // The older open line first, so proofs keep the order of the input.
  int pick = -1;
  for (int s = 0; s < 2; ++s) {
    const Open& o = open_[static_cast<std::size_t>(s)];
    if (o.active && (pick < 0 || o.line_no < open_[static_cast<std::size_t>(pick)].line_no))
      pick = s;
  }
  if (pick < 0) return false;
  Open& o = open_[static_cast<std::size_t>(pick)];
  out = {o.text, o.line_no, true, o.over_bound};  // the source ended before the `F` record
  handed_ = pick;
  return true;
}

}  // namespace rw::verify
