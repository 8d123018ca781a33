#pragma once
// The line grammar of NCCL's debug output (docs/verify.md#what-is-read): launcher and collector
// prefixes stripped, then every `NCCL INFO` / `NCCL WARN` record found anywhere in the line, so
// that lines glued together by several processes writing one stream still give each record.
// Pure: no I/O.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rw::verify {

enum class Level { kInfo, kWarn };

// One NCCL record: `host:pid:tid [cudaDev] NCCL INFO msg` or
// `host:pid:tid [cudaDev] file:line NCCL WARN msg` (2.26+ may put `[date time] ` before host).
struct Record {
  Level level = Level::kInfo;
  std::string_view host;     // gethostname() cut at the first '.': the pod name in Kubernetes
  std::string_view pid;      // digits
  int cuda_dev = -1;         // the local CUDA device index, not the rank
  std::string_view where;    // WARN only: NCCL's (or a plugin's) source file:line
  std::string_view message;  // after "NCCL INFO " / "NCCL WARN ", up to the next record
};

// What a line says once prefixes are gone.
struct Line {
  std::string_view text;        // the line without launcher/collector prefixes
  int launcher_rank = -1;       // mpirun `[1,N]<stdout>:`, torchrun `[rankN]:`, slurm `N: `
  std::vector<Record> records;  // NCCL records in the line, in order
};

// Strips, repeatedly, the prefixes launchers and log collectors put before a line: kubectl
// `--timestamps` (RFC 3339, with the CRI file format's `stdout F ` after it), kubectl
// `--prefix` (`[pod/NAME/CONTAINER] `), mpirun `[1,N]<stdout>:` / `<stderr>:`, torchrun
// `[rankN]:` and `[defaultN]:`, Ray `(Name pid=N, ip=A) `, launcher tags `[trainer3]:`. The
// views point into `raw`.
Line ReadLine(std::string_view raw);

// The kubelet's CRI log record at the front of a raw line: `<RFC 3339> <stdout|stderr> <P|F> `.
// `prefix` is its length (0: not a CRI record); `stream` 0 is stdout, 1 stderr; `partial` is the
// `P` tag: the kubelet split a longer line there, and the rest follows in later records of the
// same stream, up to one tagged `F`.
struct CriRecord {
  std::size_t prefix = 0;
  int stream = 0;
  bool partial = false;
};
CriRecord ReadCriRecord(std::string_view raw);

}  // namespace rw::verify
