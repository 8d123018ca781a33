#!/usr/bin/env bash
# Configures and builds into build/ (or $BUILD_DIR) with Ninja; extra args go to CMake.
#   scripts/build.sh                         # the binary and the unit tests
#   BUILD_DIR=build-asan scripts/build.sh -DRW_SANITIZE=ON
#   TARGET=rdma-webhook scripts/build.sh     # only the binary
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
JOBS="${JOBS:-$(nproc)}"
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DRW_WERROR=ON "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" ${TARGET:+--target "$TARGET"}
