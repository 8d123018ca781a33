package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The cluster watch (`serve --watch-cluster`) against the real kube-apiserver, with a
// ServiceAccount token as the chart's pod has: objects created after the webhook started reach
// its store without a restart; a CRD that is not installed is skipped; a ServiceAccount without
// the ClusterRole gets the RBAC log line and the webhook still serves with the policy alone.

const watchRBAC = `
apiVersion: v1
kind: Namespace
metadata: {name: e2e-watch-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: rdma-webhook, namespace: e2e-watch-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: no-rbac, namespace: e2e-watch-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-rdma-webhook-watch}
rules:
  - apiGroups: [resource.k8s.io]
    resources: [deviceclasses, resourceclaimtemplates, resourceclaims]
    verbs: [get, list, watch]
  - apiGroups: [k8s.cni.cncf.io]
    resources: [network-attachment-definitions]
    verbs: [get, list, watch]
  - apiGroups: [trainer.kubeflow.org]
    resources: [clustertrainingruntimes, trainingruntimes]
    verbs: [get, list, watch]
  - apiGroups: [resource.nvidia.com]
    resources: [computedomains]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-rdma-webhook-watch}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-rdma-webhook-watch}
subjects:
  - {kind: ServiceAccount, name: rdma-webhook, namespace: e2e-watch-system}
`

const watchObjects = `
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-rdma}
spec:
  selectors:
    - cel: {expression: 'device.driver == "dra.net"'}
---
apiVersion: v1
kind: Namespace
metadata: {name: e2e-watch-team}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rdma-net
  namespace: e2e-watch-team
  annotations: {k8s.v1.cni.cncf.io/resourceName: nvidia.com/mlnx_sriov_rdma}
spec:
  config: '{"cniVersion": "0.3.1", "name": "rdma-net", "type": "sriov"}'
`

// watchingWebhook starts a second server (no webhook configuration points at it) that watches
// the cluster as ServiceAccount `sa`, with more `serve` flags when given.
func watchingWebhook(t *testing.T, sa string, more ...string) *webhook {
	t.Helper()
	token, stderr, err := E.kc("create", "token", sa, "-n", "e2e-watch-system", "--duration", "1h")
	if err != nil {
		t.Fatalf("kubectl create token %s: %v: %s", sa, err, stderr)
	}
	dir := filepath.Join(E.work, "controlplane")
	tokenFile := filepath.Join(E.work, "token-"+sa)
	if err := os.WriteFile(tokenFile, []byte(strings.TrimSpace(token)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		t.Fatal(err)
	}
	w := &webhook{logPath: filepath.Join(E.work, "rdma-webhook-watch-"+sa+".log"), extra: []string{
		"--watch-cluster", "--kube-api-server", strings.TrimSpace(string(url)),
		"--kube-ca", filepath.Join(dir, "ca.crt"), "--kube-token-file", tokenFile,
		"--watch-absent-retry", "2s", "--watch-debounce", "100ms", "--watch-ready-timeout", "20s"}}
	w.extra = append(w.extra, more...)
	if err := w.start(); err != nil {
		t.Fatalf("%v\n%s", err, tail(w.logPath))
	}
	t.Cleanup(func() {
		w.stop()
		if t.Failed() {
			t.Logf("log of the watching webhook:\n%s", tail(w.logPath))
		}
	})
	return w
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	return strings.Join(lines, "\n")
}

// installWatchRBAC installs the NAD CRD and the ServiceAccounts and ClusterRole that the
// watching webhooks use.
func installWatchRBAC(t *testing.T) {
	t.Helper()
	crd := filepath.Join(E.repo, "tests/e2e/testdata/nad-crd.yaml")
	if _, stderr, err := E.kc("apply", "-f", crd); err != nil {
		t.Fatalf("NAD CRD: %v: %s", err, stderr)
	}
	if _, stderr, err := E.kc("wait", "--for=condition=Established", "--timeout=60s", "-f", crd); err != nil {
		t.Fatalf("NAD CRD not established: %v: %s", err, stderr)
	}
	if _, stderr, err := E.kcIn(watchRBAC, "apply", "-f", "-"); err != nil {
		t.Fatalf("RBAC: %v: %s", err, stderr)
	}
}

func TestClusterWatch(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	installWatchRBAC(t)
	t.Cleanup(func() {
		_, _, _ = E.kcIn(watchObjects, "delete", "--ignore-not-found", "--wait=false", "-f", "-")
	})

	t.Run("objects created after start reach the store", func(t *testing.T) {
		w := watchingWebhook(t, "rdma-webhook")
		if v := w.metric("rdma_webhook_watch_synced", `resource="deviceclasses.resource.k8s.io"`); v != 1 {
			t.Fatalf("deviceclasses synced = %v, want 1", v)
		}
		if v := w.metric("rdma_webhook_watch_synced", `resource="computedomains.resource.nvidia.com"`); v != 0 {
			t.Errorf("computedomains (no CRD) synced = %v, want 0", v)
		}
		if _, stderr, err := E.kcIn(watchObjects, "apply", "-f", "-"); err != nil {
			t.Fatalf("objects: %v: %s", err, stderr)
		}
		for _, r := range []string{"deviceclasses.resource.k8s.io", "network-attachment-definitions.k8s.cni.cncf.io"} {
			if err := eventually(30*time.Second, func() error {
				if v := w.metric("rdma_webhook_watch_objects", `resource="`+r+`"`); v != 1 {
					return fmt.Errorf("%s objects = %v, want 1", r, v)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if v := w.metric("rdma_webhook_watch_lists_total", `resource="deviceclasses.resource.k8s.io"`, `result="ok"`); v != 1 {
			t.Errorf("deviceclasses LISTs = %v, want 1: events, not relists, brought the objects", v)
		}
		log := tail(w.logPath)
		if !strings.Contains(log, "does not serve this resource") || !strings.Contains(log, "computedomains.resource.nvidia.com") {
			t.Errorf("no line for the ComputeDomain CRD that is not installed")
		}
	})

	t.Run("RBAC denied logs the missing verbs and serves with the policy", func(t *testing.T) {
		w := watchingWebhook(t, "no-rbac")
		if err := eventually(20*time.Second, func() error {
			b, _ := os.ReadFile(w.logPath)
			if !strings.Contains(string(b), "RBAC forbids") ||
				!strings.Contains(string(b), "get, list, watch on deviceclasses in API group resource.k8s.io") {
				return fmt.Errorf("no RBAC line yet")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if v := w.metric("rdma_webhook_watch_synced", `resource="deviceclasses.resource.k8s.io"`); v != 0 {
			t.Errorf("deviceclasses synced = %v without RBAC, want 0", v)
		}
		if v := w.metric("rdma_webhook_watch_lists_total", `result="forbidden"`); v < 7 {
			t.Errorf("forbidden LISTs = %v, want one per resource at least", v)
		}
	})
}
