#!/usr/bin/env bash
# Cross-builds the static linux/arm64 binary into build-static-arm64/rdma-webhook, as the image
# stage builds the amd64 one (RW_STATIC=ON, Release). `scripts/release.sh --cross` (make release)
# runs it; no CI stage does: a cold cross build costs as much CPU as the native one and ccache
# shares nothing between the two compilers.
#
# Needs, on Debian 12 (docs/install.md#the-arm64-binary):
#   apt-get install g++-aarch64-linux-gnu
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install libssl-dev:arm64 libyaml-cpp-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 \
#                   libjemalloc-dev:arm64 libboost1.81-dev:arm64
# (the arch-independent -dev packages scripts/setup.sh installs, nlohmann-json3-dev and
# libcli11-dev, serve both architectures). Prints what is missing and exits 3 when something is.
# With qemu-user-static installed the binary is also run once (`version`) under emulation.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/build-static-arm64"
die() { echo "build-arm64: $*" >&2; exit "${2:-1}"; }

missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
dpkg --print-foreign-architectures | grep -qx arm64 ||
  missing+=("(dpkg --add-architecture arm64 && apt-get update)")
for p in libssl-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libjemalloc-dev libboost1.81-dev; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p:arm64")
done
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]}" 3

if [ ! -f "$OUT/build.ninja" ]; then
  cmake -S "$REPO" -B "$OUT" -G Ninja -DRW_STATIC=ON -DRW_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release -DRW_PROJECT_URL="${RW_PROJECT_URL:-}" \
    -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/toolchain-aarch64-linux-gnu.cmake" >&2
else
  cmake -DRW_PROJECT_URL="${RW_PROJECT_URL:-}" "$OUT" >/dev/null
fi
nice -n 10 cmake --build "$OUT" --target rdma-webhook >&2

desc="$(file -b "$OUT/rdma-webhook")"
[[ "$desc" == *"ARM aarch64"* && "$desc" == *"statically linked"* ]] ||
  die "$OUT/rdma-webhook is not a static arm64 executable: $desc"
if command -v qemu-aarch64-static >/dev/null; then
  qemu-aarch64-static "$OUT/rdma-webhook" version >&2 || die "the arm64 binary does not run under qemu"
fi
echo "$OUT/rdma-webhook"
