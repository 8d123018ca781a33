#!/usr/bin/env bash
# The main job on a developer machine: installs what is missing, builds, makes a development
# certificate, and runs the admission server on 127.0.0.1 with the embedded default policy.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$REPO/scripts/setup.sh"
TARGET=rdma-webhook "$REPO/scripts/build.sh" >/dev/null
CERTS="$REPO/out/dev-certs"
"$REPO/certs/gen-certs.sh" "$CERTS" rdma-webhook rdma-webhook >/dev/null
LISTEN="${RW_LISTEN:-127.0.0.1:8443}"
PROBE="${RW_PROBE_LISTEN:-127.0.0.1:8080}"
cat >&2 <<MSG

rdma-webhook is starting on https://$LISTEN (probes and metrics on http://$PROBE).
Send it a sample AdmissionReview (a GPU pod in namespace rdma-host-demo, which the default
policy puts on the hostNetwork path):

  curl --cacert $CERTS/ca.crt -H 'Content-Type: application/json' \\
       --data @$REPO/deploy/examples/admission-review.json https://$LISTEN/mutate

and look at the metrics:  curl http://$PROBE/metrics
Stop it with Ctrl-C (SIGTERM drains for 5s).

MSG
exec "$REPO/build/rdma-webhook" serve --tls-cert "$CERTS/tls.crt" --tls-key "$CERTS/tls.key" \
  --listen "$LISTEN" --probe-listen "$PROBE" --log-format text "$@"
