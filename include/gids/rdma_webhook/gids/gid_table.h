#pragma once
// The RoCE/IB GID tables of a node, read from sysfs (docs/cli.md#gids), and the GID index
// NCCL should use per Ethernet port. Reading never throws: what cannot be read becomes a note.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::gids {

// One populated GID slot of a port.
struct GidEntry {
  std::string device;  // e.g. mlx5_0
  int port = 0;
  int index = 0;
  std::string gid;     // as sysfs prints it: eight groups of four hex digits
  std::string ipv4;    // dotted quad when the GID is IPv4-mapped, else ""
  std::string type;    // "RoCE v2", "IB/RoCE v1", or "" when unknown
  std::string netdev;  // "" when the slot has none (InfiniBand) or it cannot be read
};

struct PortInfo {
  std::string device;
  int port = 0;
  std::string link_layer;  // "Ethernet" (RoCE), "InfiniBand", or "" when unreadable
};

// The GID index NCCL_IB_GID_INDEX should take on one Ethernet port.
struct Recommendation {
  std::string device;
  int port = 0;
  int index = 0;
};

struct GidTable {
  std::vector<GidEntry> gids;  // sorted by device (numerically), port, index
  std::vector<PortInfo> ports;
  std::vector<Recommendation> recommended;
  std::vector<std::string> notes;  // unreadable files, missing tree: for stderr
};

// The result of reading one sysfs attribute: its text, or the errno of the failure.
struct FileRead {
  std::string text;
  int error = 0;
};
using FileReader = std::function<FileRead(const std::filesystem::path&)>;

// Reads a file the way `cat` does (open + read), keeping the errno: sysfs reports an empty GID
// slot as EINVAL on read, which must be told apart from a real failure.
FileRead ReadSysfsFile(const std::filesystem::path& file);

// Reads <sysfs_root>/sys/class/infiniband/<dev>/ports/<port>/{gids/<i>, gid_attrs/types/<i>,
// gid_attrs/ndevs/<i>, link_layer}. Empty slots (all-zero GID, or EINVAL) are skipped. A missing
// root or no devices gives empty lists and a note. `read` is the I/O seam for tests.
GidTable ReadGidTable(const std::filesystem::path& sysfs_root);
GidTable ReadGidTable(const std::filesystem::path& sysfs_root, const FileReader& read);

// Per Ethernet port (in the order of `ports`): the lowest index whose type is RoCE v2 and whose
// GID is IPv4-mapped. Ports without such a GID, and InfiniBand ports, get none.
std::vector<Recommendation> Recommend(const std::vector<GidEntry>& gids,
                                      const std::vector<PortInfo>& ports);

// The dotted quad of an IPv4-mapped GID (::ffff:a.b.c.d), or "".
std::string MappedIpv4(const std::string& gid);

// "v1" for "IB/RoCE v1", "v2" for "RoCE v2", else "".
std::string VersionColumn(const std::string& type);

// Columns of show_gids (DEV PORT INDEX GID IPv4 VER NETDEV), then the recommended index of each
// Ethernet port ("none" when it has no RoCE v2 IPv4 GID).
std::string FormatText(const GidTable& table);

// {"gids":[{"device","port","index","gid","ipv4","type","netdev"}],
//  "recommended":[{"device","port","index"}]}
nlohmann::json ToJson(const GidTable& table);

}  // namespace rw::gids
