#!/usr/bin/env python3
"""A stand-in for kubectl in the audit tests: answers from canned files and records its argv.

$FAKE_KUBECTL_DIR holds calls.jsonl (one argv per line, appended) and the answers:
  api-resources.txt             `kubectl api-resources -o wide`
  configmaps.json               `kubectl get configmaps -A -l ...` (default: an empty List);
                                with --namespace NS, only its items in NS
  forbid-all-configmaps         when present: `get configmaps --all-namespaces` is Forbidden
  configmap-<ns>-<name>.json    `kubectl get configmap NAME -n NS` (default: NotFound, exit 1)
  <resource>.<group>.json       `kubectl get <resource>.<group>` of a catalogue kind
                                (deviceclasses.resource.k8s.io, ...; default: an empty List);
                                with --namespace NS, only its items in NS
  forbid-all-<resource>.<group> when present: that get with --all-namespaces is Forbidden
  fail-<resource>.<group>       when present: its text on stderr and exit 1 for that get
  workloads.json                any other `kubectl get`
  fail-get                      when present: its text on stderr and exit 1 for that `get`
For `verify KIND/NAME`:
  object-<kind>-<name>.json     `kubectl get KIND/NAME` (default: NotFound, exit 1)
  pods.json, events.json        `kubectl get pods` / `get events` (default: an empty List)
  owners.json                   `kubectl get replicasets,jobs` (default: an empty List)
  logs-<pod>-<container>.txt    `kubectl logs POD -c CONTAINER` (`logs-previous-...` with
                                --previous; default: an error, exit 1)
"""
import json
import os
import sys

d = os.environ["FAKE_KUBECTL_DIR"]
argv = sys.argv[1:]
with open(os.path.join(d, "calls.jsonl"), "a") as f:
    f.write(json.dumps(argv) + "\n")


def answer(name, default=None):
    p = os.path.join(d, name)
    if os.path.exists(p):
        sys.stdout.write(open(p).read())
    elif default is not None:
        sys.stdout.write(default)
    else:
        return False
    return True


def value(flag):
    return argv[argv.index(flag) + 1] if flag in argv else None


EMPTY = '{"apiVersion": "v1", "items": [], "kind": "List"}'
# The kinds of the cluster catalogue, as rdma-webhook lists them (resource.group).
CATALOGUE = ("deviceclasses.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io",
             "resourceclaims.resource.k8s.io", "network-attachment-definitions.k8s.cni.cncf.io",
             "clustertrainingruntimes.trainer.kubeflow.org",
             "trainingruntimes.trainer.kubeflow.org", "computedomains.resource.nvidia.com")

if "logs" in argv:
    pod = argv[argv.index("logs") + 1]
    container = value("-c")
    prev = "previous-" if "--previous" in argv else ""
    if not answer(f"logs-{prev}{pod}-{container}.txt"):
        sys.stderr.write(f'Error from server (BadRequest): container "{container}" in pod "{pod}" '
                         'is waiting to start: ContainerCreating\n')
        sys.exit(1)
elif "get" in argv and argv[argv.index("get") + 1] in ("pods", "events", "replicasets,jobs"):
    what = argv[argv.index("get") + 1]
    answer({"pods": "pods.json", "events": "events.json"}.get(what, "owners.json"), EMPTY)
elif "get" in argv and "/" in argv[argv.index("get") + 1]:
    kind, name = argv[argv.index("get") + 1].split("/", 1)
    if not answer(f"object-{kind}-{name}.json"):
        sys.stderr.write(f'Error from server (NotFound): {kind} "{name}" not found\n')
        sys.exit(1)
elif "api-resources" in argv:
    answer("api-resources.txt")
elif "get" in argv and argv[argv.index("get") + 1] in CATALOGUE:
    what = argv[argv.index("get") + 1]
    ns = value("--namespace") or value("-n")
    if os.path.exists(os.path.join(d, f"fail-{what}")):
        sys.stderr.write(open(os.path.join(d, f"fail-{what}")).read())
        sys.exit(1)
    if "--all-namespaces" in argv and os.path.exists(os.path.join(d, f"forbid-all-{what}")):
        resource, group = what.split(".", 1)
        sys.stderr.write(f'Error from server (Forbidden): {resource}.{group} is forbidden: User '
                         f'"dev" cannot list resource "{resource}" in API group "{group}" at the '
                         'cluster scope\n')
        sys.exit(1)
    p = os.path.join(d, f"{what}.json")
    listed = json.load(open(p)) if os.path.exists(p) else json.loads(EMPTY)
    if ns is not None:
        listed["items"] = [i for i in listed["items"]
                           if i.get("metadata", {}).get("namespace") == ns]
    sys.stdout.write(json.dumps(listed))
elif "get" in argv:
    what = argv[argv.index("get") + 1]
    if what == "configmaps":
        ns = value("--namespace") or value("-n")
        if "--all-namespaces" in argv and os.path.exists(os.path.join(d, "forbid-all-configmaps")):
            sys.stderr.write('Error from server (Forbidden): configmaps is forbidden: User "dev" '
                             'cannot list resource "configmaps" in API group "" at the cluster '
                             'scope\n')
            sys.exit(1)
        p = os.path.join(d, "configmaps.json")
        listed = json.load(open(p)) if os.path.exists(p) else {"apiVersion": "v1", "items": [],
                                                               "kind": "List"}
        if "--all-namespaces" not in argv:
            listed["items"] = [i for i in listed["items"]
                               if i.get("metadata", {}).get("namespace") == (ns or "default")]
        sys.stdout.write(json.dumps(listed))
    elif what == "configmap":
        name = argv[argv.index("get") + 2]
        if not answer(f"configmap-{value('-n')}-{name}.json"):
            sys.stderr.write(f'Error from server (NotFound): configmaps "{name}" not found\n')
            sys.exit(1)
    elif os.path.exists(os.path.join(d, "fail-get")):
        sys.stderr.write(open(os.path.join(d, "fail-get")).read())
        sys.exit(1)
    else:
        answer("workloads.json")
else:
    sys.stderr.write(f"fake kubectl: unexpected {argv}\n")
    sys.exit(3)
