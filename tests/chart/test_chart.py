#!/usr/bin/env python3
"""Tests of the Helm chart, the plain manifests, the example policies, the
certificate script and the Dockerfile. Run through tests/chart/run.sh, which
installs Helm first and passes it in $HELM.

    python3 tests/chart/test_chart.py                 # all tests
    python3 tests/chart/test_chart.py -k certs        # tests whose name contains "certs"
    python3 tests/chart/test_chart.py --render-matrix DIR
        # write every rendered case of the values matrix to DIR for
        # `kubectl apply --dry-run=server` (see render_matrix below)

Ends with the plain line `N passed, N failed[, N skipped]`; exits 1 on any
failure.
"""
import base64
import copy
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHART = os.path.join(REPO, "charts", "rdma-webhook")
HELM = os.environ.get("HELM") or shutil.which("helm") or os.path.join(REPO, ".cache", "bin", "helm")
NS = "rdma-system"
RELEASE = "rw"
FULLNAME = "rw-rdma-webhook"
# The default image.repository names no registry, which the chart refuses
# (image_repository_must_name_a_registry tests that); every other test renders
# it as an image loaded onto the nodes.
UNQUALIFIED_OK = ["--set", "image.allowUnqualified=true"]
CA_PLACEHOLDER = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nplaceholder\n").decode()


class Skip(Exception):
    pass


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


# ----------------------------------------------------------------- helpers

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def write_values(values, tmp):
    fd, path = tempfile.mkstemp(suffix=".yaml", dir=tmp)
    with os.fdopen(fd, "w") as f:
        if isinstance(values, str):
            f.write(values)
        else:
            yaml.safe_dump(values, f)
    return path


TMP = tempfile.mkdtemp(prefix="rw-chart-test-")


def helm_template(values=None, sets=(), ns=NS, release=RELEASE, raw=False, expect_ok=True):
    cmd = [HELM, "template", release, CHART, "--namespace", ns] + UNQUALIFIED_OK
    if values is not None:
        cmd += ["-f", write_values(values, TMP)]
    for s in sets:
        cmd += ["--set", s]
    r = run(cmd)
    if expect_ok and r.returncode != 0:
        raise AssertionError("helm template failed:\n" + r.stderr)
    if raw:
        return r
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def existing_secret_values(**extra):
    v = {"certificates": {"mode": "existingSecret", "secretName": "my-tls",
                          "existingSecret": {"caBundle": CA_PLACEHOLDER}}}
    v.update(extra)
    return v


def objs(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def one(docs, kind, name=None):
    found = [d for d in objs(docs, kind) if name is None or d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, got {len(found)}"
    return found[0]


def webhooks(docs):
    m = one(docs, "MutatingWebhookConfiguration")
    v = one(docs, "ValidatingWebhookConfiguration")
    assert len(m["webhooks"]) == 1 and len(v["webhooks"]) == 1
    return m, v


def container(docs):
    dep = one(docs, "Deployment")
    cs = dep["spec"]["template"]["spec"]["containers"]
    assert len(cs) == 1
    return dep, cs[0]


def eq(a, b, what=""):
    assert a == b, f"{what}: expected {b!r}, got {a!r}"


def chart_values():
    with open(os.path.join(CHART, "values.yaml")) as f:
        return yaml.safe_load(f)


def openssl_text(pem):
    r = subprocess.run(["openssl", "x509", "-noout", "-text"], input=pem, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def sans(pem):
    r = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName"], input=pem,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    body = " ".join(r.stdout.splitlines()[1:])
    return [s.strip() for s in body.split(",") if s.strip()]


def verify_chain(ca_pem, cert_pem):
    with tempfile.TemporaryDirectory() as d:
        ca, crt = os.path.join(d, "ca.crt"), os.path.join(d, "tls.crt")
        open(ca, "w").write(ca_pem)
        open(crt, "w").write(cert_pem)
        r = run(["openssl", "verify", "-CAfile", ca, crt])
        assert r.returncode == 0, r.stdout + r.stderr


def expect_failure(values, *needles, sets=()):
    r = helm_template(values, sets=sets, raw=True, expect_ok=False)
    assert r.returncode != 0, "helm template accepted bad values:\n" + json.dumps(values)
    for n in needles:
        assert n in r.stderr, f"error message does not name {n!r}:\n{r.stderr}"
    return r.stderr


def binary():
    b = os.environ.get("RW_BINARY") or os.path.join(REPO, "build", "rdma-webhook")
    if not (os.path.isfile(b) and os.access(b, os.X_OK)):
        if os.environ.get("CI") == "true":
            # CI builds the binary first: a missing one is a broken pipeline, not a skip.
            raise AssertionError(f"CI=true but no rdma-webhook binary at {b}: set RW_BINARY")
        raise Skip(f"rdma-webhook binary not found ({b}); build it or set RW_BINARY")
    return b


# ------------------------------------------------------------------- lint

@test
def lint_default_values():
    r = run([HELM, "lint", "--strict", CHART, "--namespace", NS] + UNQUALIFIED_OK)
    assert r.returncode == 0, r.stdout + r.stderr


@test
def lint_every_certificate_mode():
    for sets in (["certificates.mode=chart"], ["certificates.mode=certManager"],
                 ["certificates.mode=existingSecret", "certificates.secretName=x",
                  "certificates.existingSecret.caBundle=" + CA_PLACEHOLDER]):
        r = run([HELM, "lint", "--strict", CHART, "--namespace", NS] + UNQUALIFIED_OK + sum((["--set", s] for s in sets), []))
        assert r.returncode == 0, f"{sets}: " + r.stdout + r.stderr


# ------------------------------------------------------------ the objects

@test
def default_render_has_the_expected_objects():
    docs = helm_template()
    kinds = sorted(d["kind"] for d in docs)
    eq(kinds, sorted(["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment",
                      "MutatingWebhookConfiguration", "PodDisruptionBudget", "Pod", "Secret", "Secret",
                      "Service", "ServiceAccount", "ValidatingWebhookConfiguration"]),
       "kinds")
    eq(one(docs, "Pod")["metadata"]["annotations"]["helm.sh/hook"], "test", "the only Pod is the helm test")
    for d in docs:
        if d["kind"].endswith("WebhookConfiguration") or d["kind"].startswith("ClusterRole"):
            assert "namespace" not in d["metadata"], "cluster-scoped object with a namespace"
        else:
            eq(d["metadata"].get("namespace"), NS, f"{d['kind']} namespace")
        assert d["metadata"]["labels"]["app.kubernetes.io/name"] == "rdma-webhook"


@test
def namespace_selector_excludes_control_plane_and_release_namespace():
    for values in (None, {"webhook": {"namespaceSelector": {"matchLabels": None}, "excludedNamespaces": ["gpu-operator"]}},
                   existing_secret_values()):
        docs = helm_template(values)
        for wh in webhooks(docs):
            sel = wh["webhooks"][0]["namespaceSelector"]
            exprs = [e for e in sel["matchExpressions"] if e["key"] == "kubernetes.io/metadata.name"]
            eq(len(exprs), 1, "kubernetes.io/metadata.name expressions")
            eq(exprs[0]["operator"], "NotIn", "operator")
            for n in ("kube-system", "kube-public", "kube-node-lease", NS):
                assert n in exprs[0]["values"], f"{n} not excluded: {exprs[0]['values']}"
            if values and values.get("webhook", {}).get("excludedNamespaces"):
                assert "gpu-operator" in exprs[0]["values"]
                assert "matchLabels" not in sel or sel["matchLabels"] == {}, sel
            else:
                eq(sel["matchLabels"], {"rdma-webhook.io/enabled": "true"}, "matchLabels")


@test
def namespace_selector_extra_expressions_are_kept():
    extra = {"key": "team", "operator": "In", "values": ["a", "b"]}
    docs = helm_template({"webhook": {"namespaceSelector": {"matchLabels": {"x": "z"}, "matchExpressions": [extra]}}})
    for wh in webhooks(docs):
        sel = wh["webhooks"][0]["namespaceSelector"]
        assert extra in sel["matchExpressions"], sel
        eq(sel["matchLabels"], {"x": "z", "rdma-webhook.io/enabled": "true"}, "matchLabels (merged with the default)")
        assert any(e["key"] == "kubernetes.io/metadata.name" for e in sel["matchExpressions"])


@test
def release_namespace_is_excluded_whatever_it_is():
    docs = helm_template(ns="webhooks-prod")
    for wh in webhooks(docs):
        vals = wh["webhooks"][0]["namespaceSelector"]["matchExpressions"][0]["values"]
        assert "webhooks-prod" in vals and NS not in vals, vals


BUILTIN_RULES = {
    ("", "pods"): ["CREATE"],
    ("batch", "jobs"): ["CREATE", "UPDATE"], ("batch", "cronjobs"): ["CREATE", "UPDATE"],
    ("apps", "deployments"): ["CREATE", "UPDATE"], ("apps", "statefulsets"): ["CREATE", "UPDATE"],
    ("apps", "replicasets"): ["CREATE", "UPDATE"], ("apps", "daemonsets"): ["CREATE", "UPDATE"],
}
CRD_RULES = {
    ("kubeflow.org", r): ["CREATE", "UPDATE"] for r in ("pytorchjobs", "tfjobs", "paddlejobs", "xgboostjobs", "mpijobs")
}
CRD_RULES.update({("batch.volcano.sh", "jobs"): ["CREATE", "UPDATE"],
                  ("jobset.x-k8s.io", "jobsets"): ["CREATE", "UPDATE"],
                  ("leaderworkerset.x-k8s.io", "leaderworkersets"): ["CREATE", "UPDATE"],
                  ("ray.io", "rayjobs"): ["CREATE", "UPDATE"], ("ray.io", "rayclusters"): ["CREATE", "UPDATE"],
                  ("trainer.kubeflow.org", "trainjobs"): ["CREATE", "UPDATE"],
                  ("ray.io", "rayservices"): ["CREATE", "UPDATE"],
                  ("orchestration.aibrix.ai", "rayclusterfleets"): ["CREATE", "UPDATE"],
                  ("workloads.x-k8s.io", "rolebasedgroups"): ["CREATE", "UPDATE"],
                  ("trainer.kubeflow.org", "trainingruntimes"): ["CREATE", "UPDATE"],
                  ("trainer.kubeflow.org", "clustertrainingruntimes"): ["CREATE", "UPDATE"]})
# Cluster-scoped kinds: a rule with scope Namespaced would never send them.
CLUSTER_SCOPED = {("trainer.kubeflow.org", "clustertrainingruntimes")}


def flatten_rules(rules):
    out = {}
    for r in rules:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                assert (g, res) not in out, f"duplicate rule for {g}/{res}"
                out[(g, res)] = r["operations"]
                eq(r["scope"], "Cluster" if (g, res) in CLUSTER_SCOPED else "Namespaced",
                   f"{g}/{res} scope")
    return out


@test
def webhook_fields():
    docs = helm_template()
    m, v = webhooks(docs)
    for cfg, path, name in ((m, "/mutate", "mutate.rdma-webhook.io"), (v, "/validate", "validate.rdma-webhook.io")):
        wh = cfg["webhooks"][0]
        eq(wh["name"], name, "name")
        eq(wh["admissionReviewVersions"], ["v1"], "admissionReviewVersions")
        eq(wh["sideEffects"], "None", "sideEffects")
        eq(wh["timeoutSeconds"], 5, "timeoutSeconds")
        eq(wh["matchPolicy"], "Equivalent", "matchPolicy")
        eq(wh["clientConfig"]["service"], {"name": FULLNAME, "namespace": NS, "path": path, "port": 443}, "service")
        eq(flatten_rules(wh["rules"]), {**BUILTIN_RULES, **CRD_RULES}, "rules")
    # the good-practices defaults: mutation fails open, validation of the final state closed
    eq(m["webhooks"][0]["failurePolicy"], "Ignore", "mutating failurePolicy")
    eq(v["webhooks"][0]["failurePolicy"], "Fail", "validating failurePolicy")
    eq(m["webhooks"][0]["reinvocationPolicy"], "IfNeeded", "reinvocationPolicy")
    assert "reinvocationPolicy" not in v["webhooks"][0], "reinvocationPolicy on the validating webhook"
    # the Service the webhooks call exists and targets the TLS port
    svc = one(docs, "Service", FULLNAME)
    https = [p for p in svc["spec"]["ports"] if p["port"] == 443]
    eq(len(https), 1, "service port 443")
    eq(https[0]["targetPort"], "https", "targetPort")


@test
def failure_policy_timeout_and_toggles_are_values():
    for fp in ("Fail", "Ignore"):
        docs = helm_template({"webhook": {"failurePolicy": fp, "timeoutSeconds": 3, "reinvocationPolicy": "Never"}})
        m, v = webhooks(docs)
        for cfg in (m, v):
            eq(cfg["webhooks"][0]["failurePolicy"], fp, "failurePolicy")
            eq(cfg["webhooks"][0]["timeoutSeconds"], 3, "timeoutSeconds")
        eq(m["webhooks"][0]["reinvocationPolicy"], "Never", "reinvocationPolicy")
    docs = helm_template({"webhook": {"validating": {"enabled": False}}})
    assert objs(docs, "MutatingWebhookConfiguration") and not objs(docs, "ValidatingWebhookConfiguration")
    m, v = webhooks(helm_template({"webhook": {"mutating": {"failurePolicy": "Fail"},
                                               "validating": {"failurePolicy": "Ignore"}}}))
    eq((m["webhooks"][0]["failurePolicy"], v["webhooks"][0]["failurePolicy"]), ("Fail", "Ignore"), "per webhook")
    # the deprecated shared value (0.1.0's) still sets both
    m, v = webhooks(helm_template({"webhook": {"failurePolicy": "Ignore", "validating": {"failurePolicy": "Fail"}}}))
    eq((m["webhooks"][0]["failurePolicy"], v["webhooks"][0]["failurePolicy"]), ("Ignore", "Ignore"), "deprecated")


def match_expression(docs):
    m, v = webhooks(docs)
    conds = [cfg["webhooks"][0].get("matchConditions") for cfg in (m, v)]
    eq(conds[0], conds[1], "both webhooks carry the same matchConditions")
    return conds[0]


@test
def match_conditions_follow_the_policy_resources():
    conds = match_expression(helm_template())
    eq([c["name"] for c in conds], ["gpu-or-rdma-template"], "names")
    expr = conds[0]["expression"]
    regex = re.search(r"k\.matches\(r'([^']*)'\)", expr).group(1)
    for name in ("nvidia.com/gpu", "amd.com/gpu", "rdma/vf", "nvidia.com/sriov_rdma_a", "openshift.io/mlx5",
                 "rdma/hca_shared_devices_a", "rdma/ib"):
        assert re.fullmatch(regex, name), f"{name} would skip the webhook"
    for name in ("cpu", "memory", "ephemeral-storage", "nvidia.com/gpuX", "xrdma/vf", "hugepages-2Mi"):
        assert not re.fullmatch(regex, name), f"{name} would be sent"
    for needle in ("object.spec.template.spec", "object.spec.jobTemplate.spec.template.spec", "initContainers",
                   "resourceClaims", "request.operation in ['CREATE', 'UPDATE']"):
        assert needle in expr, f"expression lacks {needle}"
    # a custom policy's names and extraResources are what the expression matches
    conds = match_expression(helm_template({"policy": {"gpuResources": ["example.com/tpu"],
                                                       "resources": {"vf": ["example.com/vf-*"], "shared": []}},
                                            "webhook": {"matchConditions": {"extraResources": ["example.com/hca?"]}}}))
    regex = re.search(r"k\.matches\(r'([^']*)'\)", conds[0]["expression"]).group(1)
    for name in ("example.com/tpu", "example.com/vf-a", "example.com/hca1"):
        assert re.fullmatch(regex, name), name
    for name in ("example.com/tpux", "example.com/hca12"):
        assert not re.fullmatch(regex, name), name
    # off, and never rendered where matchConditions are not GA
    eq(match_expression(helm_template({"webhook": {"matchConditions": {"gpuOrRdmaOnly": False}}})), None, "off")
    r = run([HELM, "template", RELEASE, CHART, "-n", NS, "--kube-version", "1.29.0"] + UNQUALIFIED_OK)
    assert r.returncode == 0, r.stderr
    eq(match_expression([d for d in yaml.safe_load_all(r.stdout) if d]), None, "Kubernetes 1.29")


@test
def image_repository_must_name_a_registry():
    r = run([HELM, "template", RELEASE, CHART, "-n", NS])
    assert r.returncode != 0, "the default, registry-less repository rendered"
    for needle in ("image.repository", "names no registry", "image.allowUnqualified"):
        assert needle in r.stderr, f"error lacks {needle!r}: {r.stderr}"
    for repo in ("registry.example.internal/platform/rdma-webhook", "localhost:5000/rdma-webhook",
                 "localhost/rdma-webhook", "10.0.0.1:5000/rw"):
        r = run([HELM, "template", RELEASE, CHART, "-n", NS, "--set", "image.repository=" + repo])
        assert r.returncode == 0, f"{repo}: {r.stderr}"
        assert f'image: "{repo}:0.1.0"' in r.stdout, repo
    for repo in ("platform/rdma-webhook", "rdma-webhook"):
        r = run([HELM, "template", RELEASE, CHART, "-n", NS, "--set", "image.repository=" + repo])
        assert r.returncode != 0 and "names no registry" in r.stderr, f"{repo} accepted"
    schema = json.load(open(os.path.join(CHART, "values.schema.json")))
    assert "registry" in schema["properties"]["image"]["properties"]["repository"]["description"]
    assert "SET THIS" in open(os.path.join(CHART, "values.yaml")).read()


@test
def helm_test_pod_validates_the_mounted_policy():
    docs = helm_template()
    pod = one(docs, "Pod")
    eq(pod["metadata"]["name"], f"{FULLNAME}-test-policy", "name")
    eq(pod["metadata"]["annotations"]["helm.sh/hook"], "test", "hook")
    c = pod["spec"]["containers"][0]
    eq(c["image"], "rdma-webhook:0.1.0", "the release's own image")
    eq(c["args"], ["policy", "validate", "/etc/rdma-webhook/policy/policy.yaml"], "args")
    eq(pod["spec"]["volumes"][0]["configMap"]["name"], f"{FULLNAME}-policy", "the webhook's policy ConfigMap")
    dep, _ = container(docs)
    sel = dep["spec"]["selector"]["matchLabels"]
    assert not all(pod["metadata"]["labels"].get(k) == v for k, v in sel.items()), "test pod matches the Service"
    eq(c["securityContext"]["readOnlyRootFilesystem"], True, "read-only root")
    assert not objs(helm_template({"helmTest": {"enabled": False}}), "Pod"), "helmTest.enabled=false"


@test
def audit_rbac_is_namespace_only():
    def audit_only(docs):  # the cluster watch's own read-only role is tested on its own
        return [d for d in docs if not d["metadata"]["name"].endswith("-watch")]
    assert not [d for d in audit_only(helm_template())
                if d["kind"] in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")]
    docs = helm_template({"auditRBAC": {"enabled": True, "namespaces": ["team-a", "team-b"],
                                        "subjects": [{"kind": "Group", "name": "team-a-devs"},
                                                     {"kind": "ServiceAccount", "name": "ci", "namespace": "ci"}]}})
    assert not objs(audit_only(docs), "ClusterRoleBinding"), "a ClusterRoleBinding grants cluster-wide rights"
    cr = one(docs, "ClusterRole", f"{FULLNAME}-audit")
    for rule in cr["rules"]:
        eq(sorted(rule["verbs"]), ["get", "list", "watch"], "read-only verbs")
        assert "configmaps" not in rule["resources"] and "secrets" not in rule["resources"], rule
    granted = {(g, r) for rule in cr["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert {("", "pods"), ("batch", "jobs"), ("kubeflow.org", "pytorchjobs")} <= granted, granted
    rbs = objs(docs, "RoleBinding")
    eq(sorted((rb["metadata"]["namespace"], rb["roleRef"]["name"]) for rb in rbs),
       [(NS, f"{FULLNAME}-audit-policy"), ("team-a", f"{FULLNAME}-audit"), ("team-b", f"{FULLNAME}-audit")],
       "bindings")
    eq(rbs[0]["subjects"], [{"kind": "Group", "name": "team-a-devs", "apiGroup": "rbac.authorization.k8s.io"},
                            {"kind": "ServiceAccount", "name": "ci", "namespace": "ci"}], "subjects")
    role = one(docs, "Role")
    eq(role["rules"], [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [f"{FULLNAME}-policy"],
                        "verbs": ["get"]}], "policy Role")
    expect_failure({"auditRBAC": {"enabled": True, "namespaces": ["a"]}}, "auditRBAC.subjects")
    expect_failure({"auditRBAC": {"enabled": True, "subjects": [{"kind": "ServiceAccount", "name": "x"}]}},
                   "namespace")


@test
def custom_kinds_list():
    custom = [{"apiGroups": ["trainer.example.com"], "resources": ["trainjobs"]},
              {"apiGroups": ["kubeflow.org"], "apiVersions": ["v2beta1"], "resources": ["mpijobs"],
               "operations": ["CREATE"]}]
    docs = helm_template({"webhook": {"crdRules": custom}})
    for cfg in webhooks(docs):
        rules = cfg["webhooks"][0]["rules"]
        eq(flatten_rules(rules), {**BUILTIN_RULES, ("trainer.example.com", "trainjobs"): ["CREATE", "UPDATE"],
                                  ("kubeflow.org", "mpijobs"): ["CREATE"]}, "rules")
        eq(rules[-2]["apiVersions"], ["*"], "default apiVersions")
        eq(rules[-1]["apiVersions"], ["v2beta1"], "apiVersions")
    # a cluster without any of the CRDs
    docs = helm_template({"webhook": {"crdRules": []}})
    for cfg in webhooks(docs):
        eq(flatten_rules(cfg["webhooks"][0]["rules"]), BUILTIN_RULES, "rules without CRDs")


@test
def policy_kinds_dns_policy_is_one_kubernetes_has():
    # The schema refuses what the binary's loader refuses: a dnsPolicy Kubernetes does not have.
    kind = {"group": "trainer.example.com", "kind": "TrainJob", "templates": ["/spec/roles/*/template"],
            "hostNetworkDnsPolicy": "ClusterFirstWithHostNetwork"}
    expect_failure({"policy": {"kinds": [kind]}}, "hostNetworkDnsPolicy")
    expect_failure({"policy": {"kinds": [{**kind, "hostNetworkDnsPolicy": "Default", "multiNode": "yes"}]}},
                   "multiNode")


@test
def cluster_watch_rbac_is_read_only_on_the_watched_kinds():
    docs = helm_template()
    _, c = container(docs)
    args = c["args"]
    assert "--watch-cluster" in args, args
    eq(args[args.index("--watch-ready-timeout") + 1], "30s", "--watch-ready-timeout")
    role = one(docs, "ClusterRole", f"{RELEASE}-rdma-webhook-watch")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    # The server's kinds table (src/server/watched_kinds.cc), nothing more.
    eq(granted, {("resource.k8s.io", "deviceclasses"), ("resource.k8s.io", "resourceclaimtemplates"),
                 ("resource.k8s.io", "resourceclaims"),
                 ("k8s.cni.cncf.io", "network-attachment-definitions"),
                 ("trainer.kubeflow.org", "clustertrainingruntimes"),
                 ("trainer.kubeflow.org", "trainingruntimes"),
                 ("resource.nvidia.com", "computedomains")}, "watched resources")
    for rule in role["rules"]:
        eq(sorted(rule["verbs"]), ["get", "list", "watch"], "verbs")
    binding = one(docs, "ClusterRoleBinding", f"{RELEASE}-rdma-webhook-watch")
    sa = one(docs, "ServiceAccount")
    eq(binding["roleRef"]["name"], role["metadata"]["name"], "roleRef")
    eq(binding["subjects"], [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                              "namespace": NS}], "subjects")
    # Egress to the API server only while the watch runs.
    np = one(helm_template({"networkPolicy": {"enabled": True}}), "NetworkPolicy")
    eq(sorted(p["port"] for p in np["spec"]["egress"][0]["ports"]), [443, 6443], "egress ports")
    off = helm_template({"clusterWatch": {"enabled": False}, "networkPolicy": {"enabled": True}})
    assert not objs(off, "ClusterRoleBinding"), "a binding without the watch"
    eq(one(off, "NetworkPolicy")["spec"]["egress"], [], "no egress without the watch")
    assert "--watch-cluster" not in container(off)[1]["args"]
    expect_failure({"clusterWatch": {"readyTimeout": "soon"}}, "readyTimeout")


@test
def pod_and_container_security():
    docs = helm_template()
    dep, c = container(docs)
    pod = dep["spec"]["template"]["spec"]
    # The token is mounted for the cluster watch (on by default), and only then.
    eq(pod["automountServiceAccountToken"], True, "pod automountServiceAccountToken")
    off = container(helm_template({"clusterWatch": {"enabled": False}}))[0]
    eq(off["spec"]["template"]["spec"]["automountServiceAccountToken"], False,
       "pod automountServiceAccountToken without the watch")
    sa = one(docs, "ServiceAccount")
    eq(sa["automountServiceAccountToken"], False, "ServiceAccount automountServiceAccountToken")
    eq(pod["serviceAccountName"], sa["metadata"]["name"], "serviceAccountName")
    psc = pod["securityContext"]
    eq(psc["runAsNonRoot"], True, "runAsNonRoot")
    eq(psc["runAsUser"], 65532, "runAsUser")
    eq(psc["runAsGroup"], 65532, "runAsGroup")
    eq(psc["seccompProfile"], {"type": "RuntimeDefault"}, "pod seccompProfile")
    sc = c["securityContext"]
    eq(sc["readOnlyRootFilesystem"], True, "readOnlyRootFilesystem")
    eq(sc["allowPrivilegeEscalation"], False, "allowPrivilegeEscalation")
    eq(sc["capabilities"], {"drop": ["ALL"]}, "capabilities")
    eq(sc["runAsNonRoot"], True, "container runAsNonRoot")
    eq(sc["runAsUser"], 65532, "container runAsUser")
    eq(sc["seccompProfile"], {"type": "RuntimeDefault"}, "container seccompProfile")
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    for vol in pod["volumes"]:
        assert "hostPath" not in vol, vol


@test
def uid_matches_the_dockerfile():
    text = open(os.path.join(REPO, "Dockerfile")).read()
    eq(re.findall(r"^USER (\S+)", text, re.M), ["65532:65532"], "Dockerfile USER")
    v = chart_values()["securityContext"]
    eq((v["runAsUser"], v["runAsGroup"]), (65532, 65532), "chart UID/GID")


EXPECTED_ARGS = ["serve", "--tls-cert", "/etc/rdma-webhook/tls/tls.crt", "--tls-key", "/etc/rdma-webhook/tls/tls.key",
                 "--policy", "/etc/rdma-webhook/policy/policy.yaml", "--listen", "0.0.0.0:8443",
                 "--probe-listen", "0.0.0.0:8080", "--log-format", "json", "--shutdown-delay", "5s"]
# The chart adds the cluster watch; the image's CMD does not (it runs outside a cluster too).
CHART_ARGS = EXPECTED_ARGS + ["--watch-cluster", "--watch-ready-timeout", "30s"]


@test
def server_args_ports_and_probes():
    docs = helm_template()
    dep, c = container(docs)
    eq(c["args"], CHART_ARGS, "args")
    assert "command" not in c, "command overrides the image ENTRYPOINT"
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    eq(ports, {"https": 8443, "http-probe": 8080}, "ports")
    eq(c["livenessProbe"]["httpGet"], {"path": "/healthz", "port": "http-probe"}, "livenessProbe")
    eq(c["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "http-probe"}, "readinessProbe")
    eq(c["startupProbe"]["httpGet"], {"path": "/healthz", "port": "http-probe"}, "startupProbe")
    for p in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert "scheme" not in c[p]["httpGet"], "the probe port is plain HTTP"
    # optional args
    docs = helm_template({"server": {"logLevel": "debug", "threads": 4, "maxBodyBytes": 1048576,
                                     "clientCA": {"configMapName": "apiserver-client-ca"},
                                     "extraArgs": ["--foo=bar"], "port": 9443, "probePort": 9080,
                                     "logFormat": "text", "shutdownDelay": "2500ms"}})
    dep, c = container(docs)
    a = c["args"]
    for pair in (["--log-level", "debug"], ["--threads", "4"], ["--max-body-bytes", "1048576"],
                 ["--client-ca", "/etc/rdma-webhook/client-ca/ca.crt"], ["--listen", "0.0.0.0:9443"],
                 ["--probe-listen", "0.0.0.0:9080"], ["--log-format", "text"], ["--shutdown-delay", "2500ms"]):
        i = a.index(pair[0])
        eq(a[i:i + 2], pair, pair[0])
    eq(a[-1], "--foo=bar", "extraArgs")
    assert {"name": "client-ca", "mountPath": "/etc/rdma-webhook/client-ca", "readOnly": True} in c["volumeMounts"]
    eq({p["name"]: p["containerPort"] for p in c["ports"]}, {"https": 9443, "http-probe": 9080}, "custom ports")
    svc = one(docs, "Service")
    eq({p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]},
       {"https": (443, "https"), "http-metrics": (9080, "http-probe")}, "service ports")


@test
def args_match_the_dockerfile_cmd():
    text = open(os.path.join(REPO, "Dockerfile")).read()
    m = re.search(r'^CMD (\[.*?\])\s*$', text, re.M | re.S)
    assert m, "no CMD in exec form"
    cmd = json.loads(m.group(1).replace("\\\n", " "))
    eq(cmd, EXPECTED_ARGS, "Dockerfile CMD")
    assert re.search(r'^ENTRYPOINT \["/rdma-webhook"\]', text, re.M)


@test
def tls_and_policy_are_directory_mounts():
    docs = helm_template()
    dep, c = container(docs)
    pod = dep["spec"]["template"]["spec"]
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    for m in mounts.values():
        assert "subPath" not in m and "subPathExpr" not in m, f"subPath mount {m}"
        eq(m.get("readOnly"), True, f"{m['name']} readOnly")
    eq(mounts["tls"]["mountPath"], "/etc/rdma-webhook/tls", "tls mountPath")
    eq(mounts["policy"]["mountPath"], "/etc/rdma-webhook/policy", "policy mountPath")
    vols = {v["name"]: v for v in pod["volumes"]}
    eq(vols["tls"]["secret"]["secretName"], f"{FULLNAME}-tls", "tls secret")
    eq(vols["policy"]["configMap"]["name"], f"{FULLNAME}-policy", "policy configmap")
    assert "items" not in vols["tls"]["secret"] and "items" not in vols["policy"]["configMap"]
    one(docs, "ConfigMap", f"{FULLNAME}-policy")
    one(docs, "Secret", f"{FULLNAME}-tls")
    assert "checksum/config" not in (dep["spec"]["template"]["metadata"].get("annotations") or {})


@test
def availability_replicas_spread_pdb_drain():
    docs = helm_template()
    dep, c = container(docs)
    spec = dep["spec"]
    pod = spec["template"]["spec"]
    eq(spec["replicas"], 2, "replicas")
    eq(spec["strategy"]["rollingUpdate"]["maxUnavailable"], 0, "maxUnavailable")
    sel = spec["selector"]["matchLabels"]
    for k, v in sel.items():
        eq(spec["template"]["metadata"]["labels"].get(k), v, f"pod label {k}")
    tsc = pod["topologySpreadConstraints"]
    eq(tsc[0]["topologyKey"], "kubernetes.io/hostname", "topologyKey")
    eq(tsc[0]["labelSelector"]["matchLabels"], sel, "spread selector")
    aa = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    eq(aa["podAffinityTerm"]["topologyKey"], "kubernetes.io/hostname", "anti-affinity key")
    pdb = one(docs, "PodDisruptionBudget")
    eq(pdb["spec"]["selector"]["matchLabels"], sel, "PDB selector")
    eq(pdb["spec"]["maxUnavailable"], 1, "PDB maxUnavailable")
    r = c["resources"]
    assert r["requests"]["cpu"] and r["requests"]["memory"] and r["limits"]["memory"], r
    assert pod["terminationGracePeriodSeconds"] > 5 + 5, "grace period not above shutdown delay + timeout"
    assert "lifecycle" not in c, "no preStop by default: the server drains itself"
    # one replica: no PDB that would block drains
    docs = helm_template({"replicaCount": 1})
    assert not objs(docs, "PodDisruptionBudget")
    # the kubelet's sleep handler on request
    docs = helm_template({"preStopSleepSeconds": 5})
    dep, c = container(docs)
    eq(c["lifecycle"], {"preStop": {"sleep": {"seconds": 5}}}, "lifecycle")
    # hard spread, custom affinity
    docs = helm_template({"topologySpread": {"whenUnsatisfiable": "DoNotSchedule"},
                          "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                              "nodeSelectorTerms": [{"matchExpressions": [
                                  {"key": "node-role", "operator": "In", "values": ["infra"]}]}]}}}})
    dep, c = container(docs)
    eq(dep["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"], "DoNotSchedule", "spread")
    eq(list(dep["spec"]["template"]["spec"]["affinity"]), ["nodeAffinity"], "affinity override")


@test
def grace_period_must_exceed_the_drain():
    err = expect_failure({"terminationGracePeriodSeconds": 10, "preStopSleepSeconds": 5}, "terminationGracePeriodSeconds")
    assert "15" in err, err
    expect_failure({"server": {"shutdownDelay": "5 seconds"}}, "shutdownDelay")
    docs = helm_template({"server": {"shutdownDelay": "1m"}, "terminationGracePeriodSeconds": 90})
    eq(container(docs)[0]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 90, "grace")
    expect_failure({"server": {"shutdownDelay": "1m"}}, "terminationGracePeriodSeconds")
    r = run([HELM, "template", RELEASE, CHART, "-n", NS, "--set", "preStopSleepSeconds=3", "--kube-version", "1.29.0"] + UNQUALIFIED_OK)
    assert r.returncode != 0 and "preStopSleepSeconds" in r.stderr and "1.30" in r.stderr, r.stderr


# ------------------------------------------------------------ certificates

@test
def certs_chart_mode():
    docs = helm_template(values={"certificates": {"extraDNSNames": ["webhook.example.internal"]}})
    tls = one(docs, "Secret", f"{FULLNAME}-tls")
    ca = one(docs, "Secret", f"{FULLNAME}-ca")
    eq(tls["type"], "kubernetes.io/tls", "type")
    crt = base64.b64decode(tls["data"]["tls.crt"]).decode()
    key = base64.b64decode(tls["data"]["tls.key"]).decode()
    ca_crt = base64.b64decode(tls["data"]["ca.crt"]).decode()
    eq(base64.b64decode(ca["data"]["tls.crt"]).decode(), ca_crt, "CA in both Secrets")
    assert "ca.key" not in tls["data"], "CA key in the mounted Secret"
    assert "PRIVATE KEY" in key
    want = [f"DNS:{FULLNAME}", f"DNS:{FULLNAME}.{NS}", f"DNS:{FULLNAME}.{NS}.svc",
            f"DNS:{FULLNAME}.{NS}.svc.cluster.local", "DNS:webhook.example.internal"]
    eq(sans(crt), want, "SANs")
    verify_chain(ca_crt, crt)
    assert "CA:TRUE" in openssl_text(ca_crt)
    for wh in webhooks(docs):
        eq(base64.b64decode(wh["webhooks"][0]["clientConfig"]["caBundle"]).decode(), ca_crt, "caBundle")
        assert "cert-manager.io/inject-ca-from" not in (wh["metadata"].get("annotations") or {})
    # The CA Secret is never mounted.
    dep, c = container(docs)
    names = [v.get("secret", {}).get("secretName") for v in dep["spec"]["template"]["spec"]["volumes"]]
    assert f"{FULLNAME}-ca" not in names, names
    assert not objs(docs, "Certificate") and not objs(docs, "Issuer")


@test
def certs_chart_mode_reuse_on_upgrade_is_wired():
    # `lookup` returns nothing under `helm template`; check the template
    # asks for the stored CA and serving Secrets and reuses them.
    text = open(os.path.join(CHART, "templates", "webhooks.yaml")).read()
    assert re.search(r'lookup "v1" "Secret" \$ns \$caSecretName', text)
    assert re.search(r'lookup "v1" "Secret" \$ns \$secretName', text)
    assert "buildCustomCert" in text and "renewServingCert" in text


@test
def certs_cert_manager_mode():
    docs = helm_template({"certificates": {"mode": "certManager"}})
    assert not objs(docs, "Secret"), "Secrets rendered in certManager mode"
    issuers = {d["metadata"]["name"]: d for d in objs(docs, "Issuer")}
    eq(sorted(issuers), sorted([f"{FULLNAME}-selfsigned", f"{FULLNAME}-ca"]), "issuers")
    eq(issuers[f"{FULLNAME}-ca"]["spec"], {"ca": {"secretName": f"{FULLNAME}-ca"}}, "CA issuer")
    certs = {d["metadata"]["name"]: d for d in objs(docs, "Certificate")}
    eq(certs[f"{FULLNAME}-ca"]["spec"]["isCA"], True, "isCA")
    serving = certs[f"{FULLNAME}-tls"]["spec"]
    eq(serving["secretName"], f"{FULLNAME}-tls", "secretName")
    eq(serving["dnsNames"], [FULLNAME, f"{FULLNAME}.{NS}", f"{FULLNAME}.{NS}.svc",
                             f"{FULLNAME}.{NS}.svc.cluster.local"], "dnsNames")
    eq(serving["issuerRef"], {"name": f"{FULLNAME}-ca", "kind": "Issuer", "group": "cert-manager.io"}, "issuerRef")
    for wh in webhooks(docs):
        eq(wh["metadata"]["annotations"]["cert-manager.io/inject-ca-from"], f"{NS}/{FULLNAME}-tls", "inject-ca-from")
        assert "caBundle" not in wh["webhooks"][0]["clientConfig"]
    # an existing issuer
    ref = {"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    docs = helm_template({"certificates": {"mode": "certManager", "certManager": {"issuerRef": ref}}})
    assert not objs(docs, "Issuer")
    eq(one(docs, "Certificate")["spec"]["issuerRef"], ref, "issuerRef")


@test
def certs_existing_secret_mode():
    docs = helm_template(existing_secret_values())
    assert not objs(docs, "Secret") and not objs(docs, "Certificate") and not objs(docs, "Issuer")
    for wh in webhooks(docs):
        eq(wh["webhooks"][0]["clientConfig"]["caBundle"], CA_PLACEHOLDER, "caBundle")
    dep, c = container(docs)
    vols = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    eq(vols["tls"]["secret"]["secretName"], "my-tls", "secretName")
    expect_failure({"certificates": {"mode": "existingSecret", "secretName": "x"}}, "certificates.existingSecret.caBundle")
    expect_failure({"certificates": {"mode": "existingSecret", "existingSecret": {"caBundle": CA_PLACEHOLDER}}},
                   "certificates.secretName")
    expect_failure(existing_secret_values(certificates={"mode": "existingSecret", "secretName": "x",
                                                        "existingSecret": {"caBundle": "not base64!"}}),
                   "caBundle")


# ------------------------------------------------------------------ policy

def rendered_policy(docs):
    cm = one(docs, "ConfigMap", f"{FULLNAME}-policy")
    eq(list(cm["data"]), ["policy.yaml"], "ConfigMap keys")
    return cm["data"]["policy.yaml"], yaml.safe_load(cm["data"]["policy.yaml"])


CUSTOM_POLICY = {
    "apiVersion": "rdma-webhook/v1", "kind": "Policy",
    "gpuResources": ["nvidia.com/gpu", "amd.com/gpu"],
    "resources": {"vf": ["rdma/vf"], "shared": ["rdma/hca_shared_devices_a"]},
    "rdmaNetworks": ["sriov-rdma-net"],
    "kinds": [{"group": "trainer.example.com", "kind": "TrainJob", "templates": ["/spec/roles/*/template"],
               "multiNode": True, "hostNetworkDnsPolicy": "ClusterFirstWithHostNet"}],
    "defaults": {"mode": "off", "validation": "warn"},
    "namespaces": [
        {"names": ["train-*", "llm"], "mode": "hostNetwork", "validation": "deny",
         "allowedPaths": ["hostNetwork", "tcp"], "exclusiveNodes": True, "onConflict": "reject", "optOut": False,
         "injectShm": True, "hostNetwork": {"socketIfname": "bond0", "deviceResource": "rdma/hca_shared_devices_a"},
         "nccl": {"fabric": "roce", "gidIndex": 3, "hca": "=mlx5_0:1", "gdrLevel": "PHB",
                  "extraEnv": {"NCCL_DEBUG": "INFO"}}},
        {"names": ["tenant-?"], "mode": "sriov", "onConflict": "override",
         "sriov": {"networks": [{"network": "rdma/sriov-rdma-net", "interface": "net1", "resource": "rdma/vf"}],
                   "annotationKey": "k8s.v1.cni.cncf.io/networks", "defaultNetworks": []},
         "nccl": {"fabric": "ib", "gidIndex": "auto"}},
        {"names": ["short"], "mode": "sriov",
         "sriov": {"network": "sriov-rdma-net", "interface": "eth1", "resource": "rdma/vf", "count": 2}},
        {"names": ["pool"], "mode": "shared",
         "shared": {"resource": "rdma/hca_shared_devices_a", "count": 1, "network": "", "interface": ""}},
        {"names": ["ci"], "mode": "tcp", "validation": "off"},
    ],
}


@test
def policy_configmap_default_matches_values():
    text, got = rendered_policy(helm_template())
    eq(got, chart_values()["policy"], "default policy")
    assert 'mode: "off"' in text or "mode: 'off'" in text, "off must stay a string:\n" + text


@test
def policy_default_resource_lists_are_the_embedded_defaults():
    # The chart's policy names every list (its matchConditions are built from them), so it cannot
    # inherit them: were they shorter, the webhook would read a MIG or eRDMA job as `none` while
    # `rdma-webhook check` without --policy reads it as RDMA.
    r = subprocess.run([binary(), "policy", "default"], capture_output=True, text=True, check=True)
    embedded = yaml.safe_load(r.stdout)
    chart = chart_values()["policy"]
    for key in ("gpuResources", "rdmaNetworks"):
        eq(chart[key], embedded[key], f"policy.{key}")
    for key in ("vf", "shared"):
        eq(chart["resources"][key], embedded["resources"][key], f"policy.resources.{key}")


@test
def policy_configmap_custom_policy_matches_values():
    text, got = rendered_policy(helm_template({"policy": CUSTOM_POLICY}))
    # Helm merges maps with the defaults; lists are replaced, and every key
    # of the custom policy is given, so the result is exactly the custom one.
    eq(got, CUSTOM_POLICY, "custom policy")


@test
def policy_configmap_unquoted_off_is_false():
    values = "policy:\n  defaults:\n    mode: off\n    validation: off\n  namespaces: []\n"
    text, got = rendered_policy(helm_template(values))
    eq(got["defaults"], {"mode": False, "validation": False}, "off read as false")


# ---------------------------------------------------------- optional bits

@test
def network_policy_and_service_monitor():
    docs = helm_template({"networkPolicy": {"enabled": True, "metricsFrom": [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]},
        "serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}})
    np = one(docs, "NetworkPolicy")
    eq(sorted(np["spec"]["policyTypes"]), ["Egress", "Ingress"], "policyTypes")
    eq(np["spec"]["egress"], [{"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}],
       "egress: the API server only, for the cluster watch")
    ing = np["spec"]["ingress"]
    eq(ing[0]["ports"], [{"port": "https", "protocol": "TCP"}], "webhook ingress port")
    assert "from" not in ing[0], "the API server must be allowed from anywhere by default"
    eq(ing[1]["ports"], [{"port": "http-probe", "protocol": "TCP"}], "metrics ingress port")
    eq(ing[1]["from"][0]["namespaceSelector"]["matchLabels"], {"kubernetes.io/metadata.name": "monitoring"}, "from")
    sm = one(docs, "ServiceMonitor")
    eq(sm["metadata"]["labels"]["release"], "prom", "label")
    eq(sm["spec"]["endpoints"][0]["port"], "http-metrics", "port")
    eq(sm["spec"]["endpoints"][0]["path"], "/metrics", "path")
    svc_ports = [p["name"] for p in one(docs, "Service")["spec"]["ports"]]
    assert "http-metrics" in svc_ports
    assert not objs(helm_template(), "NetworkPolicy") and not objs(helm_template(), "ServiceMonitor")


@test
def notes_say_how_to_label_and_about_pod_security():
    r = run([HELM, "install", RELEASE, CHART, "--namespace", NS, "--dry-run=client"] + UNQUALIFIED_OK)
    if r.returncode != 0 and "cluster" in r.stderr.lower():
        # older Helm needs a cluster for install --dry-run; fall back to the file
        out = open(os.path.join(CHART, "templates", "NOTES.txt")).read()
    else:
        assert r.returncode == 0, r.stderr
        out = r.stdout.split("NOTES:", 1)[1]
    for needle in ("kubectl label namespace", "rdma-webhook.io/enabled=true",
                   "pod-security.kubernetes.io/enforce=privileged", "IPC_LOCK", "hostNetwork",
                   "kind: Job", "--dry-run=server",
                   # the failure policies, the helm test, the registry-less image and lookup's caveat
                   "failurePolicy: mutating", "validating", "helm test", "names no registry",
                   "Argo CD, Flux and `helm template` render a new CA"):
        assert needle in out, f"NOTES.txt lacks {needle!r}"


# ------------------------------------------- alerts and dashboard (opt-in)

ALERTS_TEST = os.path.join(REPO, "tests", "chart", "alerts_test.yaml")
ALERTS_DOC = os.path.join(REPO, "docs", "alerts.md")
DASHBOARD = os.path.join(CHART, "dashboards", "rdma-webhook.json")


def promtool():
    p = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if not p:
        if os.environ.get("CI") == "true":
            raise AssertionError("CI=true but promtool is missing (Debian package prometheus; scripts/setup.sh --test)")
        raise Skip("promtool not found (apt-get install prometheus, or set PROMTOOL)")
    return p


def prometheus_rule(values=None, sets=()):
    docs = helm_template(values, sets=("metrics.prometheusRule.enabled=true",) + tuple(sets))
    return one(docs, "PrometheusRule")


def alert_rules(rule):
    return [r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]


@test
def default_render_has_no_prometheus_rule_or_dashboard():
    docs = helm_template()
    assert not objs(docs, "PrometheusRule"), "PrometheusRule rendered by default"
    assert not [d for d in objs(docs, "ConfigMap") if d["metadata"]["name"].endswith("-dashboard")], \
        "dashboard ConfigMap rendered by default"
    values = chart_values()["metrics"]
    eq(values["prometheusRule"]["enabled"], False, "metrics.prometheusRule.enabled default")
    eq(values["dashboard"]["enabled"], False, "metrics.dashboard.enabled default")


@test
def prometheus_rule_alerts_labels_and_runbooks():
    rule = prometheus_rule({"metrics": {"prometheusRule": {
        "labels": {"release": "kube-prometheus-stack"}, "namespace": "monitoring",
        "runbookBaseURL": "https://git.example.com/rdma-webhook/blob/main/docs/alerts.md"}}})
    eq(rule["metadata"]["namespace"], "monitoring", "namespace knob")
    eq(rule["metadata"]["labels"]["release"], "kube-prometheus-stack", "extra label")
    eq(rule["metadata"]["labels"]["app.kubernetes.io/name"], "rdma-webhook", "chart labels")
    alerts = alert_rules(rule)
    names = [a["alert"] for a in alerts]
    eq(sorted(names), sorted(["RdmaWebhookDown", "RdmaWebhookAbsent", "RdmaWebhookServerErrors",
                              "RdmaWebhookLatencyHigh", "RdmaWebhookDenialSurge", "RdmaWebhookReloadFailed",
                              "RdmaWebhookCertificateExpiringSoon", "RdmaWebhookCertificateExpiryCritical"]),
       "alerts")
    doc = open(ALERTS_DOC).read()
    headings = set(re.findall(r"^##+ (\S+)\s*$", doc, re.M))
    for a in alerts:
        name = a["alert"]
        assert a["labels"]["severity"] in ("warning", "critical"), name
        for k in ("summary", "description", "runbook_url"):
            assert a["annotations"].get(k), f"{name} lacks {k}"
        eq(a["annotations"]["runbook_url"],
           "https://git.example.com/rdma-webhook/blob/main/docs/alerts.md#" + name.lower(), f"{name} runbook_url")
        assert name in headings, f"docs/alerts.md has no '## {name}' section (the runbook_url anchor)"
        # every alert is scoped to this release's series
        assert 'namespace="rdma-system"' in a["expr"] and f'job="{FULLNAME}"' in a["expr"], f"{name}: {a['expr']}"
    # the metric names are the server's (docs/http.md#metrics)
    exprs = " ".join(a["expr"] for a in alerts)
    for metric in ("rdma_webhook_requests_total", "rdma_webhook_request_duration_seconds_bucket",
                   "rdma_webhook_decisions_total", "rdma_webhook_reloads_total",
                   "rdma_webhook_certificate_expiry_timestamp_seconds", "up{"):
        assert metric in exprs, f"no alert uses {metric}"
    assert 'result="failure"' in exprs and 'allowed="false"' in exprs


@test
def prometheus_rule_thresholds_follow_values():
    def expr(rule, name):
        return next(a["expr"] for a in alert_rules(rule) if a["alert"] == name)
    # p99 threshold: half the webhook timeout, capped at the histogram's largest finite bucket
    assert expr(prometheus_rule(), "RdmaWebhookLatencyHigh").rstrip().endswith(">= 2.5")
    assert expr(prometheus_rule(sets=["webhook.timeoutSeconds=1"]), "RdmaWebhookLatencyHigh").rstrip().endswith(">= 0.5")
    assert expr(prometheus_rule(sets=["webhook.timeoutSeconds=30", "terminationGracePeriodSeconds=40"]), "RdmaWebhookLatencyHigh").rstrip().endswith(">= 2.5")
    # (a fraction through --set would be a string, which the schema refuses: -f or --set-json)
    assert expr(prometheus_rule({"metrics": {"prometheusRule": {"latencyThresholdSeconds": 0.75}}}),
                "RdmaWebhookLatencyHigh").rstrip().endswith(">= 0.75")
    r = prometheus_rule(sets=["metrics.prometheusRule.certificateExpiryWarningDays=30",
                              "metrics.prometheusRule.certificateExpiryCriticalDays=7",
                              "metrics.prometheusRule.job=webhook-metrics"])
    assert expr(r, "RdmaWebhookCertificateExpiringSoon").rstrip().endswith("< 30 * 86400")
    assert expr(r, "RdmaWebhookCertificateExpiryCritical").rstrip().endswith("< 7 * 86400")
    assert 'job="webhook-metrics"' in expr(r, "RdmaWebhookDown")
    expect_failure({"metrics": {"prometheusRule": {"enabled": True, "certificateExpiryWarningDays": 3,
                                                   "certificateExpiryCriticalDays": 3}}},
                   "certificateExpiryCriticalDays")


@test
def prometheus_rule_passes_promtool_check_and_unit_tests():
    tool = promtool()
    rule = prometheus_rule()
    d = tempfile.mkdtemp(dir=TMP)
    rules = os.path.join(d, "rules.yaml")
    with open(rules, "w") as f:
        yaml.safe_dump(rule["spec"], f, sort_keys=False)
    r = run([tool, "check", "rules", rules])
    assert r.returncode == 0, r.stdout + r.stderr
    shutil.copy(ALERTS_TEST, d)
    r = run([tool, "test", "rules", os.path.join(d, os.path.basename(ALERTS_TEST))])
    assert r.returncode == 0, r.stdout + r.stderr
    # every alert has a case that fires it and one where it stays silent
    tests = yaml.safe_load(open(ALERTS_TEST))["tests"]
    fired, silent = set(), set()
    for t in tests:
        for case in t.get("alert_rule_test", []):
            (fired if case.get("exp_alerts") else silent).add(case["alertname"])
    for a in alert_rules(rule):
        assert a["alert"] in fired, f"alerts_test.yaml has no case that fires {a['alert']}"
        assert a["alert"] in silent, f"alerts_test.yaml has no case where {a['alert']} stays silent"


@test
def dashboard_configmap_renders_only_when_enabled():
    dash = json.load(open(DASHBOARD))
    docs = helm_template({"metrics": {"dashboard": {"enabled": True, "annotations": {"grafana_folder": "Admission"}}}})
    cm = one(docs, "ConfigMap", FULLNAME + "-dashboard")
    eq(cm["metadata"]["labels"]["grafana_dashboard"], "1", "sidecar label")
    eq(cm["metadata"]["annotations"], {"grafana_folder": "Admission"}, "annotations")
    eq(cm["metadata"]["namespace"], NS, "namespace")
    eq(json.loads(cm["data"]["rdma-webhook.json"]), dash, "ConfigMap holds the dashboard file")
    # Helm merges the labels map with the default; null drops the default label
    cm = one(helm_template({"metrics": {"dashboard": {"enabled": True, "namespace": "grafana",
                                                      "labels": {"dashboards": "platform",
                                                                 "grafana_dashboard": None}}}}),
             "ConfigMap", FULLNAME + "-dashboard")
    eq(cm["metadata"]["namespace"], "grafana", "namespace knob")
    assert "grafana_dashboard" not in cm["metadata"]["labels"], "null drops the default label"
    eq(cm["metadata"]["labels"]["dashboards"], "platform", "custom label")


@test
def dashboard_json_panels_and_queries():
    dash = json.load(open(DASHBOARD))
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    eq(variables["datasource"]["type"], "datasource", "datasource variable")
    eq(variables["datasource"]["query"], "prometheus", "datasource variable type")
    exprs = []
    for p in dash["panels"]:
        eq(p["datasource"]["uid"], "${datasource}", f"panel {p['title']} datasource")
        for t in p["targets"]:
            exprs.append(t["expr"])
    text = "\n".join(exprs)
    for needle in ("sum by (endpoint, code) (rate(rdma_webhook_requests_total", "histogram_quantile(0.5,",
                   "histogram_quantile(0.99,", "rdma_webhook_inflight_requests",
                   "sum by (path, allowed) (rate(rdma_webhook_decisions_total",
                   "sum by (rule, severity) (rate(rdma_webhook_findings_total",
                   "sum by (what, result) (increase(rdma_webhook_reloads_total",
                   "rdma_webhook_certificate_expiry_timestamp_seconds"):
        assert needle in text, f"no panel queries {needle!r}"
    ids = [p["id"] for p in dash["panels"]]
    eq(len(ids), len(set(ids)), "unique panel ids")
    # the queries parse: promtool checks them as recording rules, Grafana variables substituted
    tool = promtool()
    subst = {"$__rate_interval": "5m", "$namespace": ".*", "$job": ".*"}
    records = []
    for i, e in enumerate(exprs):
        for k, v in subst.items():
            e = e.replace(k, v)
        records.append({"record": f"dashboard:query_{i}", "expr": e})
    path = os.path.join(tempfile.mkdtemp(dir=TMP), "dashboard-queries.yaml")
    with open(path, "w") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}, f)
    r = run([tool, "check", "rules", path])
    assert r.returncode == 0, r.stdout + r.stderr


# -------------------------------------------------------------- bad values

BAD_VALUES = [
    # (what, values, words the error must contain)
    ("wrong type", {"replicaCount": "two"}, ["replicaCount"]),
    ("wrong type in a list", {"webhook": {"timeoutSeconds": "5s"}}, ["timeoutSeconds"]),
    ("unknown certificate mode", {"certificates": {"mode": "selfSigned"}}, ["certificates", "mode"]),
    ("failurePolicy typo", {"webhook": {"failurePolicy": "Fial"}}, ["failurePolicy"]),
    ("timeout out of range", {"webhook": {"timeoutSeconds": 31}}, ["timeoutSeconds"]),
    ("misspelt top-level key", {"replicas": 3}, ["replicas"]),
    ("misspelt nested key", {"webhook": {"failurePolicyy": "Fail"}}, ["failurePolicyy"]),
    ("unknown policy field", {"policy": {"namespaces": [{"names": ["a"], "modee": "sriov"}]}}, ["modee"]),
    ("policy mode typo", {"policy": {"namespaces": [{"names": ["a"], "mode": "hostnetwork"}]}}, ["mode"]),
    ("policy validation typo", {"policy": {"defaults": {"validation": "reject"}}}, ["validation"]),
    ("policy count below 1", {"policy": {"namespaces": [{"names": ["a"], "shared": {"count": 0}}]}}, ["count"]),
    ("policy gidIndex", {"policy": {"namespaces": [{"names": ["a"], "nccl": {"gidIndex": "three"}}]}}, ["gidIndex"]),
    ("rule operation typo", {"webhook": {"crdRules": [{"apiGroups": ["x"], "resources": ["y"],
                                                         "operations": ["CREATE", "PATCH"]}]}}, ["operations"]),
    ("reinvocationPolicy typo", {"webhook": {"reinvocationPolicy": "Always"}}, ["reinvocationPolicy"]),
    ("mutating failurePolicy typo", {"webhook": {"mutating": {"failurePolicy": "ignore"}}}, ["failurePolicy"]),
    ("matchConditions key typo", {"webhook": {"matchConditions": {"gpuOnly": True}}}, ["gpuOnly"]),
    ("audit subject kind typo", {"auditRBAC": {"subjects": [{"kind": "user", "name": "a"}]}}, ["kind"]),
    ("helmTest misspelt", {"helmTest": {"enable": False}}, ["enable"]),
    ("prometheusRule enabled as a string", {"metrics": {"prometheusRule": {"enabled": "yes"}}}, ["enabled"]),
    ("misspelt prometheusRule key", {"metrics": {"prometheusRule": {"enable": True}}}, ["enable"]),
    ("error ratio above 1", {"metrics": {"prometheusRule": {"serverErrorRatio": 5}}}, ["serverErrorRatio"]),
    ("expiry days not a number", {"metrics": {"prometheusRule": {"certificateExpiryWarningDays": "14d"}}},
     ["certificateExpiryWarningDays"]),
    ("misspelt dashboard key", {"metrics": {"dashboard": {"label": {"a": "b"}}}}, ["label"]),
    ("dashboard label not a string", {"metrics": {"dashboard": {"labels": {"grafana_dashboard": 1}}}},
     ["grafana_dashboard"]),
]


@test
def bad_values_fail_naming_the_field():
    for what, values, needles in BAD_VALUES:
        try:
            expect_failure(values, *needles)
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}")


@test
def bad_values_files_in_tests_fail():
    files = sorted(glob.glob(os.path.join(REPO, "tests", "chart", "bad-values", "*.yaml")))
    assert files, "no bad-values files"
    for f in files:
        first = open(f).readline()
        m = re.match(r"#\s*expect:\s*(.+)", first)
        assert m, f"{f}: first line must be '# expect: word ...'"
        r = run([HELM, "template", RELEASE, CHART, "--namespace", NS, "-f", f] + UNQUALIFIED_OK)
        assert r.returncode != 0, f"{f} was accepted"
        for w in m.group(1).split():
            assert w in r.stderr, f"{f}: error does not name {w!r}:\n{r.stderr}"


# ------------------------------------------------------- plain manifests

def render_deploy():
    r = run([os.path.join(REPO, "deploy", "render.sh"), "-"], env={**os.environ, "HELM": HELM})
    assert r.returncode == 0, r.stderr
    return r.stdout


@test
def deploy_manifest_is_in_sync_with_the_chart():
    path = os.path.join(REPO, "deploy", "rdma-webhook.yaml")
    fresh = render_deploy()
    assert os.path.exists(path), "deploy/rdma-webhook.yaml missing: run deploy/render.sh"
    committed = open(path).read()
    if committed != fresh:
        import difflib
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                                 "deploy/rdma-webhook.yaml", "fresh render"))[:60])
        raise AssertionError("deploy/rdma-webhook.yaml is stale; run deploy/render.sh\n" + diff)
    assert render_deploy() == fresh, "render is not deterministic"


@test
def deploy_manifest_content():
    docs = [d for d in yaml.safe_load_all(open(os.path.join(REPO, "deploy", "rdma-webhook.yaml"))) if d]
    assert not objs(docs, "Secret"), "plain manifests carry a Secret"
    nsobj = one(docs, "Namespace", "rdma-webhook")
    eq(nsobj["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted", "PSA level")
    for d in docs:
        labels = d["metadata"].get("labels", {})
        assert "helm.sh/chart" not in labels and "app.kubernetes.io/managed-by" not in labels, d["metadata"]
        if d["kind"] not in ("Namespace", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
                             "ClusterRole", "ClusterRoleBinding"):
            eq(d["metadata"]["namespace"], "rdma-webhook", d["kind"])
    dep, c = container(docs)
    eq(c["image"], "rdma-webhook:0.1.0", "image")
    for wh in webhooks(docs):
        eq(base64.b64decode(wh["webhooks"][0]["clientConfig"]["caBundle"]), b"REPLACE-ME", "placeholder")


# ---------------------------------------------------------- example files

POLICY_FILES = sorted(glob.glob(os.path.join(REPO, "deploy", "policies", "*.yaml")))
EXAMPLES = sorted(glob.glob(os.path.join(REPO, "deploy", "examples", "*.yaml")))


@test
def example_policies_follow_the_values_schema():
    # Every example policy, dropped into values as `policy:`, passes the
    # chart's strict schema (the same shape as docs/policy.md).
    assert len(POLICY_FILES) >= 4, POLICY_FILES
    for f in POLICY_FILES:
        pol = yaml.safe_load(open(f))
        r = helm_template({"policy": pol}, raw=True, expect_ok=False)
        assert r.returncode == 0, f"{os.path.basename(f)}:\n{r.stderr}"
        text, got = rendered_policy([d for d in yaml.safe_load_all(r.stdout) if d])
        eq(got, pol, os.path.basename(f))
    tke = yaml.safe_load(open(os.path.join(REPO, "deploy", "policies", "tke-vendor-annotation.yaml")))
    sriov = tke["namespaces"][0]["sriov"]
    eq(sriov["annotationKey"], "tke.cloud.tencent.com/networks", "TKE key")
    eq(sriov["defaultNetworks"], ["tke-bridge"], "TKE default networks")


SCHEMA_CASES = os.path.join(REPO, "tests", "golden", "policy-schema")


@test
def helm_and_the_binary_agree_on_policy_schema_cases():
    # The values schema embeds `rdma-webhook policy schema`: Helm itself (not only a Python
    # validator) must refuse at install what the server refuses at start, and accept what it
    # accepts. tests/cli/test_policy_schema.py holds the binary's side of the same cases.
    b = binary()
    for kind, want_ok in (("valid", True), ("broken", False)):
        cases = sorted(glob.glob(os.path.join(SCHEMA_CASES, kind, "*.yaml")))
        assert len(cases) >= 4, cases
        for f in cases:
            r = helm_template({"policy": yaml.safe_load(open(f))}, raw=True, expect_ok=False)
            assert (r.returncode == 0) == want_ok, f"helm template, {kind}/{os.path.basename(f)}:\n{r.stderr}"
            v = run([b, "policy", "validate", f])
            assert v.returncode == (0 if want_ok else 1), f"policy validate {kind}/{os.path.basename(f)}:\n{v.stderr}"


@test
def examples_parse_and_name_their_kinds():
    want = {("kubeflow.org/v1", "PyTorchJob"), ("batch/v1", "Job"), ("kubeflow.org/v2beta1", "MPIJob")}
    got = set()
    for f in EXAMPLES:
        for d in yaml.safe_load_all(open(f)):
            if d:
                got.add((d["apiVersion"], d["kind"]))
    assert want <= got, got
    assert any("broken" in os.path.basename(f) for f in EXAMPLES)


def _policy_validate(b, path):
    r = run([b, "policy", "validate", path])
    assert r.returncode == 0, f"policy validate {os.path.relpath(path, REPO)}: exit {r.returncode}\n{r.stdout}{r.stderr}"


@test
def binary_validates_example_policies():
    b = binary()
    for f in POLICY_FILES:
        _policy_validate(b, f)


@test
def binary_validates_rendered_configmap_policies():
    b = binary()
    for name, values in (("default", None), ("custom", {"policy": CUSTOM_POLICY}),
                         ("unquoted-off", "policy:\n  defaults:\n    mode: off\n    validation: off\n")):
        text, _ = rendered_policy(helm_template(values))
        p = os.path.join(TMP, f"policy-{name}.yaml")
        open(p, "w").write(text)
        _policy_validate(b, p)
    bad = os.path.join(TMP, "policy-bad.yaml")
    open(bad, "w").write("apiVersion: rdma-webhook/v1\nkind: Policy\nnamespaces:\n  - names: [a]\n    modee: sriov\n")
    r = run([b, "policy", "validate", bad])
    assert r.returncode != 0, "the validator accepted an unknown field"


@test
def binary_checks_example_jobs():
    b = binary()
    pol = os.path.join(REPO, "deploy", "policies", "per-namespace.yaml")
    # The examples meant to be denied, with the errors each must show; every other one is clean.
    denied = {"broken-pytorchjob.yaml": ("legacy-network-key", "ipc-lock-missing", "invalid-nccl-value"),
              "try-denial.yaml": ("invalid-nccl-value",)}
    for f in EXAMPLES:
        r = run([b, "check", "--policy", pol, "-o", "json", f])
        want = 1 if os.path.basename(f) in denied else 0
        assert r.returncode == want, f"check {os.path.basename(f)}: exit {r.returncode}, want {want}\n{r.stdout}{r.stderr}"
        if want:
            rules = {fi["rule"] for res in json.loads(r.stdout)["results"] for fi in res["findings"]
                     if fi["severity"] == "error"}
            for rule in denied[os.path.basename(f)]:
                assert rule in rules, f"{rule} not reported: {sorted(rules)}"


# ----------------------------------------------------------- certificates

@test
def gen_certs_script():
    script = os.path.join(REPO, "certs", "gen-certs.sh")
    with tempfile.TemporaryDirectory() as d:
        r = run([script, d, "hook", "infra", "hook.example.internal", "10.1.2.3"])
        assert r.returncode == 0, r.stderr
        for n in ("ca.crt", "ca.key", "tls.crt", "tls.key"):
            assert os.path.join(d, n) in r.stdout, f"{n} path not printed"
        crt = open(os.path.join(d, "tls.crt")).read()
        eq(sans(crt), ["DNS:hook", "DNS:hook.infra", "DNS:hook.infra.svc", "DNS:hook.infra.svc.cluster.local",
                       "DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1",
                       "DNS:hook.example.internal", "IP Address:10.1.2.3"], "SANs")
        verify_chain(open(os.path.join(d, "ca.crt")).read(), crt)
        text = openssl_text(crt)
        assert "prime256v1" in text or "P-256" in text, "default key is not ECDSA P-256"
        assert "TLS Web Server Authentication" in text
        eq(oct(os.stat(os.path.join(d, "tls.key")).st_mode & 0o777), "0o600", "key mode")
        # idempotent: same inputs, same files
        r = run([script, d, "hook", "infra", "hook.example.internal", "10.1.2.3"])
        assert r.returncode == 0, r.stderr
        eq(open(os.path.join(d, "tls.crt")).read(), crt, "re-run changed the certificate")
        # new SANs: new serving cert, same CA
        ca = open(os.path.join(d, "ca.crt")).read()
        r = run([script, d, "hook", "infra"])
        assert r.returncode == 0, r.stderr
        eq(open(os.path.join(d, "ca.crt")).read(), ca, "CA changed")
        assert "DNS:hook.example.internal" not in sans(open(os.path.join(d, "tls.crt")).read())
    for flag, bits in (("--rsa", 2048), ("--rsa=3072", 3072)):
        with tempfile.TemporaryDirectory() as d:
            r = run([script, flag, d])
            assert r.returncode == 0, r.stderr
            text = openssl_text(open(os.path.join(d, "tls.crt")).read())
            assert f"Public-Key: ({bits} bit)" in text and "rsaEncryption" in text, f"{flag}: not RSA {bits}"
            assert "DNS:rdma-webhook.rdma-webhook.svc" in " ".join(sans(open(os.path.join(d, "tls.crt")).read()))
    r = run([script, "--rsa=1024", TMP])
    assert r.returncode == 2, "accepted --rsa=1024"
    r = run([script])
    assert r.returncode == 2, "no usage error without arguments"


# --------------------------------------------------------------- Dockerfile

@test
def dockerfile_shape():
    text = open(os.path.join(REPO, "Dockerfile")).read()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    eq(froms, ["debian:bookworm", "scratch"], "stages")
    assert "-DRW_STATIC=ON" in text and "-DRW_BUILD_TESTS=OFF" in text and "-DCMAKE_BUILD_TYPE=Release" in text
    pkgs = ("libboost1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev libcli11-dev "
            "libgtest-dev cmake ninja-build g++").split()
    setup = os.path.join(REPO, "scripts", "setup.sh")
    if os.path.exists(setup):
        # The build packages only (`packages=(...)`); the test extras (clang for the fuzz stage,
        # promtool, umoci) are no part of the image's build stage.
        build_list = re.search(r"^packages=\((.*?)\)", open(setup).read(), re.M | re.S).group(1)
        found = re.findall(r"\b(lib[\w.+-]+-dev|cmake|ninja-build|g\+\+)\b", build_list)
        pkgs += [p for p in found if p not in pkgs and "gtest" not in p and "benchmark" not in p]
    for p in pkgs:
        assert re.search(r"(^|\s)" + re.escape(p) + r"(\s|$)", text), f"Dockerfile does not install {p}"
    runtime = text.split("FROM scratch", 1)[1]
    eq(re.findall(r"^COPY .*", runtime, re.M), ["COPY --from=build /build/rdma-webhook /rdma-webhook"], "runtime COPY")
    assert "RUN " not in runtime, "RUN in the scratch stage"


@test
def no_registry_host_names():
    pat = re.compile(r"\b(docker\.io|gcr\.io|ghcr\.io|quay\.io|registry\.k8s\.io|k8s\.gcr\.io|"
                     r"public\.ecr\.aws|mcr\.microsoft\.com|nvcr\.io)\b")
    files = [os.path.join(REPO, "Dockerfile")]
    for root in ("charts", "deploy"):
        for dp, _, fs in os.walk(os.path.join(REPO, root)):
            files += [os.path.join(dp, f) for f in fs]
    for f in files:
        m = pat.search(open(f, errors="replace").read())
        assert not m, f"{os.path.relpath(f, REPO)} names {m.group(0)}"


# ------------------------------------------------- offline API validation

@test
def rendered_objects_decode_strictly_into_kubernetes_types():
    tool = os.environ.get("RW_KVALIDATE")
    if not tool:
        raise Skip("RW_KVALIDATE not set (tests/chart/run.sh builds tests/chart/kvalidate)")
    d = os.path.join(TMP, "matrix")
    files = render_matrix(d) + glob.glob(os.path.join(d, "*.crd.yaml"))
    files.append(os.path.join(REPO, "deploy", "rdma-webhook.yaml"))
    r = run([tool] + files)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^[1-9]\d* objects", r.stdout, re.M), r.stdout
    # and the validator is not vacuous: a misspelt field and a wrong type fail
    bad = os.path.join(d, "bad.yaml")
    with open(bad, "w") as f:
        f.write("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
                "metadata: {name: x}\nwebhooks:\n  - name: a.b.c\n    sideEffect: None\n---\n"
                "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports: [{port: \"443\"}]\n")
    r = run([tool, bad])
    assert r.returncode == 1 and "sideEffect" in r.stdout and "Service/s" in r.stdout, r.stdout + r.stderr


# ------------------------------------------- against a real API server

def controlplane_binary():
    cp = os.environ.get("E2E_CONTROLPLANE") or os.path.join(REPO, ".cache", "e2e-bin", "controlplane")
    if not (os.path.isfile(cp) and os.access(cp, os.X_OK)):
        raise Skip(f"no control plane binary ({cp}); tests/e2e/run.sh builds it")
    return cp


class ControlPlane:
    """The e2e engineer's single-process etcd + kube-apiserver on 127.0.0.1."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="rw-chart-cp-")
        self.log = open(os.path.join(self.dir, "controlplane.log"), "w")
        self.proc = subprocess.Popen([binary, "--dir", self.dir], stdout=self.log, stderr=subprocess.STDOUT)
        import time
        deadline = time.time() + 180
        while not os.path.exists(os.path.join(self.dir, "ready")):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError("control plane did not become ready:\n" +
                                     open(os.path.join(self.dir, "controlplane.log")).read()[-3000:])
            time.sleep(0.5)
        self.env = {**os.environ, "KUBECONFIG": os.path.join(self.dir, "kubeconfig")}

    def kubectl(self, *args, check=True, stdin=None):
        r = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=self.env, input=stdin)
        if check:
            assert r.returncode == 0, f"kubectl {' '.join(args)}: {r.stderr}"
        return r

    def helm(self, *args):
        if args[0] in ("install", "upgrade"):
            args = (*args, *UNQUALIFIED_OK)
        r = subprocess.run([HELM, *args], capture_output=True, text=True, env=self.env)
        assert r.returncode == 0, f"helm {' '.join(args)}: {r.stderr}"
        return r

    def get(self, *args):
        return json.loads(self.kubectl("get", "-o", "json", *args).stdout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@test
def real_apiserver_accepts_objects_and_upgrade_keeps_certificates():
    cp_bin = controlplane_binary()
    cp = ControlPlane(cp_bin)
    try:
        cp.kubectl("create", "namespace", NS)
        # 1. every rendered case passes server-side validation (dry run)
        d = os.path.join(TMP, "server-matrix")
        for f in render_matrix(d):
            r = cp.kubectl("apply", "--dry-run=server", "-f", f, check=False)
            assert r.returncode == 0, f"{os.path.basename(f)}: {r.stderr}"
        plain = os.path.join(REPO, "deploy", "rdma-webhook.yaml")
        cp.kubectl("create", "namespace", "rdma-webhook")  # a dry run does not create the file's Namespace
        r = cp.kubectl("apply", "--dry-run=server", "-f", plain, check=False)
        assert r.returncode == 0, f"deploy/rdma-webhook.yaml: {r.stderr}"

        # 2. chart mode: install, then upgrades
        def state():
            tls = cp.get("secret", "-n", NS, f"{FULLNAME}-tls")["data"]
            ca = cp.get("secret", "-n", NS, f"{FULLNAME}-ca")["data"]
            mwc = cp.get("mutatingwebhookconfiguration", FULLNAME)
            vwc = cp.get("validatingwebhookconfiguration", FULLNAME)
            bundles = {mwc["webhooks"][0]["clientConfig"]["caBundle"], vwc["webhooks"][0]["clientConfig"]["caBundle"]}
            assert len(bundles) == 1, "the two webhooks carry different CA bundles"
            return tls, ca, bundles.pop()

        cp.helm("install", RELEASE, CHART, "--namespace", NS)
        tls0, ca0, bundle0 = state()
        eq(bundle0, ca0["tls.crt"], "caBundle is the CA")
        verify_chain(base64.b64decode(ca0["tls.crt"]).decode(), base64.b64decode(tls0["tls.crt"]).decode())

        cp.helm("upgrade", RELEASE, CHART, "--namespace", NS, "--set", "webhook.timeoutSeconds=4")
        tls1, ca1, bundle1 = state()
        eq(tls1, tls0, "serving Secret after a plain upgrade")
        eq(ca1, ca0, "CA Secret after a plain upgrade")
        eq(bundle1, bundle0, "caBundle after a plain upgrade")
        eq(cp.get("mutatingwebhookconfiguration", FULLNAME)["webhooks"][0]["timeoutSeconds"], 4, "upgrade applied")

        cp.helm("upgrade", RELEASE, CHART, "--namespace", NS, "--set", "certificates.chart.renewServingCert=true")
        tls2, ca2, bundle2 = state()
        assert tls2["tls.crt"] != tls0["tls.crt"] and tls2["tls.key"] != tls0["tls.key"], "renewServingCert kept the cert"
        eq(ca2, ca0, "CA after renewServingCert")
        eq(bundle2, bundle0, "caBundle after renewServingCert")
        verify_chain(base64.b64decode(ca0["tls.crt"]).decode(), base64.b64decode(tls2["tls.crt"]).decode())

        cp.helm("upgrade", RELEASE, CHART, "--namespace", NS, "--set", "certificates.extraDNSNames={hook.example.internal}")
        tls3, ca3, bundle3 = state()
        assert "DNS:hook.example.internal" in sans(base64.b64decode(tls3["tls.crt"]).decode()), "new SAN missing"
        eq(ca3, ca0, "CA after a SAN change")
        eq(bundle3, bundle0, "caBundle after a SAN change")

        cp.helm("uninstall", RELEASE, "--namespace", NS)
        r = cp.kubectl("get", "mutatingwebhookconfiguration", FULLNAME, check=False)
        assert r.returncode != 0, "uninstall left the webhook configuration"
    finally:
        cp.stop()


def _pod_spec(resources=None, init=False):
    c = {"name": "trainer", "image": "trainer:1"}
    if resources:
        c["resources"] = {"limits": resources}
    spec = {"containers": [{"name": "main", "image": "trainer:1"}]}
    if init:
        spec["initContainers"] = [c]
    else:
        spec["containers"] = [c]
    return spec


def _workload(kind, spec):
    tmpl = {"metadata": {"labels": {"app": "x"}}, "spec": {**spec, "restartPolicy": "Never"}}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    if kind == "Job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": tmpl}}
    if kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                "spec": {"schedule": "0 0 * * *", "jobTemplate": {"spec": {"template": tmpl}}}}
    tmpl["spec"]["restartPolicy"] = "Always"
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": tmpl}}


@test
def real_apiserver_match_conditions_skip_cpu_pods_and_templates():
    """The chart's CEL matchConditions, evaluated by a real kube-apiserver:
    both webhooks point at a port where nothing listens, with failurePolicy
    Fail, so an object the conditions send is refused ("failed calling
    webhook") and one they skip is admitted."""
    cp = ControlPlane(controlplane_binary())
    try:
        ns = "mc-selected"
        cp.kubectl("create", "namespace", ns)
        cp.kubectl("label", "namespace", ns, "rdma-webhook.io/enabled=true")
        cp.kubectl("create", "serviceaccount", "default", "-n", ns, check=False)  # no controller manager here
        configs = [d for d in helm_template() if d["kind"].endswith("WebhookConfiguration")]
        for cfg in configs:
            for wh in cfg["webhooks"]:
                bundle = wh["clientConfig"]["caBundle"]
                wh["clientConfig"] = {"url": "https://127.0.0.1:1" + wh["clientConfig"]["service"]["path"],
                                      "caBundle": bundle}
                wh["failurePolicy"] = "Fail"
        cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(configs))

        def create(obj):
            return cp.kubectl("create", "--dry-run=server", "-n", ns, "-f", "-", check=False, stdin=json.dumps(obj))

        import time
        gpu = _workload("Pod", _pod_spec({"nvidia.com/gpu": 1}))
        deadline = time.time() + 30  # the API server picks the configurations up within seconds
        while create(gpu).returncode == 0:
            assert time.time() < deadline, "a GPU pod passed a webhook that cannot be reached"
            time.sleep(0.5)
        cases = []
        for kind in ("Pod", "Job", "CronJob", "Deployment"):
            cases += [(kind + " without GPU or RDMA", _workload(kind, _pod_spec()), True),
                      (kind + " with cpu and memory limits", _workload(kind, _pod_spec({"cpu": "1", "memory": "1Gi"})), True),
                      (kind + " with a GPU", _workload(kind, _pod_spec({"nvidia.com/gpu": 1})), False),
                      (kind + " with rdma/vf in an initContainer", _workload(kind, _pod_spec({"rdma/vf": 1}, init=True)), False),
                      (kind + " with a shared HCA", _workload(kind, _pod_spec({"rdma/hca_shared_devices_a": 1})), False)]
        for what, obj, admitted in cases:
            r = create(obj)
            if admitted:
                assert r.returncode == 0, f"{what}: refused although the conditions skip it: {r.stderr}"
            else:
                assert r.returncode != 0, f"{what}: admitted, so the conditions skipped it"
                assert "failed calling webhook" in r.stderr, f"{what}: {r.stderr}"
        # a ConfigMap is not in the rules at all; a namespace without the label is not selected
        assert cp.kubectl("create", "configmap", "c", "-n", ns, "--dry-run=server", check=False).returncode == 0
        cp.kubectl("create", "namespace", "mc-unselected")
        cp.kubectl("create", "serviceaccount", "default", "-n", "mc-unselected", check=False)
        r = cp.kubectl("create", "--dry-run=server", "-n", "mc-unselected", "-f", "-", check=False, stdin=json.dumps(gpu))
        assert r.returncode == 0, r.stderr
    finally:
        cp.stop()


# ----------------------------------------------------------- render matrix

MATRIX = {
    "chart-certs": None,
    "cert-manager": {"certificates": {"mode": "certManager"}},
    "existing-secret": existing_secret_values(),
    "ignore": {"webhook": {"failurePolicy": "Ignore", "timeoutSeconds": 10}},
    "custom-kinds": {"webhook": {"crdRules": [{"apiGroups": ["trainer.example.com"], "resources": ["trainjobs"]}]}},
    "custom-policy": {"policy": CUSTOM_POLICY},
    "everything": {"networkPolicy": {"enabled": True}, "serviceMonitor": {"enabled": True},
                   "metrics": {"prometheusRule": {"enabled": True}, "dashboard": {"enabled": True}},
                   "preStopSleepSeconds": 3, "replicaCount": 3, "namespace": {"create": True},
                   "server": {"clientCA": {"configMapName": "client-ca"}, "threads": 2}},
    "single-replica": {"replicaCount": 1},
}
CRD_KINDS = {"Certificate", "Issuer", "ClusterIssuer", "ServiceMonitor", "PrometheusRule"}


def render_matrix(outdir):
    """Render every case of MATRIX into OUTDIR: <case>.yaml holds the
    built-in kinds (for `kubectl apply --dry-run=server -f`), <case>.crd.yaml
    the cert-manager / prometheus-operator objects (apply those only where
    the CRDs are installed). Namespace: rdma-system (create it first).
    Returns the list of <case>.yaml files."""
    os.makedirs(outdir, exist_ok=True)
    out = []
    for case, values in MATRIX.items():
        docs = helm_template(values)
        native = [d for d in docs if d["kind"] not in CRD_KINDS]
        crd = [d for d in docs if d["kind"] in CRD_KINDS]
        p = os.path.join(outdir, f"{case}.yaml")
        with open(p, "w") as f:
            yaml.safe_dump_all(native, f, sort_keys=False)
        out.append(p)
        if crd:
            with open(os.path.join(outdir, f"{case}.crd.yaml"), "w") as f:
                yaml.safe_dump_all(crd, f, sort_keys=False)
    return out


# ------------------------------------------------------------------- main

def main(argv):
    if len(argv) >= 2 and argv[0] == "--render-matrix":
        for p in render_matrix(argv[1]):
            print(p)
        return 0
    only = None
    if len(argv) >= 2 and argv[0] == "-k":
        only = argv[1]
    passed = failed = skipped = 0
    for fn in TESTS:
        if only and only not in fn.__name__:
            continue
        try:
            fn()
        except Skip as e:
            skipped += 1
            print(f"SKIP {fn.__name__}: {e}", flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {fn.__name__}: {e}", flush=True)
            if not isinstance(e, AssertionError):
                traceback.print_exc()
        else:
            passed += 1
            print(f"ok   {fn.__name__}", flush=True)
    shutil.rmtree(TMP, ignore_errors=True)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
