#include "rdma_webhook/catalogue/catalogue.h"

#include <algorithm>
#include <utility>

namespace rw::catalogue {
namespace {

using nlohmann::json;

const std::string* StringAt(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view ToString(Source source) {
  switch (source) {
    case Source::kInputs:
      return "inputs";
    case Source::kCluster:
      return "cluster";
    case Source::kNone:
      break;
  }
  return "none";
}

const std::vector<CatalogueKind>& CatalogueKinds() {
  // The versions are those the objects are listed at: resource.k8s.io/v1 is GA since
  // Kubernetes 1.34; the NAD CRD of the Network Plumbing Working Group is v1; Kubeflow
  // Trainer v2's runtimes are v1alpha1; NVIDIA's DRA driver serves ComputeDomain at v1beta1.
  static const std::vector<CatalogueKind> kKinds = {
      {"resource.k8s.io", "v1", "DeviceClass", "deviceclasses", false},
      {"resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", true},
      {"resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", true},
      {"k8s.cni.cncf.io", "v1", "NetworkAttachmentDefinition", "network-attachment-definitions",
       true},
      {"trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes",
       false},
      {"trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes", true},
      {"resource.nvidia.com", "v1beta1", "ComputeDomain", "computedomains", true},
  };
  return kKinds;
}

const CatalogueKind* FindCatalogueKind(std::string_view group, std::string_view kind) {
  for (const auto& k : CatalogueKinds())
    if (k.group == group && k.kind == kind) return &k;
  return nullptr;
}

std::string_view GroupOf(std::string_view api_version) {
  const auto slash = api_version.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

void Catalogue::Add(const json& object, Source source, std::string_view default_ns) {
  const std::string* api_version = StringAt(object, "apiVersion");
  const std::string* kind = StringAt(object, "kind");
  if (api_version == nullptr || kind == nullptr) return;
  if (*kind == "List" || EndsWith(*kind, "List")) {
    const auto items = object.find("items");
    if (items != object.end() && items->is_array())
      for (const auto& item : *items) Add(item, source, default_ns);
    return;
  }
  const CatalogueKind* k = FindCatalogueKind(GroupOf(*api_version), *kind);
  if (k == nullptr) return;
  const auto meta = object.find("metadata");
  if (meta == object.end()) return;
  const std::string* name = StringAt(*meta, "name");
  if (name == nullptr || name->empty()) return;
  std::string ns;
  if (k->namespaced) {
    const std::string* written = StringAt(*meta, "namespace");
    ns = written != nullptr && !written->empty() ? *written : std::string(default_ns);
  }
  Key key{std::string(k->group), std::string(k->kind), std::move(ns), *name};
  const auto it = objects_.find(key);
  if (it != objects_.end()) {
    it->second = {object, source};
  } else if (objects_.size() >= kMaxObjects) {
    ++dropped_;
    return;
  } else {
    objects_.emplace(std::move(key), Entry{object, source});
  }
  if (source == Source::kCluster || source_ == Source::kNone) source_ = source;
}

Catalogue Catalogue::From(const std::vector<json>& objects, Source source,
                          std::vector<Listing> listed, std::string_view default_ns) {
  Catalogue c;
  for (const auto& object : objects) c.Add(object, source, default_ns);
  c.listed_ = std::move(listed);
  if (!c.listed_.empty() && (source == Source::kCluster || c.source_ == Source::kNone))
    c.source_ = source;
  return c;
}

Catalogue Catalogue::Overlaid(const Catalogue& over) const {
  Catalogue c = *this;
  for (const auto& [key, entry] : over.objects_) {
    const auto it = c.objects_.find(key);
    if (it != c.objects_.end()) {
      it->second = entry;
    } else if (c.objects_.size() >= kMaxObjects) {
      ++c.dropped_;
    } else {
      c.objects_.emplace(key, entry);
    }
  }
  c.dropped_ += over.dropped_;
  c.listed_.insert(c.listed_.end(), over.listed_.begin(), over.listed_.end());
  if (over.source_ == Source::kCluster || c.source_ == Source::kNone) c.source_ = over.source_;
  return c;
}

const Entry* Catalogue::FindEntry(std::string_view group, std::string_view kind,
                                  std::string_view ns, std::string_view name) const {
  const CatalogueKind* k = FindCatalogueKind(group, kind);
  if (k == nullptr) return nullptr;
  const auto it = objects_.find(KeyView{group, kind, k->namespaced ? ns : "", name});
  return it == objects_.end() ? nullptr : &it->second;
}

const json* Catalogue::Find(std::string_view group, std::string_view kind, std::string_view ns,
                            std::string_view name) const {
  const Entry* e = FindEntry(group, kind, ns, name);
  return e == nullptr ? nullptr : &e->object;
}

bool Catalogue::Knows(std::string_view group, std::string_view kind) const {
  return std::any_of(listed_.begin(), listed_.end(),
                     [&](const Listing& l) { return l.group == group && l.kind == kind; });
}

bool Catalogue::Knows(std::string_view group, std::string_view kind, std::string_view ns) const {
  const CatalogueKind* k = FindCatalogueKind(group, kind);
  const bool cluster_scoped = k != nullptr && !k->namespaced;
  return std::any_of(listed_.begin(), listed_.end(), [&](const Listing& l) {
    if (l.group != group || l.kind != kind) return false;
    if (cluster_scoped || !l.namespaces) return true;
    return std::find(l.namespaces->begin(), l.namespaces->end(), ns) != l.namespaces->end();
  });
}

bool Catalogue::HoldsAny(std::string_view group, std::string_view kind) const {
  const auto it = objects_.lower_bound(KeyView{group, kind, "", ""});
  return it != objects_.end() && it->first.group == group && it->first.kind == kind;
}

std::vector<const Entry*> Catalogue::All(std::string_view group, std::string_view kind) const {
  std::vector<const Entry*> out;
  const KeyView from{group, kind, "", ""};
  for (auto it = objects_.lower_bound(from);
       it != objects_.end() && it->first.group == group && it->first.kind == kind; ++it)
    out.push_back(&it->second);
  return out;
}

const Catalogue& Catalogue::Empty() {
  static const Catalogue kEmpty;
  return kEmpty;
}

}  // namespace rw::catalogue
