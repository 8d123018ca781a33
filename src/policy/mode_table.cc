// The table of modes: one row per mode (modes/). What names a mode, gives its path or reads its
// section reads this table, so a new mode is a new row, not a new case in several switches.
#include "modes/mode.h"

namespace rw::policy {

namespace modes {

const std::array<const Row*, 4>& Rows() {
  static const std::array<const Row*, 4> kRows{&HostNetwork(), &Sriov(), &Shared(), &Tcp()};
  return kRows;
}

const Row* RowOf(Mode mode) {
  for (const Row* row : Rows())
    if (row->mode == mode) return row;
  return nullptr;
}

}  // namespace modes

std::string_view ToString(Mode m) {
  const modes::Row* row = modes::RowOf(m);
  return row != nullptr ? row->name : "off";
}

Path ModePath(Mode m) {
  const modes::Row* row = modes::RowOf(m);
  return row != nullptr ? row->path : Path::kNone;
}

}  // namespace rw::policy
