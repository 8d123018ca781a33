"""`audit -n NS` finds the chart's policy without rights beyond NS: it looks in NS first, lists
ConfigMaps in all namespaces only when NS has none, and a Forbidden there names the flags that
name the policy instead (docs/audit.md)."""
import xml.etree.ElementTree as ET

from test_audit import (LENIENT, bad_pod, cluster, configmap, good_pod,  # noqa: F401
                        kubectl_list)

NS_FIRST = ["get", "configmaps", "--namespace", "team-a"]


def configmap_calls(c):
    return [call for call in c.calls() if "configmaps" in call]


def test_a_namespace_audit_looks_in_its_namespace_first(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    cluster.put("configmaps.json", kubectl_list([configmap("team-a", "rdma-webhook-policy",
                                                           LENIENT)]))
    cluster.put("forbid-all-configmaps", "")
    r = cluster.audit("-n", "team-a", "-o", "json")
    assert r.rc == 0 and r.json()["policy"] == "ConfigMap team-a/rdma-webhook-policy", r
    calls = configmap_calls(cluster)
    assert len(calls) == 1 and "--all-namespaces" not in calls[0], calls
    assert calls[0][:4] == NS_FIRST, calls


def test_then_all_namespaces(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    cluster.put("configmaps.json", kubectl_list([configmap("rdma-system", "rdma-webhook-policy",
                                                           LENIENT)]))
    r = cluster.audit("-n", "team-a", "-o", "json")
    assert r.rc == 0 and r.json()["policy"] == "ConfigMap rdma-system/rdma-webhook-policy", r
    calls = configmap_calls(cluster)
    assert calls[0][:4] == NS_FIRST and "--all-namespaces" in calls[1], calls


def test_a_forbidden_cluster_wide_list_names_the_way_out(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    cluster.put("forbid-all-configmaps", "")
    r = cluster.audit("-n", "team-a")
    assert r.rc == 2, r
    assert "forbidden" in r.err and "--policy-configmap NAMESPACE/NAME" in r.err, r
    assert "--policy FILE" in r.err, r


def test_all_namespaces_lists_cluster_wide_at_once(cluster):
    cluster.workloads([bad_pod("a", "team-a")])
    r = cluster.audit("-A")
    assert r.rc == 1, r
    calls = configmap_calls(cluster)
    assert len(calls) == 1 and "--all-namespaces" in calls[0], calls


def test_audit_writes_junit_with_a_case_per_object(cluster):
    cluster.workloads([bad_pod("a", "team-a"), good_pod("b", "team-a")])
    r = cluster.audit("-A", "-o", "junit")
    assert r.rc == 1, r
    cases = ET.fromstring(r.out).findall(".//testcase")
    assert len(cases) == 2, r.out
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1 and "ipc-lock-missing" in failed[0].find("failure").text, r.out


def test_audit_fail_on_warning(cluster):
    warned = good_pod("w", "team-a")
    for c in warned["spec"]["containers"]:
        c.pop("volumeMounts", None)
    warned["spec"].pop("volumes", None)  # shm-too-small: a warning only
    cluster.workloads([warned])
    assert cluster.audit("-A").rc == 0
    assert cluster.audit("-A", "--fail-on", "warning").rc == 1
