// Walks the sysfs infiniband class tree. Directory listings use std::filesystem with error
// codes; attribute files go through the FileReader seam so tests can inject EINVAL and EACCES
// (a root test process cannot make a file unreadable with chmod).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>

#include "rdma_webhook/gids/gid_table.h"

namespace rw::gids {
namespace {

namespace fs = std::filesystem;

// "mlx5_2" < "mlx5_10": runs of digits compare by value.
bool NaturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])) != 0) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])) != 0) ++ej;
      std::string_view ra = a.substr(i, ei - i);
      std::string_view rb = b.substr(j, ej - j);
      while (ra.size() > 1 && ra.front() == '0') ra.remove_prefix(1);
      while (rb.size() > 1 && rb.front() == '0') rb.remove_prefix(1);
      if (ra.size() != rb.size()) return ra.size() < rb.size();
      if (ra != rb) return ra < rb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::optional<int> ParseIndex(std::string_view name) {
  if (name.empty() || name.size() > 9) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (ec != std::errc{} || end != name.data() + name.size()) return std::nullopt;
  return value;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  return std::string(s);
}

bool IsEmptyGid(std::string_view gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

std::string Describe(const fs::path& file, int error) {
  return file.string() + ": " + std::strerror(error);
}

// Names of the entries of `dir`, or nothing (and a note) when it cannot be listed.
std::vector<std::string> ListNames(const fs::path& dir, std::vector<std::string>& notes) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    notes.push_back(dir.string() + ": " + ec.message());
    return names;
  }
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    names.push_back(it->path().filename().string());
  }
  if (ec) notes.push_back(dir.string() + ": " + ec.message());
  return names;
}

std::vector<int> ListIndexes(const fs::path& dir, std::vector<std::string>& notes) {
  std::vector<int> indexes;
  for (const std::string& name : ListNames(dir, notes)) {
    if (auto i = ParseIndex(name)) indexes.push_back(*i);
  }
  std::sort(indexes.begin(), indexes.end());
  return indexes;
}

// An optional attribute of a populated slot. EINVAL (no netdev, e.g. InfiniBand) and ENOENT
// (kernels without gid_attrs) mean "not known"; anything else is worth a note.
std::string ReadAttribute(const FileReader& read, const fs::path& file,
                          std::vector<std::string>& notes) {
  FileRead r = read(file);
  if (r.error == 0) return Trim(r.text);
  if (r.error != EINVAL && r.error != ENOENT) notes.push_back(Describe(file, r.error));
  return "";
}

void ReadPort(const FileReader& read, const std::string& device, int port, const fs::path& dir,
              GidTable& table) {
  PortInfo info{device, port, ""};
  const fs::path link_layer = dir / "link_layer";
  FileRead ll = read(link_layer);
  if (ll.error == 0) {
    info.link_layer = Trim(ll.text);
  } else {
    table.notes.push_back(Describe(link_layer, ll.error));
  }
  table.ports.push_back(info);

  const fs::path gids_dir = dir / "gids";
  std::error_code ec;
  if (!fs::is_directory(gids_dir, ec)) {
    table.notes.push_back(gids_dir.string() + ": no GID table");
    return;
  }
  for (int index : ListIndexes(gids_dir, table.notes)) {
    const std::string name = std::to_string(index);
    const fs::path gid_file = gids_dir / name;
    FileRead g = read(gid_file);
    if (g.error == EINVAL) continue;  // how sysfs reports an empty slot
    if (g.error != 0) {
      table.notes.push_back(Describe(gid_file, g.error));
      continue;
    }
    std::string gid = Trim(g.text);
    if (gid.empty() || IsEmptyGid(gid)) continue;
    GidEntry entry;
    entry.device = device;
    entry.port = port;
    entry.index = index;
    entry.ipv4 = MappedIpv4(gid);
    entry.gid = std::move(gid);
    entry.type = ReadAttribute(read, dir / "gid_attrs" / "types" / name, table.notes);
    entry.netdev = ReadAttribute(read, dir / "gid_attrs" / "ndevs" / name, table.notes);
    table.gids.push_back(std::move(entry));
  }
}

}  // namespace

FileRead ReadSysfsFile(const fs::path& file) {
  FileRead result;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.error = errno;
    return result;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.error = errno;
      result.text.clear();
      break;
    }
    if (n == 0) break;
    result.text.append(buffer, static_cast<std::size_t>(n));
    if (result.text.size() > 65536) break;  // sysfs attributes are one page at most
  }
  ::close(fd);
  return result;
}

GidTable ReadGidTable(const fs::path& sysfs_root) {
  return ReadGidTable(sysfs_root, ReadSysfsFile);
}

GidTable ReadGidTable(const fs::path& sysfs_root, const FileReader& read) {
  GidTable table;
  const fs::path class_dir = sysfs_root / "sys" / "class" / "infiniband";
  std::error_code ec;
  if (!fs::is_directory(class_dir, ec)) {
    table.notes.push_back(class_dir.string() + ": no RDMA devices (directory missing)");
    return table;
  }
  std::vector<std::string> devices = ListNames(class_dir, table.notes);
  std::sort(devices.begin(), devices.end(),
            [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  if (devices.empty()) table.notes.push_back(class_dir.string() + ": no RDMA devices");
  for (const std::string& device : devices) {
    const fs::path ports_dir = class_dir / device / "ports";
    if (!fs::is_directory(ports_dir, ec)) {
      table.notes.push_back(ports_dir.string() + ": no ports");
      continue;
    }
    for (int port : ListIndexes(ports_dir, table.notes)) {
      ReadPort(read, device, port, ports_dir / std::to_string(port), table);
    }
  }
  table.recommended = Recommend(table.gids, table.ports);
  return table;
}

}  // namespace rw::gids
