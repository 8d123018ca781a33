#pragma once
// `verify KIND/NAME`: a workload's pods found through owner references, every container's log
// and the pods' events, read through kubectl into the verify reader.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster.h"
#include "rdma_webhook/verify/reader.h"

namespace rw::cli {

struct ClusterTarget {
  std::string ref;  // "job/train", "pytorchjob/llama", "pod/worker-0"
  std::string ns;   // empty: kubectl's current namespace
  ClusterFlags cluster;
  bool previous = false;  // also the previous instance of restarted containers
};

struct ClusterRead {
  nlohmann::json workload;         // the object `ref` names, for the manifest tie
  std::vector<std::string> pods;   // the pods whose logs were read
  std::vector<std::string> notes;  // logs that could not be read, and why
};

// Throws KubectlError when the workload or its pods cannot be listed; a container whose log
// cannot be read is a note.
ClusterRead ReadCluster(const ClusterTarget& target, verify::Reader& reader);

// True for an argument that names a workload ("job/NAME") rather than a file: it has one '/',
// no file of that name exists, and the part before the slash is a resource name.
bool LooksLikeWorkload(const std::string& arg);

}  // namespace rw::cli
