#pragma once
// Grammars of the values NCCL reads from the environment (docs/rules.md: invalid-nccl-value). Pure
// functions.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rw::nccl {

// NCCL_SOCKET_IFNAME: comma list of interface-name prefixes; `=name` matches exactly; a leading
// `^` turns the whole list into an exclusion list.
struct SocketIfname {
  struct Item {
    std::string name;
    bool exact = false;
  };
  bool exclude = false;
  std::vector<Item> items;

  static SocketIfname Parse(std::string_view value);
  bool Selects(std::string_view interface) const;
  // An item matches `interface`, whether the list selects or excludes it: the value depends on
  // that interface's name.
  bool Names(std::string_view interface) const;
  // The interfaces among `interfaces` that NCCL would use.
  std::vector<std::string> SelectedAmong(const std::vector<std::string>& interfaces) const;
};

// NCCL_IB_HCA as NCCL's IB transport reads it: a leading `^` makes the list one of devices to
// leave out, then a leading `=` makes names match exactly (otherwise each is a prefix: `mlx5`
// selects mlx5_0 and mlx5_1, `mlx5_1` also mlx5_10), then a comma list of `name[:port]`.
// At most kMaxItems items are kept (NCCL itself keeps 32): a bound on what a value costs.
struct IbHca {
  static constexpr std::size_t kMaxItems = 64;
  struct Item {
    std::string name;
    std::optional<std::string> port;
  };
  bool exclude = false;
  bool exact = false;
  std::vector<Item> items;

  static IbHca Parse(std::string_view value);
  // The list selects particular devices (by their number), not a family of them: exact names,
  // or an item whose name ends in a digit after its last `_` (mlx5_0, bnxt_re1; mlx5 is a
  // family). An exclusion list never does.
  bool NamesParticularDevices() const;
};

// What NCCL itself makes of an integer variable: it calls strtoll(s, NULL, 0), so "true" is 0,
// "0x1" is 1 and "08" is 0.
long long NcclReadsInteger(std::string_view value);

// Result of checking a value against the grammar NCCL reads it with.
struct ValueCheck {
  bool valid = false;
  std::optional<long long> number;  // the decimal value when valid and numeric
  std::string problem;              // when invalid: what is wrong and what NCCL would really do
};

// NCCL_IB_DISABLE: a decimal integer; non-zero disables IB.
ValueCheck CheckIbDisable(std::string_view value);
// NCCL_IB_GID_INDEX: a decimal integer >= 0, or -1 (auto).
ValueCheck CheckGidIndex(std::string_view value);
// The path type names NCCL_NET_GDR_LEVEL may take (case-sensitive), across NCCL releases.
inline constexpr std::string_view kGdrLevelNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                      "PXB", "P2C", "PXN", "PHB", "SYS"};
// NCCL_NET_GDR_LEVEL: one of kGdrLevelNames, or anything starting with a digit (NCCL reads it
// with strtol as an old-style level, clamped to the highest).
ValueCheck CheckGdrLevel(std::string_view value);

// True when `value` is a plain decimal integer without sign tricks or leading zeros.
bool IsDecimalInteger(std::string_view value, bool allow_negative);

// Multus network selection annotation (k8s.v1.cni.cncf.io/networks and vendor keys).
struct NetworkAttachment {
  std::string ns;         // the item's namespace, or the pod's when the item names none
  std::string name;       // the NetworkAttachmentDefinition name
  std::string interface;  // explicit interface, or Multus' default net<N>
  bool explicit_interface = false;
  bool default_network = false;  // listed in the policy's defaultNetworks
  std::size_t item = 0;          // 0-based position in the annotation value
  // JSON form: the key, as the user spelt it, that gave the interface ("interface",
  // "interfaceRequest" or a case variant Go's encoding/json also matches); empty otherwise.
  std::string interface_key;
};

// The most items of a networks annotation read; more is an error of its own (docs/http.md#bounds).
inline constexpr std::size_t kMaxAttachments = 1024;

// Read as Multus reads it (pkg/k8sclient parsePodNetworkAnnotation and the JSON decoding of
// NetworkSelectionElement), then followed through what the annotation alone decides of the
// pod's CNI ADD: the NetworkAttachmentDefinition lookups, the default-route check and the
// interface names.
struct NetworksAnnotation {
  bool json_form = false;
  // Empty when Multus cannot read the value (it attaches nothing); otherwise every item.
  std::vector<NetworkAttachment> attachments;
  std::string error;  // non-empty when Multus would refuse it (the pod never gets its networks)
  // Where Multus refuses it: "parse" (the value cannot be read), "lookup" (a named network or
  // namespace no object can have), "gateway" (more than one default route per IP family) or
  // "interface" (an interface name libcni refuses or the pod already has: eth0, lo, an earlier
  // item's). Empty without an error.
  std::string error_stage;

  // `pod_ns` fills items without a namespace; `default_networks` are not counted for net<N>.
  static NetworksAnnotation Parse(std::string_view value, std::string_view pod_ns,
                                  const std::vector<std::string>& default_networks);
};

// Renders one attachment item in comma form: `[ns/]name[@interface]`; the namespace is written
// only when it differs from `pod_ns`.
std::string FormatAttachmentItem(const NetworkAttachment& a, std::string_view pod_ns);

// Assignments found in launcher arguments: `mpirun -x NAME=value`, `export NAME=value`
// (also inside a `bash -c` script). Best effort: used for warnings only.
struct LauncherAssignment {
  std::string name;
  std::string value;
  std::string origin;  // "-x" or "export"
  // The element of argv that holds it (a whole `bash -c` script is one element), so that a
  // finding can point at the command or args entry the user wrote.
  std::size_t argv_index = 0;
};
std::vector<LauncherAssignment> ParseLauncherArgs(const std::vector<std::string>& argv);

}  // namespace rw::nccl
