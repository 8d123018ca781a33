// mode: tcp. It has no section: the NCCL variables it sets are fixed.
#include "mode.h"

namespace rw::policy::modes {

extern const Row tcp;
constexpr Row tcp = {.mode = Mode::kTcp,
                     .name = "tcp",
                     .position = 40,
                     .path = Path::kTcp,
                     .read = nullptr,
                     .require = nullptr,
                     .section_schema = nullptr};

}  // namespace rw::policy::modes
