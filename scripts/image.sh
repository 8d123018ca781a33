#!/usr/bin/env bash
# Builds the rdma-webhook container image without a container engine, with Debian's OCI tools:
# umoci assembles an OCI image layout from the static binary, skopeo turns it into a
# docker-archive tarball. The result is the image the Dockerfile describes: one layer holding
# only /rdma-webhook (stripped, static), and the Dockerfile's USER, EXPOSE, ENTRYPOINT, CMD and
# LABELs (tests/image/run.sh parses the Dockerfile and fails when the two differ).
#
#   scripts/image.sh [STATIC_BINARY]        # or: make image
#
# Without an argument it uses $RW_STATIC_BINARY, else build-static/rdma-webhook, configured and
# built exactly as tests/chart/payload.sh does (so CI builds the static binary once; an up-to-date
# build-static/ costs a no-op ninja run).
#
# Output (in $RW_IMAGE_OUT, default out/image/):
#   oci/              OCI image layout, tag = the version `rdma-webhook version` prints
#   rdma-webhook.tar  docker-archive, `docker load -i` / `ctr images import` ready,
#                     named rdma-webhook:<version>
#
# Reproducible: every timestamp (layer entries, config `created`, history) is SOURCE_DATE_EPOCH,
# default the commit time of HEAD, and owners are 0:0, so the same binary gives the same layer,
# config and manifest digests and a byte-identical tarball. The binary itself is as reproducible
# as the compiler makes it.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${RW_IMAGE_OUT:-$REPO/out/image}"
NAME=rdma-webhook
die() { echo "image: $*" >&2; exit 1; }

for tool in umoci skopeo file strip; do
  command -v "$tool" >/dev/null ||
    die "$tool is missing (apt-get install -y umoci skopeo file binutils; scripts/setup.sh --test does it)"
done

BIN="${1:-${RW_STATIC_BINARY:-}}"
if [ -z "$BIN" ]; then
  BIN="$REPO/build-static/rdma-webhook"
  if [ ! -f "$REPO/build-static/build.ninja" ]; then
    echo "image: configuring a static build in build-static/ (as the Dockerfile does)" >&2
    cmake -S "$REPO" -B "$REPO/build-static" -G Ninja \
      -DRW_STATIC=ON -DRW_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release -DRW_WERROR=ON \
      -DRW_PROJECT_URL="${RW_PROJECT_URL:-}" >&2
  fi
  echo "image: building build-static/rdma-webhook (a no-op when up to date)" >&2
  nice -n 10 cmake --build "$REPO/build-static" --target rdma-webhook >&2
fi
[ -x "$BIN" ] || die "no binary at $BIN"
desc="$(file -b "$BIN")"
[[ "$desc" == *"statically linked"* || "$desc" == *"static-pie linked"* ]] ||
  die "$BIN is not static ($desc): the image has no libc and no loader; build with -DRW_STATIC=ON"

VERSION="$("$BIN" version | sed -n '1s/^rdma-webhook //p')"
[[ "$VERSION" =~ ^[0-9A-Za-z][0-9A-Za-z._-]*$ ]] || die "cannot read a tag from '$BIN version'"
REVISION=unknown
if git -C "$REPO" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  REVISION="$(git -C "$REPO" rev-parse HEAD)"
  git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || REVISION="$REVISION-dirty"
  : "${SOURCE_DATE_EPOCH:=$(git -C "$REPO" log -1 --format=%ct HEAD)}"
fi
: "${SOURCE_DATE_EPOCH:=0}"
CREATED="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
case "$(uname -m)" in
  x86_64) ARCH=amd64 ;;
  aarch64) ARCH=arm64 ;;
  *) ARCH="$(uname -m)" ;;
esac

rootless=()
[ "$(id -u)" = 0 ] || rootless=(--rootless)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
rm -rf "$OUT/oci" "$OUT/$NAME.tar"
mkdir -p "$OUT"
IMAGE="$OUT/oci:$VERSION"

# An empty image, unpacked to a bundle whose rootfs receives the one file (as non-root
# --rootless, which repack reads back from the bundle and maps to 0:0); repack turns the
# difference into the layer (`umoci insert` is not used: Debian's umoci 0.4.7 writes its layer
# without the tar end-of-archive blocks, which GNU tar and Python reject; fixed upstream later).
umoci init --layout "$OUT/oci"
umoci new --image "$IMAGE"
umoci unpack "${rootless[@]}" --image "$IMAGE" "$WORK/bundle" >/dev/null
strip -o "$WORK/bundle/rootfs/rdma-webhook" "$BIN" # as the Dockerfile's `strip`
chmod 0755 "$WORK/bundle/rootfs" "$WORK/bundle/rootfs/rdma-webhook"
touch -d "@$SOURCE_DATE_EPOCH" "$WORK/bundle/rootfs/rdma-webhook" "$WORK/bundle/rootfs"
umoci repack --image "$IMAGE" \
  --history.created "$CREATED" --history.created_by "COPY /rdma-webhook /rdma-webhook" \
  "$WORK/bundle"

# The Dockerfile's runtime stage; PATH is what `docker build` sets for FROM scratch.
umoci config --image "$IMAGE" \
  --os linux --architecture "$ARCH" --created "$CREATED" \
  --history.created "$CREATED" --history.created_by "USER EXPOSE ENTRYPOINT CMD LABEL (Dockerfile)" \
  --config.user 65532:65532 \
  --config.exposedports 8443/tcp --config.exposedports 8080/tcp \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.entrypoint /rdma-webhook \
  --config.cmd serve \
  --config.cmd --tls-cert --config.cmd /etc/rdma-webhook/tls/tls.crt \
  --config.cmd --tls-key --config.cmd /etc/rdma-webhook/tls/tls.key \
  --config.cmd --policy --config.cmd /etc/rdma-webhook/policy/policy.yaml \
  --config.cmd --listen --config.cmd 0.0.0.0:8443 \
  --config.cmd --probe-listen --config.cmd 0.0.0.0:8080 \
  --config.cmd --log-format --config.cmd json \
  --config.cmd --shutdown-delay --config.cmd 5s \
  --config.label org.opencontainers.image.title=rdma-webhook \
  --config.label "org.opencontainers.image.version=$VERSION" \
  --config.label "org.opencontainers.image.revision=$REVISION"
umoci gc --layout "$OUT/oci" # drop the intermediate configs and manifests

skopeo copy --quiet "oci:$IMAGE" "docker-archive:$OUT/$NAME.tar:$NAME:$VERSION"

manifest="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$OUT/oci/index.json")"
layer_gz="$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(l["size"] for l in m["layers"]))' \
  "$OUT/oci/blobs/${manifest/://}")"
cat >&2 <<EOF
image: $NAME:$VERSION (revision $REVISION, created $CREATED, linux/$ARCH)
image: OCI layout   ${OUT#"$REPO"/}/oci  manifest $manifest  layer $layer_gz bytes gzip
image: docker-archive ${OUT#"$REPO"/}/$NAME.tar  $(stat -c %s "$OUT/$NAME.tar") bytes
EOF
# scripts/release.sh builds into a temporary RW_IMAGE_OUT and says how to push its own archive.
[ -n "${RW_IMAGE_OUT:-}" ] ||
  echo "image: push with: skopeo copy oci:${OUT#"$REPO"/}/oci:$VERSION docker://<your-registry>/$NAME:$VERSION" >&2
