// The Multus annotation parser and the NCCL grammars, on the same value.
//
// Invariants:
//  - no parser throws or reads out of bounds (ASan, UBSan);
//  - NetworksAnnotation: an error has a stage (parse, lookup, gateway, interface) and a stage
//    has an error; a parse error attaches nothing; attachments are numbered 0..n-1 and every
//    attachment has a name and an interface;
//  - the Check* grammars: valid <=> no problem; a valid numeric value is a decimal integer and
//    is what NCCL's strtoll reads;
//  - SocketIfname selects among a fixed list a sub-list of it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "rdma_webhook/nccl/grammar.h"

namespace {

using rw::fuzz::Check;
namespace nccl = rw::nccl;

void CheckValue(const nccl::ValueCheck& c, std::string_view value) {
  Check(c.valid == c.problem.empty(), "valid and problem disagree", value);
  if (c.valid && c.number) {
    Check(nccl::IsDecimalInteger(value, true), "a valid number that is no decimal integer", value);
    Check(nccl::NcclReadsInteger(value) == *c.number, "NCCL reads another number", value);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);

  const auto a = nccl::NetworksAnnotation::Parse(value, "team", {"default-net"});
  static const std::vector<std::string> kStages = {"parse", "lookup", "gateway", "interface"};
  Check(a.error.empty() == a.error_stage.empty(), "error and error_stage disagree", a.error);
  if (!a.error_stage.empty()) {
    bool known = false;
    for (const auto& s : kStages) known = known || s == a.error_stage;
    Check(known, "an unknown error stage", a.error_stage);
  }
  if (a.error_stage == "parse") Check(a.attachments.empty(), "a parse error attaches networks");
  for (std::size_t i = 0; i < a.attachments.size(); ++i) {
    const auto& at = a.attachments[i];
    Check(at.item == i, "attachments out of order");
    Check(!at.name.empty() || !a.error.empty(), "an attachment without a name", value);
    (void)nccl::FormatAttachmentItem(at, "team");
  }

  const auto ifname = nccl::SocketIfname::Parse(value);
  static const std::vector<std::string> kInterfaces = {"eth0", "eth1", "ib0",
                                                       "net1", "lo",   "bond0"};
  const auto selected = ifname.SelectedAmong(kInterfaces);
  Check(selected.size() <= kInterfaces.size(), "selected more interfaces than there are");
  for (const auto& s : selected) Check(ifname.Selects(s), "SelectedAmong and Selects disagree", s);

  (void)nccl::NcclReadsInteger(value);
  CheckValue(nccl::CheckIbDisable(value), value);
  CheckValue(nccl::CheckGidIndex(value), value);
  CheckValue(nccl::CheckGdrLevel(value), value);

  // Launcher arguments: the value split at NUL bytes is an argv.
  std::vector<std::string> argv;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= value.size(); ++i) {
    if (i == value.size() || value[i] == '\0') {
      argv.emplace_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  for (const auto& assignment : nccl::ParseLauncherArgs(argv)) {
    Check(!assignment.name.empty(), "an assignment without a name");
    Check(assignment.origin == "-x" || assignment.origin == "export", "an unknown origin",
          assignment.origin);
  }
  return 0;
}
