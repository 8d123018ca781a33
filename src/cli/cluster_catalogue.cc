#include "cluster_catalogue.h"

#include <algorithm>
#include <iostream>

#include "kubectl.h"

namespace rw::cli {
namespace {

using nlohmann::json;

bool IsCatalogueObject(const json& object) {
  if (!object.is_object()) return false;
  const auto api_version = object.find("apiVersion");
  const auto kind = object.find("kind");
  if (api_version == object.end() || kind == object.end() || !api_version->is_string() ||
      !kind->is_string())
    return false;
  return catalogue::FindCatalogueKind(
             catalogue::GroupOf(api_version->get_ref<const std::string&>()),
             kind->get_ref<const std::string&>()) != nullptr;
}

bool Serves(const std::vector<ApiResource>& served, const catalogue::CatalogueKind& k) {
  return std::any_of(served.begin(), served.end(),
                     [&](const ApiResource& r) { return r.group == k.group && r.kind == k.kind; });
}

// One `kubectl get` of a kind, its objects appended to `objects`. Throws KubectlError when
// kubectl fails, std::runtime_error when its output cannot be read.
void ListKind(const ClusterFlags& cluster, const catalogue::CatalogueKind& k,
              const std::vector<std::string>& where, std::vector<json>& objects) {
  auto args = cluster.Args();
  args.insert(args.end(),
              {"get", std::string(k.resource) + "." + std::string(k.group), "-o", "json"});
  args.insert(args.end(), where.begin(), where.end());
  KubectlRun run(args);
  const auto pull = [&run](char* buffer, std::size_t capacity) {
    return run.Read(buffer, capacity);
  };
  std::vector<json> listed;
  std::string unreadable;
  ForEachDocumentOf(run.command(), pull, /*json_list=*/true, codec::Positions::kSkip,
                    [&](InputDocument&& doc) {
                      if (!doc.object) {
                        if (unreadable.empty()) unreadable = doc.source + ": " + doc.error;
                        return;
                      }
                      if (IsCatalogueObject(*doc.object)) listed.push_back(std::move(*doc.object));
                    });
  run.Finish();
  if (!unreadable.empty()) throw std::runtime_error(unreadable);
  objects.insert(objects.end(), std::make_move_iterator(listed.begin()),
                 std::make_move_iterator(listed.end()));
}

bool Forbidden(const std::exception& e) {
  return std::string(e.what()).find("Forbidden") != std::string::npos;
}

}  // namespace

catalogue::Catalogue CatalogueOfInputs(const std::vector<std::string>& inputs,
                                       Directories directories, const std::string& default_ns) {
  std::vector<json> objects;
  ForEachInput(
      inputs, codec::Positions::kSkip,
      [&](InputDocument&& doc) {
        if (doc.object && IsCatalogueObject(*doc.object)) objects.push_back(std::move(*doc.object));
      },
      false, directories);
  return catalogue::Catalogue::From(objects, catalogue::Source::kInputs, {}, default_ns);
}

ClusterCatalogue ReadClusterCatalogue(const ClusterFlags& cluster,
                                      const std::vector<ApiResource>& served,
                                      const CatalogueScope& scope) {
  ClusterCatalogue out;
  std::vector<json> objects;
  std::vector<catalogue::Listing> listed;
  for (const auto& k : catalogue::CatalogueKinds()) {
    if (!Serves(served, k)) continue;
    const std::string name = std::string(k.resource) + "." + std::string(k.group);
    catalogue::Listing listing{std::string(k.group), std::string(k.kind), std::nullopt};
    // One namespace: kubectl's current one has no name here, so its objects are read but
    // nothing is known to be missing from it.
    const auto list_namespace = [&] {
      ListKind(cluster, k,
               scope.ns.empty() ? std::vector<std::string>{}
                                : std::vector<std::string>{"--namespace", scope.ns},
               objects);
      listing.namespaces = std::vector<std::string>{};
      if (!scope.ns.empty()) listing.namespaces->push_back(scope.ns);
    };
    try {
      if (!k.namespaced) {
        ListKind(cluster, k, {}, objects);
      } else if (scope.all_namespaces || scope.all_first) {
        try {
          ListKind(cluster, k, {"--all-namespaces"}, objects);
        } catch (const KubectlError& e) {
          if (scope.all_namespaces || !Forbidden(e)) throw;
          list_namespace();  // rights in one namespace only: what it holds is still known
        }
      } else {
        list_namespace();
      }
      listed.push_back(std::move(listing));
    } catch (const std::exception& e) {
      out.warnings.push_back("cannot list " + name + " (" + e.what() +
                             "): what the workloads name of it is unknown");
    }
  }
  out.catalogue =
      catalogue::Catalogue::From(objects, catalogue::Source::kCluster, std::move(listed), scope.ns);
  return out;
}

catalogue::Catalogue ManifestCatalogue(const ManifestFlags& flags) {
  catalogue::Catalogue inputs =
      CatalogueOfInputs(ManifestInputs(flags), InputDirectories(flags), flags.ns);
  if (!flags.cluster) return inputs;
  const Discovery found = Discover(flags.cluster_flags);
  if (!found.warning.empty())
    std::cerr << "warning: discovery was partial, kinds of the failing API groups are unknown: "
              << found.warning << "\n";
  ClusterCatalogue cluster = ReadClusterCatalogue(flags.cluster_flags, found.served,
                                                  {false, flags.ns, /*all_first=*/true});
  for (const auto& w : cluster.warnings) std::cerr << "warning: " << w << "\n";
  // A file the user is about to apply says what the cluster will hold: it wins.
  return cluster.catalogue.Overlaid(inputs);
}

std::optional<catalogue::Catalogue> ManifestCatalogueOrReport(const ManifestFlags& flags) {
  try {
    return ManifestCatalogue(flags);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace rw::cli
