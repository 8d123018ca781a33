#!/usr/bin/env bash
# Cross-builds the static linux/arm64 binary into build-static-arm64/rdma-webhook, as the image
# stage builds the amd64 one (RW_STATIC=ON, Release). `scripts/release.sh --cross` (make release)
# runs it; no CI stage does: a cold cross build costs as much CPU as the native one and ccache
# shares nothing between the two compilers.
#
# Needs, on Debian 12 (docs/install.md#the-arm64-binary):
#   apt-get install g++-aarch64-linux-gnu
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install libssl-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libboost1.81-dev:arm64
# Those four are Multi-Arch: same and install beside the amd64 ones. libyaml-cpp-dev and
# libjemalloc-dev are not: installing their :arm64 package REMOVES the amd64 one the native build
# needs. So they are never installed: this script downloads them (apt-get download, no root) and
# unpacks them into build-static-arm64/sysroot/, which CMake searches first.
# Prints what is missing and exits 3 when something is. With qemu-user-static installed the
# binary is also run once (`version`) under emulation.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/build-static-arm64"
SYSROOT="$OUT/sysroot"
die() { echo "build-arm64: $1" >&2; exit "${2:-1}"; }

missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
dpkg --print-foreign-architectures | grep -qx arm64 ||
  missing+=("(dpkg --add-architecture arm64 && apt-get update)")
for p in libssl-dev libspdlog-dev libfmt-dev libboost1.81-dev; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p:arm64")
done
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]}" 3

# The two packages that cannot be installed beside their amd64 selves, at the version apt has.
if [ ! -f "$SYSROOT/usr/lib/aarch64-linux-gnu/libyaml-cpp.so.0.7.0" ] ||
  [ ! -f "$SYSROOT/usr/lib/aarch64-linux-gnu/libjemalloc.a" ]; then
  debs="$(mktemp -d)"
  trap 'rm -rf "$debs"' EXIT
  # libyaml-cpp0.7 too: yaml-cpp's CMake file checks that its shared library is beside it.
  (cd "$debs" && apt-get download -q libyaml-cpp-dev:arm64 libyaml-cpp0.7:arm64 \
    libjemalloc-dev:arm64 >&2) ||
    die "apt-get download of libyaml-cpp-dev:arm64 libjemalloc-dev:arm64 failed (is arm64 in apt's lists?)" 3
  mkdir -p "$SYSROOT"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
fi

if [ ! -f "$OUT/build.ninja" ]; then
  cmake -S "$REPO" -B "$OUT" -G Ninja -DRW_STATIC=ON -DRW_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release -DRW_PROJECT_URL="${RW_PROJECT_URL:-}" \
    -DCMAKE_PREFIX_PATH="$SYSROOT/usr" \
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
