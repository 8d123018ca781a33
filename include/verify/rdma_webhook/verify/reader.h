#pragma once
// The streaming reader: log text in, a Verdict out (docs/verify.md). Bytes are fed in chunks of
// any size; memory stays bounded whatever the input's size (the bounds below), and time is
// linear in it. Pure: the caller reads files, stdin or kubectl.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "rdma_webhook/verify/verdict.h"

namespace rw::verify {

// A line longer than this is cut there (the rest up to its newline is skipped and counted in
// Verdict::lines_cut): NCCL's own lines are far shorter (its debug buffer is 2 KiB). The same
// bound holds for a line joined from the kubelet's partial CRI records (cri_join.h), so at most
// two such lines (stdout, stderr) are held at a time.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;
// Processes (host:pid) followed one by one; beyond this the verdict still counts every line,
// but further processes only feed the job-wide evidence (Verdict::processes_capped).
inline constexpr std::size_t kMaxProcesses = 4096;
// Proof lines kept per kind of evidence (the first ones, in input order), and each one's bound.
inline constexpr std::size_t kMaxProofsPerSignal = 3;
inline constexpr std::size_t kMaxProofBytes = 400;

struct Evidence;  // what has been read so far (src/verify/evidence.h)
class CriJoin;    // the kubelet's split lines put back together (src/verify/cri_join.h)

class Reader {
 public:
  Reader();
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Starts an input named `source` ("train.log", "pod/worker-0/trainer", "-"); line numbers
  // in proofs count from 1 in each source.
  void Begin(std::string source);
  // Any number of bytes of the current source; lines may span calls.
  void Feed(std::string_view bytes);
  // Ends the current source (a last line without a newline is read).
  void End();

  // One line, as if fed with a newline: Kubernetes events and other already split text.
  void FeedLine(std::string_view line);

  // The decision from everything read. The reader may be fed on afterwards.
  Verdict Decide() const;

 private:
  // `cut`: the line may not be whole (cut at kMaxLineBytes, or the source ended before its
  // newline).
  void Line(std::string_view line, bool cut = false);
  // A line to read, whole or joined from CRI parts, starting at line `line_no`.
  void Read(std::string_view line, std::size_t line_no, bool cut);
  std::unique_ptr<Evidence> evidence_;
  std::unique_ptr<CriJoin> join_;
  std::string pending_;   // a line not yet ended, at most kMaxLineBytes
  bool cutting_ = false;  // skipping the rest of an over-long line
};

// Convenience: the verdict of one text.
Verdict VerifyText(std::string_view text, std::string source = "-");

}  // namespace rw::verify
