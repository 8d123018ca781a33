#!/usr/bin/env bash
# Install a pinned kubectl into the project-local bin dir ($REPO/.cache/bin), built from the
# Go modules of the same Kubernetes release as the e2e control plane (k8s.io/kubectl, the
# staging module kubectl's own main package is made of), so no prebuilt binary is downloaded.
# Skips the build when that version is already there.
#
#   scripts/install-kubectl.sh          # installs, prints the path of kubectl
#   KUBECTL_VERSION=v1.32.13 scripts/install-kubectl.sh
#
# The last line printed on stdout is the absolute path of the kubectl binary.
set -euo pipefail

KUBECTL_VERSION="${KUBECTL_VERSION:-v1.32.13}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="${RW_BIN_DIR:-$REPO/.cache/bin}"
KUBECTL="$BIN_DIR/kubectl"
SRC="$REPO/.cache/kubectl-src"

installed_version() {
  [ -x "$KUBECTL" ] || return 1
  "$KUBECTL" version --client -o json 2>/dev/null |
    sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n1
}

if [ "$(installed_version || true)" = "$KUBECTL_VERSION" ]; then
  echo "kubectl $KUBECTL_VERSION already installed" >&2
  echo "$KUBECTL"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-kubectl.sh: the Go toolchain (go) is required to build kubectl" >&2
  exit 1
fi

# kubectl's main (k8s.io/kubernetes/cmd/kubectl/kubectl.go), in a module of its own: the
# k8s.io/kubernetes module itself cannot be `go install`ed (its go.mod has replace lines).
staging="v0.${KUBECTL_VERSION#v1.}"
rm -rf "$SRC"
mkdir -p "$SRC" "$BIN_DIR"
cat >"$SRC/go.mod" <<EOF
module rdma-webhook.local/kubectl

go 1.23.0

require (
	k8s.io/client-go $staging
	k8s.io/component-base $staging
	k8s.io/kubectl $staging
)
EOF
cat >"$SRC/main.go" <<'EOF'
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Credential plugins of cloud kubeconfigs (exec, OIDC), as in kubectl's own main.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
EOF
echo "building kubectl $KUBECTL_VERSION with $(go version | awk '{print $3}') into $BIN_DIR" \
  "(a few minutes the first time)" >&2
minor="$(echo "$KUBECTL_VERSION" | cut -d. -f2)"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$KUBECTL_VERSION -X $pkg.gitMajor=1"
  ldflags="$ldflags -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
# nice: builds here share 2 cores with the C++ build.
(cd "$SRC" && GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=mod" go mod tidy >/dev/null 2>&1 &&
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false" nice -n 10 \
    go build -trimpath -ldflags "$ldflags" -o "$KUBECTL.tmp.$$" .)
mv "$KUBECTL.tmp.$$" "$KUBECTL"
got="$(installed_version || true)"
if [ "$got" != "$KUBECTL_VERSION" ]; then
  echo "install-kubectl.sh: built kubectl reports version '$got', expected $KUBECTL_VERSION" >&2
  exit 1
fi
echo "kubectl $KUBECTL_VERSION installed" >&2
echo "$KUBECTL"
