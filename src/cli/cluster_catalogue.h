#pragma once
// The catalogue the CLI judges with (docs/dra.md): the cluster objects among its inputs (a
// ResourceClaimTemplate in the same file or directory as the job), over those kubectl lists
// with --cluster and in `audit`.
#include <optional>
#include <string>
#include <vector>

#include "cluster.h"
#include "common.h"
#include "inputs.h"
#include "rdma_webhook/catalogue/catalogue.h"

namespace rw::cli {

// The objects of the catalogue's kinds among the inputs, read in a pass of their own before
// the workloads are judged (so a template after its job counts). Documents that cannot be read
// are skipped here: the pass that judges reports them. Knows no kind: the inputs are never the
// whole cluster, so what they lack is unknown, not absent.
catalogue::Catalogue CatalogueOfInputs(const std::vector<std::string>& inputs,
                                       Directories directories, const std::string& default_ns);

// Where kubectl lists the catalogue's namespaced kinds.
struct CatalogueScope {
  bool all_namespaces = false;  // only --all-namespaces
  std::string ns;               // else this namespace ("": kubectl's current one)
  // check/mutate: --all-namespaces first, `ns` when listing all namespaces is forbidden.
  bool all_first = false;
};

struct ClusterCatalogue {
  catalogue::Catalogue catalogue;
  std::vector<std::string> warnings;  // a kind that could not be listed: its objects are unknown
};

// Lists every catalogue kind the cluster serves (`served`, from kubectl api-resources) with
// kubectl get. A kind kubectl cannot list (RBAC, an API down) is a warning and stays unknown; a
// kind the cluster does not serve is unknown too. Each kind's objects are bounded by
// catalogue::Catalogue::kMaxObjects and kubectl's output by the input cap (64 MiB).
ClusterCatalogue ReadClusterCatalogue(const ClusterFlags& cluster,
                                      const std::vector<ApiResource>& served,
                                      const CatalogueScope& scope);

// The catalogue of check and mutate: the inputs' objects, over the cluster's with --cluster.
// Prints kubectl's warnings on stderr; throws (KubectlError, std::runtime_error) when --cluster
// is given and the cluster cannot be asked at all.
catalogue::Catalogue ManifestCatalogue(const ManifestFlags& flags);

// ManifestCatalogue, or nullopt after printing the error on stderr.
std::optional<catalogue::Catalogue> ManifestCatalogueOrReport(const ManifestFlags& flags);

}  // namespace rw::cli
