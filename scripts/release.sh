#!/usr/bin/env bash
# Builds the release artefacts of rdma-webhook into out/release/<version>/ (or $RW_RELEASE_OUT):
#
#   rdma-webhook_<v>_linux_amd64.tar.gz   the static binary (stripped), LICENSE, README.md
#   rdma-webhook_<v>_linux_arm64.tar.gz   the same for arm64, only with --cross and a Debian cross
#                                         toolchain (scripts/build-arm64.sh lists what it needs);
#                                         skipped with a note otherwise
#   rdma-webhook_<v>_image.oci.tar        the image as an OCI layout archive (skopeo oci-archive:)
#   rdma-webhook_<v>_image.docker.tar     the image as a docker-archive (docker load, ctr import)
#   rdma-webhook_<v>_image.digest         the image manifest digest (sha256:...), for image.digest
#   rdma-webhook_<v>_image.spdx.json      SPDX 2.3 SBOM of the image (scripts/sbom.py)
#   rdma-webhook-<v>.tgz                  the Helm chart (helm package), version = appVersion = <v>
#   rdma.yaml                             krew plugin manifest pointing at the archives
#   SHA256SUMS                            sha256 of every file above (sha256sum -c SHA256SUMS)
#
#   scripts/release.sh            # what CI builds (tests/release/run.sh): amd64 only
#   scripts/release.sh --cross    # make release: also tries the arm64 cross build
#
# The amd64 binary is build-static/rdma-webhook, the image stage's static build (scripts/image.sh
# configures and builds it when missing; up to date it costs a no-op ninja run).
# Reproducible: every timestamp is SOURCE_DATE_EPOCH (default: the commit time of HEAD), owners are
# 0:0, entries are sorted and gzip stores no name or time, so the same binary and sources give
# byte-identical archives, image, SBOM, chart and manifest.
#
# The krew manifest needs the address the archives are published at: $RW_RELEASE_URL (the
# directory, e.g. your release page's download folder). Without it the manifest points at
# file:// paths of this directory, which `kubectl krew install --manifest=rdma.yaml
# --archive=<archive>` accepts (krew checks the sha256 either way). The project names no host.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
die() { echo "release: $*" >&2; exit 1; }
note() { echo "release: $*" >&2; }

cross=0
[ "${1:-}" = "--cross" ] && cross=1
for tool in tar gzip sha256sum python3 ninja skopeo umoci strip dpkg-query; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh --test installs what the release needs)"
done
HELM="${HELM:-$(command -v helm || "$REPO/scripts/install-helm.sh" | tail -n1)}"

: "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct HEAD)}"
export SOURCE_DATE_EPOCH
CREATED="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

# 1. the amd64 binary and the image (scripts/image.sh builds build-static/ when needed). The commit
# `rdma-webhook version` prints is read when CMake configures, so a build-static/ configured at an
# older commit is configured again first (only the files that print it recompile).
head_commit="$(git rev-parse --short=12 HEAD)"
if [ -f build-static/build.ninja ] && [ -x build-static/rdma-webhook ] &&
  ! build-static/rdma-webhook version | grep -qx "commit: $head_commit"; then
  note "build-static/ was configured at another commit: configuring it again for $head_commit"
  cmake build-static >/dev/null
fi
# $RW_PROJECT_URL, the repository's web address, makes `check -o sarif` link each rule to
# docs/rules.md at the tag v<version> (helpUri); a build-static/ configured before is told too,
# and told again when it is unset, so an old address never leaks into a release.
if [ -f build-static/build.ninja ]; then
  cmake -DRW_PROJECT_URL="${RW_PROJECT_URL:-}" build-static >/dev/null
fi
git diff --quiet HEAD -- 2>/dev/null ||
  note "WARNING: the work tree has uncommitted changes: these artefacts are not exactly commit $head_commit"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
RW_IMAGE_OUT="$WORK/image" "$REPO/scripts/image.sh"
BIN="$REPO/build-static/rdma-webhook"
VERSION="$("$BIN" version | sed -n '1s/^rdma-webhook //p')"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || die "'$BIN version' gives no semantic version ('$VERSION')"
chart_version="$(sed -n 's/^version: *//p' charts/rdma-webhook/Chart.yaml)"
app_version="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/rdma-webhook/Chart.yaml)"
[ "$chart_version" = "$VERSION" ] && [ "$app_version" = "$VERSION" ] ||
  die "version mismatch: binary $VERSION, charts/rdma-webhook/Chart.yaml version $chart_version appVersion $app_version (CMakeLists.txt project(VERSION) and Chart.yaml move together)"
grep -q "^## \[$VERSION\]" CHANGELOG.md || grep -q '^## \[Unreleased\]' CHANGELOG.md ||
  die "CHANGELOG.md has neither a [$VERSION] nor an [Unreleased] section"

OUT="${RW_RELEASE_OUT:-$REPO/out/release/$VERSION}"
rm -rf "$OUT"
mkdir -p "$OUT"

# reproducible tar.gz of DIR's entries
pack() {  # pack OUT.tar.gz DIR
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --format=gnu -C "$2" -cf - . | gzip -n -9 > "$1"
}
archive_binary() {  # archive_binary ARCH BINARY
  local d="$WORK/bin-$1"
  mkdir -p "$d"
  "${STRIP:-strip}" -o "$d/rdma-webhook" "$2"
  chmod 0755 "$d/rdma-webhook"
  cp LICENSE README.md "$d/"
  chmod 0644 "$d/LICENSE" "$d/README.md"
  touch -d "@$SOURCE_DATE_EPOCH" "$d"/*
  pack "$OUT/rdma-webhook_${VERSION}_linux_$1.tar.gz" "$d"
}
archive_binary amd64 "$BIN"
platforms=(amd64)

# 2. arm64, in `make release` only (a cold cross build takes as long as the native one):
# scripts/build-arm64.sh says what is missing (exit 3) when the cross toolchain or the arm64
# libraries are not installed; then the release is amd64 only, with a note.
if [ "$cross" = 1 ]; then
  set +e
  arm64_bin="$("$REPO/scripts/build-arm64.sh")"
  arm64_rc=$?
  set -e
  if [ "$arm64_rc" = 0 ]; then
    STRIP=aarch64-linux-gnu-strip archive_binary arm64 "$arm64_bin"
    platforms+=(arm64)
  elif [ "$arm64_rc" = 3 ]; then
    note "linux/arm64 skipped (see scripts/build-arm64.sh and docs/install.md#the-arm64-binary)"
  else
    die "the arm64 cross build failed"
  fi
fi

# 3. the image, both archives, its digest and its SBOM
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$WORK/image/oci" -cf "$OUT/rdma-webhook_${VERSION}_image.oci.tar" .
cp "$WORK/image/rdma-webhook.tar" "$OUT/rdma-webhook_${VERSION}_image.docker.tar"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
  "$WORK/image/oci/index.json" > "$OUT/rdma-webhook_${VERSION}_image.digest"
python3 "$REPO/scripts/sbom.py" --oci "$WORK/image/oci" --tag "$VERSION" --build-dir "$REPO/build-static" \
  --created "$CREATED" --out "$OUT/rdma-webhook_${VERSION}_image.spdx.json"

# 4. the chart. helm package stamps the current time on its entries, so it packs a copy whose
# files carry SOURCE_DATE_EPOCH and the result is repacked with fixed times.
cp -r charts/rdma-webhook "$WORK/chart"
"$HELM" package "$WORK/chart" --version "$VERSION" --app-version "$VERSION" -d "$WORK/pkg" >/dev/null
mkdir -p "$WORK/chart-x"
tar -C "$WORK/chart-x" -m -xzf "$WORK/pkg/rdma-webhook-$VERSION.tgz"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$WORK/chart-x" -cf - rdma-webhook | gzip -n -9 > "$OUT/rdma-webhook-$VERSION.tgz"
"$HELM" lint "$OUT/rdma-webhook-$VERSION.tgz" --set image.allowUnqualified=true >/dev/null ||
  die "the packaged chart does not lint"

# 5. the krew manifest
base="${RW_RELEASE_URL:-file://$OUT}"
{
  cat <<EOF
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: rdma
spec:
  version: v$VERSION
  homepage: ${RW_RELEASE_HOMEPAGE:-${RW_PROJECT_URL:-$base}}
  shortDescription: Check and explain RDMA settings of training workloads
  description: |
    kubectl rdma checks manifests and live workloads for the RDMA, SR-IOV,
    hostNetwork and NCCL settings distributed training needs (check, mutate,
    audit, rules), with the same policy as the rdma-webhook admission webhook.
  platforms:
EOF
  for arch in "${platforms[@]}"; do
    f="rdma-webhook_${VERSION}_linux_$arch.tar.gz"
    cat <<EOF
    - selector:
        matchLabels:
          os: linux
          arch: $arch
      uri: $base/$f
      sha256: $(sha256sum "$OUT/$f" | cut -d' ' -f1)
      bin: kubectl-rdma
      files:
        - from: rdma-webhook
          to: kubectl-rdma
        - from: LICENSE
          to: .
EOF
  done
} > "$OUT/rdma.yaml"

# 6. checksums of everything
(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
note "rdma-webhook $VERSION (${platforms[*]}) in ${OUT#"$REPO"/}:"
(cd "$OUT" && ls -l --time-style=+ | sed 1d | awk '{print "release:   " $5 "\t" $NF}') >&2
note "image digest $(cat "$OUT/rdma-webhook_${VERSION}_image.digest")"
note "push with: skopeo copy oci-archive:${OUT#"$REPO"/}/rdma-webhook_${VERSION}_image.oci.tar:$VERSION docker://<your-registry>/rdma-webhook:$VERSION"
