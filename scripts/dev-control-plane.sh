#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 to try the chart and the CLI on: the e2e tests'
# one (tests/e2e/cmd/controlplane: etcd and kube-apiserver from the k8s.io/kubernetes Go module,
# plus kube-controller-manager), started in the background and kept running until `stop`.
#
#   scripts/dev-control-plane.sh build   # build it into .cache/e2e-bin/ (when its sources
#                                        # changed); prints the binary's path
#   scripts/dev-control-plane.sh start   # build, start, wait for /readyz, print the export line
#   scripts/dev-control-plane.sh env     # print `export KUBECONFIG=...` (eval "$(... env)")
#   scripts/dev-control-plane.sh status  # running or not, and the API server's address
#   scripts/dev-control-plane.sh webhook [NAMESPACE [NAME]]
#                                        # after `helm install`: run build/rdma-webhook serve on
#                                        # 127.0.0.1 with the installed chart's policy and point
#                                        # the chart's webhook configurations at it (defaults:
#                                        # rdma-webhook rdma-webhook, the release's namespace
#                                        # and full name)
#   scripts/dev-control-plane.sh stop    # stop the webhook, then the control plane (SIGTERM:
#                                        # the API server, then etcd)
#
# State lives in $RW_DEV_CP_DIR (default .cache/dev-control-plane/): the kubeconfig, the
# certificates (regenerated at every start, valid 24 h), etcd's data (kept across restarts),
# the log (controlplane.log) and the pid. `stop` keeps it; `rm -rf` it for a clean cluster.
#
# What it is not: there is no kubelet and no scheduler, so pods are stored but never run (a
# Deployment's pods stay Pending), and the chart's webhook pods never answer. `webhook` stands in
# for them: the same binary, the chart's policy from its ConfigMap, the cluster watch, and a
# serving certificate for 127.0.0.1 (certs/gen-certs.sh) whose CA replaces the chart's caBundle.
# A `helm upgrade` puts the Service reference back; run `webhook` again after it.
# docs/try-it-on-a-control-plane.md walks through it. Everything listens on 127.0.0.1 only.
#
# Time: the first build compiles kube-apiserver from source, 10-16 min on 2 cores with an empty
# Go build cache (tests/e2e/run.sh builds the same binary with the same stamp, so either reuses
# the other's); start to ready takes a few seconds.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E_DIR="$REPO/tests/e2e"
BIN_DIR="$REPO/.cache/e2e-bin"
CP="$BIN_DIR/controlplane"
DIR="${RW_DEV_CP_DIR:-$REPO/.cache/dev-control-plane}"
say() { echo "dev-control-plane: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# The stamp covers everything the binary is built from, so an unchanged tree never rebuilds.
stamp_of() {
  {
    go version
    cat "$E2E_DIR/go.mod" "$E2E_DIR/go.sum"
    cat "$E2E_DIR"/cmd/controlplane/*.go "$E2E_DIR"/internal/netutil/*.go
  } | sha256sum | cut -d' ' -f1
}

build() {
  command -v go >/dev/null || die "the Go toolchain (go >= 1.24) is needed to build the control plane"
  mkdir -p "$BIN_DIR"
  local want
  want="$(stamp_of)"
  if [ -x "$CP" ] && [ "$(cat "$CP.stamp" 2>/dev/null)" = "$want" ]; then
    say "control plane up to date ($CP)"
  else
    say "building the control plane (kube-apiserver + etcd from Go modules; cold: ~10-16 min on 2 cores, then cached)"
    local t0 kv minor ldflags="" pkg
    t0=$(date +%s)
    # The version the API server reports (kubectl and helm read it): the module's.
    kv="$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$E2E_DIR/go.mod")"
    minor="$(echo "$kv" | cut -d. -f2)"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags="$ldflags -X $pkg.gitVersion=$kv -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    (cd "$E2E_DIR" && nice -n 10 go build -buildvcs=false -ldflags "$ldflags" -o "$CP.tmp.$$" ./cmd/controlplane) ||
      { rm -f "$CP.tmp.$$"; die "control plane build FAILED"; }
    mv "$CP.tmp.$$" "$CP"
    echo "$want" > "$CP.stamp"
    say "control plane built in $(($(date +%s) - t0))s"
  fi
  echo "$CP"
}

# running_pid PIDFILE: the pid in PIDFILE when that process is alive
running_pid() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# stop_pid PIDFILE WHAT: SIGTERM, up to 30 s for a clean exit (the API server and etcd, or the
# webhook's drain), then SIGKILL
stop_pid() {
  local pid
  pid="$(running_pid "$1")" || { rm -f "$1"; return 0; }
  kill -TERM "$pid"
  for _ in $(seq 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$1"
  say "stopped $2 (pid $pid)"
}

env_line() { echo "export KUBECONFIG=$DIR/kubeconfig"; }

start() {
  if pid="$(running_pid "$DIR/pid")"; then
    say "already running (pid $pid) at $(cat "$DIR/ready" 2>/dev/null)"
    env_line
    return 0
  fi
  build > /dev/null
  mkdir -p "$DIR"
  rm -f "$DIR/ready"
  # nohup: the control plane outlives this shell; its log is the file, never the terminal.
  nohup "$CP" --dir "$DIR" --controller-manager > "$DIR/controlplane.log" 2>&1 < /dev/null &
  echo $! > "$DIR/pid"
  disown
  local waited=0
  # Bound: 180 s, the longest a cold etcd and API server took here under load.
  while [ ! -e "$DIR/ready" ]; do
    kill -0 "$(cat "$DIR/pid")" 2>/dev/null || die "it exited; the end of $DIR/controlplane.log:
$(tail -n 20 "$DIR/controlplane.log")"
    [ "$waited" -ge 360 ] && die "not ready after 180 s; see $DIR/controlplane.log"
    sleep 0.5
    waited=$((waited + 1))
  done
  say "kube-apiserver ready at $(cat "$DIR/ready") (pid $(cat "$DIR/pid"), log $DIR/controlplane.log)"
  env_line
}

stop() {
  stop_pid "$DIR/webhook/pid" "the webhook"
  [ -e "$DIR/pid" ] || { say "not running"; return 0; }
  stop_pid "$DIR/pid" "the control plane"
  rm -f "$DIR/ready"
  say "state kept in $DIR"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

webhook() {
  local ns="${1:-rdma-webhook}" name="${2:-rdma-webhook}" wh="$DIR/webhook"
  local bin="${RW_BINARY:-$REPO/build/rdma-webhook}"
  [ -x "$bin" ] || die "no $bin: build it first (make build), or set RW_BINARY"
  running_pid "$DIR/pid" > /dev/null || die "the control plane is not running (scripts/dev-control-plane.sh start)"
  export KUBECONFIG="$DIR/kubeconfig"
  stop_pid "$wh/pid" "the previous webhook"
  mkdir -p "$wh"
  kubectl -n "$ns" get configmap "$name-policy" -o jsonpath='{.data.policy\.yaml}' > "$wh/policy.yaml" ||
    die "no ConfigMap $ns/$name-policy: install the chart first (helm install $name ... -n $ns)"
  "$REPO/certs/gen-certs.sh" "$wh/certs" "$name" "$ns" > /dev/null
  # The admin token of tokens.csv (token,user,uid,"groups"): the watch lists with it.
  cut -d, -f1 "$DIR/tokens.csv" > "$wh/token"
  chmod 0600 "$wh/token"
  local port probe
  port="$(free_port)"
  probe="$(free_port)"
  nohup "$bin" serve --listen "127.0.0.1:$port" --probe-listen "127.0.0.1:$probe" \
    --tls-cert "$wh/certs/tls.crt" --tls-key "$wh/certs/tls.key" --policy "$wh/policy.yaml" \
    --watch-cluster --kube-api-server "$(cat "$DIR/ready")" --kube-ca "$DIR/ca.crt" \
    --kube-token-file "$wh/token" --log-format text > "$wh/webhook.log" 2>&1 < /dev/null &
  echo $! > "$wh/pid"
  disown
  # Bound: 40 s, past the watch's 30 s ready timeout.
  for _ in $(seq 80); do
    curl -fs "http://127.0.0.1:$probe/readyz" > /dev/null 2>&1 && break
    running_pid "$wh/pid" > /dev/null || die "the webhook exited; the end of $wh/webhook.log:
$(tail -n 20 "$wh/webhook.log")"
    sleep 0.5
  done
  curl -fs "http://127.0.0.1:$probe/readyz" > /dev/null 2>&1 || die "the webhook is not ready after 40 s; see $wh/webhook.log"
  local ca kind hook path
  ca="$(base64 -w0 "$wh/certs/ca.crt")"
  for kind in mutating validating; do
    hook="$([ "$kind" = mutating ] && echo mutate || echo validate)"
    path="/$hook"
    # A strategic merge by webhook name: replaces the Service reference, idempotent.
    kubectl patch "${kind}webhookconfiguration" "$name" --type=strategic -p \
      "{\"webhooks\":[{\"name\":\"$hook.rdma-webhook.io\",\"clientConfig\":{\"service\":null,\"url\":\"https://127.0.0.1:$port$path\",\"caBundle\":\"$ca\"}}]}" \
      > /dev/null || die "could not patch ${kind}webhookconfiguration $name (is the chart installed with that name?)"
  done
  say "webhook serving on https://127.0.0.1:$port (pid $(cat "$wh/pid"), log $wh/webhook.log, policy of $ns/$name-policy)"
  say "the webhook configurations $name now call it"
}

status() {
  local pid
  if pid="$(running_pid "$DIR/webhook/pid")"; then echo "webhook: running (pid $pid)"; fi
  if pid="$(running_pid "$DIR/pid")"; then
    echo "running (pid $pid) at $(cat "$DIR/ready" 2>/dev/null || echo '(not ready yet)')"
  else
    echo "not running"
    return 1
  fi
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) env_line ;;
  webhook)
    shift
    webhook "$@"
    ;;
  *)
    echo "usage: scripts/dev-control-plane.sh build|start|env|status|webhook [NAMESPACE [NAME]]|stop" >&2
    exit 2
    ;;
esac
