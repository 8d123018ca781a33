// ib-disabled-with-rdma: NCCL_IB_DISABLE or NCCL_NET=Socket turns off the RDMA the pod claims.
// Its reference and example: ../docs/ib-disabled-with-rdma.yaml.
#include "../context.h"

namespace rw::rules {
namespace {

void IbDisabledWithRdma(const Context& ctx, const Rule& rule, Findings& out) {
  for (const auto& f : ctx.templates) {
    if (f.vf_claimed + f.shared_claimed == 0 && f.rdma_attachments == 0) continue;
    for (const auto* c : f.gpu) {
      const auto* v = KeepsNcclOffVerbs(*c);
      if (v == nullptr) continue;
      const bool net = v->name == "NCCL_NET";
      rule.ReportOnRdma(
          f, out, EnvPointer(*c, *v),
          "container '" + c->name + "' sets " + std::string(v->name) + "=" +
              std::string(*v->value) +
              " while the pod claims RDMA devices or attaches an RDMA network: NCCL " +
              (net ? "starts only its socket transport, never the IB one, so it " : std::string()) +
              "falls back to TCP sockets and the RDMA NIC sits idle.",
          net ? "remove NCCL_NET (or set it to IB), or drop the RDMA resources and network if "
                "TCP is intended"
              : "set NCCL_IB_DISABLE=0 (or remove it), or drop the RDMA resources and network "
                "if TCP is intended");
    }
  }
}

}  // namespace

namespace catalog {
extern const Rule ib_disabled_with_rdma;
const Rule ib_disabled_with_rdma = {.id = "ib-disabled-with-rdma",
                                    .severity = Severity::kError,
                                    .check = IbDisabledWithRdma,
                                    .position = 70};
}  // namespace catalog

}  // namespace rw::rules
