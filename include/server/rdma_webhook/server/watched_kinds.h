#pragma once
// The cluster objects the server lists and watches (docs/http.md#the-cluster-watch): the ones
// that decide a pod's NIC path outside its manifest. One row per resource; adding a kind is one
// row here and the matching rule in the chart's ClusterRole.
#include <span>
#include <string>
#include <string_view>

namespace rw::server {

struct WatchedKind {
  std::string_view group;
  std::string_view version;
  std::string_view resource;  // the plural the API serves it under
  std::string_view kind;
  bool namespaced = false;

  // "deviceclasses.resource.k8s.io", as kubectl and RBAC name it: the metrics label and the name
  // in log lines.
  std::string Name() const;
  // The collection across all namespaces: "/apis/resource.k8s.io/v1/deviceclasses".
  std::string CollectionPath() const;
  // "resource.k8s.io/v1", what a listed item's apiVersion is set to (a LIST's items carry none).
  std::string ApiVersion() const;
};

std::span<const WatchedKind> WatchedKinds();

}  // namespace rw::server
