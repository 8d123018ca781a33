#!/usr/bin/env bash
# The release stage: builds the release artefacts with scripts/release.sh (amd64 only, no cross
# build; the binary is the image stage's build-static/, reused), checks each of them, builds them a
# second time to prove they are byte-identical, then runs Debian's docker-registry on 127.0.0.1,
# pushes the chart (helm push) and the image (skopeo copy) to it, pulls both back, and installs the
# pulled chart into the e2e control plane when .cache/e2e-bin/controlplane exists (else `helm
# template`, said in the output), where it then walks docs/try-it-on-a-control-plane.md: the
# webhook beside the control plane, a namespace enabled, a mutation and a denial, `kubectl rdma
# check --cluster` and `audit`.
#
#   tests/release/run.sh
#
# Ends with "N passed, N failed"; exit 1 on any failure. Time: ~1 minute with an up-to-date
# build-static/ (two packaging runs, one registry).
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$REPO/tests/release"
cd "$REPO"
HELM="${HELM:-$("$REPO/scripts/install-helm.sh" | tail -n1)}"
export HELM
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
  exit
}
WORK="$(mktemp -d)"
REG_PID=""
CP_STARTED=""
cleanup() {
  [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null && wait "$REG_PID" 2>/dev/null
  [ -n "$CP_STARTED" ] && RW_DEV_CP_DIR="$WORK/cp" "$REPO/scripts/dev-control-plane.sh" stop 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# 1. build twice (the krew manifest names the publishing address: the same for both)
export RW_RELEASE_URL="file:///release-under-test"
t0=$SECONDS
if RW_RELEASE_OUT="$WORK/a" scripts/release.sh 2> "$WORK/a.log"; then
  ok "scripts/release.sh built the release ($((SECONDS - t0))s)"
else
  bad "scripts/release.sh failed:"; tail -20 "$WORK/a.log"; finish
fi
if RW_RELEASE_OUT="$WORK/b" scripts/release.sh 2> "$WORK/b.log"; then
  if diff <(cd "$WORK/a" && sha256sum -- *) <(cd "$WORK/b" && sha256sum -- *) > "$WORK/diff"; then
    ok "a second build is byte-identical ($(ls "$WORK/a" | wc -l) files)"
  else
    bad "two builds differ:"; cat "$WORK/diff"
  fi
else
  bad "the second scripts/release.sh failed: $(tail -5 "$WORK/b.log")"
fi

# 2. the artefacts
python3 "$HERE/check_release.py" "$WORK/a" && ok "artefacts: checksums, archives, image, SBOM, chart, krew manifest" ||
  bad "check_release.py found problems (above)"
# and the checker is not vacuous: a release whose krew manifest and SBOM were edited fails it
cp -r "$WORK/a" "$WORK/tampered"
sed -i 's/^      sha256: ./      sha256: 0/' "$WORK/tampered/rdma.yaml"
sed -i 's/SPDXRef-Package-deb-libssl-dev/SPDXRef-Package-deb-libssl-gone/g' "$WORK/tampered"/*_image.spdx.json
if python3 "$HERE/check_release.py" "$WORK/tampered" > "$WORK/tampered.out"; then
  bad "check_release.py accepted a tampered release"
elif grep -q "krew sha256" "$WORK/tampered.out" && grep -q "linked statically" "$WORK/tampered.out"; then
  ok "check_release.py refuses a tampered krew manifest and SBOM"
else
  bad "check_release.py did not name the tampering: $(cat "$WORK/tampered.out")"
fi
V="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"][0]["versionInfo"])' "$WORK/a"/*_image.spdx.json)"
DIGEST="$(cat "$WORK/a/rdma-webhook_${V}_image.digest")"

# 3. a registry on 127.0.0.1
command -v docker-registry >/dev/null || { bad "docker-registry is missing (apt-get install docker-registry)"; finish; }
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat > "$WORK/registry.yml" <<EOF
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $WORK/registry-data}}
http: {addr: "127.0.0.1:$PORT"}
EOF
docker-registry serve "$WORK/registry.yml" > "$WORK/registry.log" 2>&1 &
REG_PID=$!
REG="127.0.0.1:$PORT"
for _ in $(seq 50); do curl -sf "http://$REG/v2/" >/dev/null && break; sleep 0.2; done
curl -sf "http://$REG/v2/" >/dev/null && ok "docker-registry listens on $REG" ||
  { bad "docker-registry did not start: $(tail -5 "$WORK/registry.log")"; finish; }

# 4. the chart: push, pull, same bytes
export HELM_REGISTRY_CONFIG="$WORK/helm-registry.json" HELM_CACHE_HOME="$WORK/helm-cache"
if "$HELM" push "$WORK/a/rdma-webhook-$V.tgz" "oci://$REG/charts" --plain-http > "$WORK/push.log" 2>&1; then
  ok "helm push oci://$REG/charts ($(grep -o 'sha256:[0-9a-f]*' "$WORK/push.log" | head -1))"
else
  bad "helm push: $(cat "$WORK/push.log")"
fi
mkdir -p "$WORK/pulled"
if "$HELM" pull "oci://$REG/charts/rdma-webhook" --version "$V" --plain-http -d "$WORK/pulled" > "$WORK/pull.log" 2>&1 &&
  cmp -s "$WORK/a/rdma-webhook-$V.tgz" "$WORK/pulled/rdma-webhook-$V.tgz"; then
  ok "helm pull gives back the packaged chart byte for byte"
else
  bad "helm pull: $(cat "$WORK/pull.log")"
fi

# 5. the image: push the OCI archive, the registry serves the release's manifest digest
if skopeo copy --quiet --dest-tls-verify=false "oci-archive:$WORK/a/rdma-webhook_${V}_image.oci.tar:$V" \
  "docker://$REG/platform/rdma-webhook:$V" 2> "$WORK/skopeo.log"; then
  got="$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$REG/platform/rdma-webhook:$V" 2>>"$WORK/skopeo.log")"
  [ "$got" = "$DIGEST" ] && ok "skopeo pushed the image; the registry serves digest $DIGEST" ||
    bad "registry digest $got, release digest $DIGEST"
else
  bad "skopeo copy: $(cat "$WORK/skopeo.log")"
fi

# 6. install the pulled chart, pointed at the pushed image by digest, into the e2e control plane
# (scripts/dev-control-plane.sh), then the rest of docs/try-it-on-a-control-plane.md: the webhook
# beside it, a namespace enabled, a mutation and a denial through the API server, `kubectl rdma
# check --cluster` and `audit` against it
vals=(--set "image.repository=$REG/platform/rdma-webhook" --set "image.digest=$DIGEST")
cp_bin="${E2E_CONTROLPLANE:-$REPO/.cache/e2e-bin/controlplane}"
if [ -x "$cp_bin" ]; then
  export RW_DEV_CP_DIR="$WORK/cp"
  export KUBECONFIG="$WORK/cp/kubeconfig"
  export RW_BINARY="$REPO/build-static/rdma-webhook"
  CP_STARTED=1
  if scripts/dev-control-plane.sh start > /dev/null 2> "$WORK/install.err" &&
    "$HELM" install rw "oci://$REG/charts/rdma-webhook" --version "$V" --plain-http \
      -n rdma-system --create-namespace "${vals[@]}" > /dev/null 2>> "$WORK/install.err" &&
    "$HELM" get manifest rw -n rdma-system > "$WORK/install.out" 2>> "$WORK/install.err"; then
    ok "helm install from oci://$REG into the e2e control plane (scripts/dev-control-plane.sh start)"
  else
    bad "helm install from the registry: $(tail -5 "$WORK/install.err" 2>/dev/null; tail -3 "$WORK/cp/controlplane.log")"
  fi
  if scripts/dev-control-plane.sh webhook rdma-system rw-rdma-webhook 2> "$WORK/webhook.err"; then
    ok "dev-control-plane.sh webhook serves the release's policy and the webhook configurations call it"
  else
    bad "dev-control-plane.sh webhook: $(tail -5 "$WORK/webhook.err")"
  fi
  kubectl create namespace rdma-demo > /dev/null &&
    kubectl label namespace rdma-demo rdma-webhook.io/enabled=true pod-security.kubernetes.io/enforce=privileged > /dev/null
  if kubectl create -n rdma-demo --dry-run=server -o json -f deploy/examples/try-mutation.yaml > "$WORK/mutated.json" 2> "$WORK/mutated.err" &&
    jq -e '.spec.template.spec.hostNetwork == true and
      (.spec.template.spec.containers[0].securityContext.capabilities.add | index("IPC_LOCK"))' "$WORK/mutated.json" > /dev/null; then
    ok "a GPU Job in the enabled namespace is mutated by the API server (hostNetwork, IPC_LOCK)"
  else
    bad "try-mutation.yaml was not mutated: $(cat "$WORK/mutated.err")"
  fi
  if kubectl create -n rdma-demo --dry-run=server -f deploy/examples/try-denial.yaml > /dev/null 2> "$WORK/denied.err"; then
    bad "try-denial.yaml was admitted"
  elif grep -q 'admission webhook "validate.rdma-webhook.io" denied the request: .*invalid-nccl-value' "$WORK/denied.err"; then
    ok "try-denial.yaml is refused naming invalid-nccl-value"
  else
    bad "try-denial.yaml refused for another reason: $(cat "$WORK/denied.err")"
  fi
  kubectl -n rdma-system get configmap rw-rdma-webhook-policy -o jsonpath='{.data.policy\.yaml}' > "$WORK/policy.yaml"
  ln -sf "$RW_BINARY" "$WORK/kubectl-rdma"
  PATH="$WORK:$PATH" kubectl rdma check --policy "$WORK/policy.yaml" --cluster -n rdma-demo \
    -f deploy/examples/try-denial.yaml > "$WORK/check.out" 2>&1
  rc=$?
  [ "$rc" = 1 ] && grep -q "error invalid-nccl-value" "$WORK/check.out" &&
    ok "kubectl rdma check --cluster with the installed policy gives the webhook's verdict (exit 1)" ||
    bad "kubectl rdma check --cluster: exit $rc, $(cat "$WORK/check.out")"
  kubectl create -n rdma-demo -f deploy/examples/try-mutation.yaml > /dev/null 2>&1
  PATH="$WORK:$PATH" kubectl rdma audit -n rdma-demo --policy-configmap rdma-system/rw-rdma-webhook-policy \
    > "$WORK/audit.out" 2>&1
  rc=$?
  [ "$rc" = 0 ] && grep -q "path: hostNetwork" "$WORK/audit.out" &&
    ok "kubectl rdma audit -n rdma-demo reads the stored, mutated Job" ||
    bad "kubectl rdma audit: exit $rc, $(cat "$WORK/audit.out")"
else
  echo "note: no e2e control plane ($cp_bin; scripts/dev-control-plane.sh build makes it): helm template instead of install"
  "$HELM" template rw "oci://$REG/charts/rdma-webhook" --version "$V" --plain-http -n rdma-system "${vals[@]}" \
    > "$WORK/install.out" 2> "$WORK/install.err" && ok "helm template from oci://$REG" ||
    bad "helm template from the registry: $(cat "$WORK/install.err")"
fi
grep -q "image: \"$REG/platform/rdma-webhook@$DIGEST\"" "$WORK/install.out" &&
  ok "the installed Deployment runs the pushed image by digest" || bad "the rendered Deployment does not name $REG/platform/rdma-webhook@$DIGEST"
finish
