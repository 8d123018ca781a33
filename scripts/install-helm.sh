#!/usr/bin/env bash
# Install a pinned Helm v3 into the project-local bin dir ($REPO/.cache/bin),
# built from source with the Go toolchain (`go install`), so no prebuilt
# binary is downloaded. Skips the build when that version is already there.
#
#   scripts/install-helm.sh            # installs, prints the path of helm
#   HELM_VERSION=v3.x.y scripts/install-helm.sh
#   RW_BIN_DIR=/some/dir scripts/install-helm.sh
#
# The last line printed on stdout is the absolute path of the helm binary,
# so callers can do: HELM=$(scripts/install-helm.sh | tail -n1)
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.19.5}"
# The Kubernetes version Helm assumes without a cluster (`helm template`,
# `.Capabilities.KubeVersion`): Helm's own Makefile derives it from its
# k8s.io/client-go version (v0.34.x for Helm v3.19 -> 1.34).
HELM_K8S_MAJOR="${HELM_K8S_MAJOR:-1}"
HELM_K8S_MINOR="${HELM_K8S_MINOR:-34}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="${RW_BIN_DIR:-$REPO/.cache/bin}"
HELM="$BIN_DIR/helm"

STAMP="$BIN_DIR/.helm.build"
WANT="$HELM_VERSION k8s=$HELM_K8S_MAJOR.$HELM_K8S_MINOR"

installed_version() {
  [ -x "$HELM" ] || return 1
  "$HELM" version --template '{{.Version}}' 2>/dev/null
}

if [ "$(installed_version || true)" = "$HELM_VERSION" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
  echo "helm $HELM_VERSION already installed" >&2
  echo "$HELM"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-helm.sh: the Go toolchain (go) is required to build helm" >&2
  exit 1
fi

mkdir -p "$BIN_DIR"
echo "building helm $HELM_VERSION with $(go version | awk '{print $3}') into $BIN_DIR (takes a few minutes)" >&2
# Helm reports its version and its default Kubernetes version from variables
# that its own Makefile sets through -ldflags; set them the same way.
# nice: builds here share 2 cores with the C++ build.
GOBIN="$BIN_DIR" CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false" nice -n 10 \
  go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$HELM_K8S_MAJOR \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$HELM_K8S_MAJOR \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"

got="$(installed_version || true)"
if [ "$got" != "$HELM_VERSION" ]; then
  echo "install-helm.sh: built helm reports version '$got', expected $HELM_VERSION" >&2
  exit 1
fi
echo "$WANT" > "$STAMP"
echo "helm $HELM_VERSION installed" >&2
echo "$HELM"
