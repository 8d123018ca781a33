#pragma once
// The cluster catalogue: an immutable snapshot of the cluster objects that decide a pod's NIC
// path outside its manifest (DRA DeviceClasses and claims, NetworkAttachmentDefinitions,
// training runtimes, ComputeDomains). The CLI builds one from its inputs and from kubectl, the
// server from its list+watch; the core reads it as a value. Pure: no I/O.
//
// Two kinds of absence differ: a kind that was listed (Knows) whose object is missing means the
// cluster has no such object; a kind never listed (the CLI without --cluster) means nothing is
// known of it, and whoever reads the catalogue says `unknown`, quietly.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace rw::catalogue {

// Where the objects came from: the evidence names it.
enum class Source {
  kNone,     // an empty catalogue
  kInputs,   // the files the CLI read
  kCluster,  // the API server (kubectl in the CLI, list+watch in the server)
};
std::string_view ToString(Source source);  // "none", "inputs", "cluster"

// One kind the catalogue holds.
struct CatalogueKind {
  std::string_view group;     // "resource.k8s.io"
  std::string_view version;   // the version read and listed, "v1"
  std::string_view kind;      // "DeviceClass"
  std::string_view resource;  // plural, as kubectl and the API paths take it: "deviceclasses"
  bool namespaced = true;
};
// Every kind the catalogue accepts; objects of other kinds are ignored. Any version of a
// kind's group is accepted (resource.k8s.io/v1beta1 claims read as v1 ones where the typed
// views say so).
const std::vector<CatalogueKind>& CatalogueKinds();
const CatalogueKind* FindCatalogueKind(std::string_view group, std::string_view kind);

// The group of an apiVersion: "resource.k8s.io/v1" -> "resource.k8s.io", "v1" -> "".
std::string_view GroupOf(std::string_view api_version);

// A kind that was listed whole: in every namespace, or only in `namespaces` (a user allowed to
// list one namespace only).
struct Listing {
  std::string group;
  std::string kind;
  std::optional<std::vector<std::string>> namespaces;  // nullopt: all namespaces
};

// One object held, with where it came from.
struct Entry {
  nlohmann::json object;
  Source source = Source::kNone;
};

class Catalogue {
 public:
  // At most this many objects are held; those past it are ignored and counted in dropped().
  // A bound on memory: a cluster's DRA classes, claim templates, claims and NADs number in the
  // thousands, and 200k objects of a few KiB each already take the better part of a GiB.
  static constexpr std::size_t kMaxObjects = 200000;

  Catalogue() = default;  // empty: source kNone, knows no kind

  // Built from raw Kubernetes objects (JSON as the API server returns them, or as YAML inputs
  // read). Objects of other kinds, and objects without a string metadata.name, are ignored; a
  // `List` (or `<Kind>List`) contributes its items; later duplicates replace earlier ones.
  // `listed`: the kinds that were listed whole (what Knows answers); the inputs list none.
  // A namespaced object without metadata.namespace is in `default_ns` (the CLI's --namespace,
  // as for the workloads beside it); a cluster-scoped one's namespace is ignored.
  static Catalogue From(const std::vector<nlohmann::json>& objects, Source source,
                        std::vector<Listing> listed = {}, std::string_view default_ns = "default");

  // This catalogue with `over`'s objects added, replacing those of the same key (the CLI: its
  // inputs over what kubectl read), and `over`'s listings added to these.
  Catalogue Overlaid(const Catalogue& over) const;

  // The object of `group` (apiVersion's group, e.g. "resource.k8s.io", "k8s.cni.cncf.io",
  // "trainer.kubeflow.org"), `kind`, namespace (`ns` "" for a cluster-scoped kind, where it is
  // ignored) and `name`; nullptr when not held.
  const nlohmann::json* Find(std::string_view group, std::string_view kind, std::string_view ns,
                             std::string_view name) const;
  // The same, with where it came from.
  const Entry* FindEntry(std::string_view group, std::string_view kind, std::string_view ns,
                         std::string_view name) const;

  // The kind was listed at all (in some namespace).
  bool Knows(std::string_view group, std::string_view kind) const;
  // The kind was listed in namespace `ns` (or in all, or it is cluster-scoped and was listed):
  // an object missing there does not exist.
  bool Knows(std::string_view group, std::string_view kind, std::string_view ns) const;

  // kCluster when anything came from the cluster, else kInputs when anything came from the
  // inputs, else kNone.
  Source source() const { return source_; }
  std::size_t size() const { return objects_.size(); }
  bool empty() const { return objects_.empty() && listed_.empty(); }
  std::size_t dropped() const { return dropped_; }

  // Some object of the kind is held (one map lookup, for the callers that read nothing new when
  // the catalogue has none of a kind).
  bool HoldsAny(std::string_view group, std::string_view kind) const;
  // Every object of one kind, in key order (namespace, then name).
  std::vector<const Entry*> All(std::string_view group, std::string_view kind) const;

  // A catalogue with nothing in it: what the core reads when the caller has none.
  static const Catalogue& Empty();

 private:
  struct Key {
    std::string group, kind, ns, name;
  };
  struct KeyLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return Tie(a) < Tie(b);
    }
    template <class K>
    static auto Tie(const K& k) {
      return std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>(
          k.group, k.kind, k.ns, k.name);
    }
  };
  struct KeyView {
    std::string_view group, kind, ns, name;
  };

  void Add(const nlohmann::json& object, Source source, std::string_view default_ns);

  std::map<Key, Entry, KeyLess> objects_;
  std::vector<Listing> listed_;
  Source source_ = Source::kNone;
  std::size_t dropped_ = 0;
};

}  // namespace rw::catalogue
