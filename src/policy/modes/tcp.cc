// mode: tcp. It has no section: the NCCL variables it sets are fixed.
#include "mode.h"

namespace rw::policy::modes {

const Row& Tcp() {
  static constexpr Row kRow{Mode::kTcp, "tcp", Path::kTcp, nullptr, nullptr, nullptr};
  return kRow;
}

}  // namespace rw::policy::modes
