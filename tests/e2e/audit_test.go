package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A GPU Job that claims an SR-IOV VF and attaches the RDMA network but does not add IPC_LOCK:
// ipc-lock-missing, an error under every policy.
const auditJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: no-ipc-lock
  annotations: {}
spec:
  suspend: true
  template:
    metadata:
      annotations:
        k8s.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        env:
        - {name: NCCL_SOCKET_IFNAME, value: eth1}
        resources:
          limits: {nvidia.com/gpu: 8, rdma/vf: 1}
`

// A workload without GPUs: path none, no findings.
const auditDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1}
`

// TestAuditCluster: `rdma-webhook audit -A -o json` lists the workloads of several kinds in two
// namespaces through the real kubectl and API server, and judges each as `check` would.
func TestAuditCluster(t *testing.T) {
	logsOnFailure(t)
	if E.rwBinary == "" {
		if strict() {
			t.Fatal("rdma-webhook binary not available (RW_BINARY)")
		}
		t.Skip("rdma-webhook binary not available (set RW_BINARY)")
	}
	// Namespaces no webhook selects: the objects are stored as written.
	nsA, nsB := "e2e-audit-a", "e2e-audit-b"
	mustCreateNS(t, nsA, false)
	mustCreateNS(t, nsB, false)
	pytorch, err := os.ReadFile(filepath.Join(here(), "testdata/workloads/pytorchjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, manifest string }{
		{nsA, auditJob}, {nsA, auditDeployment}, {nsB, auditJob}, {nsB, string(pytorch)},
	} {
		if _, stderr, err := E.kcIn(c.manifest, "apply", "-n", c.ns, "-f", "-"); err != nil {
			t.Fatalf("apply in %s: %v: %s", c.ns, err, stderr)
		}
	}

	// kubectl-rdma finds kubectl on PATH, as it does when kubectl runs it.
	cmd := exec.Command(E.rwBinary, "audit", "-A", "-o", "json", "--kubeconfig", E.kubeconfig,
		"--policy", E.policy)
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(E.kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("audit: want exit 1 (error findings), got %v\nstderr: %s\nstdout: %s", err,
			stderr.String(), out)
	}
	var report struct {
		Results []struct {
			Kind, Namespace, Name, Path string
			Findings                    []struct{ Rule string }
		}
		Namespaces []struct {
			Namespace       string
			Objects, Errors int
			Paths           map[string]int
		}
		Kinds struct {
			Listed  []string
			Skipped []struct{ Group, Kind string }
		}
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("audit -o json: %v\n%s", err, out)
	}
	found := map[string][]string{} // ns/Kind/name -> rules
	for _, r := range report.Results {
		if r.Namespace == nsA || r.Namespace == nsB {
			var rules []string
			for _, f := range r.Findings {
				rules = append(rules, f.Rule)
			}
			found[r.Namespace+"/"+r.Kind+"/"+r.Name] = rules
		}
	}
	want := []string{nsA + "/Job/no-ipc-lock", nsA + "/Deployment/web", nsB + "/Job/no-ipc-lock",
		nsB + "/PyTorchJob/pytorchjob"}
	for _, w := range want {
		if _, ok := found[w]; !ok {
			t.Errorf("audit did not report %s; it reported %v", w, found)
		}
	}
	if len(found) != len(want) {
		t.Errorf("audit reported %d objects in %s and %s (owned Pods and ReplicaSets are judged "+
			"through their controller), want %d: %v", len(found), nsA, nsB, len(want), found)
	}
	for _, job := range []string{nsA + "/Job/no-ipc-lock", nsB + "/Job/no-ipc-lock"} {
		if !strings.Contains(strings.Join(found[job], ","), "ipc-lock-missing") {
			t.Errorf("%s: want ipc-lock-missing, got %v", job, found[job])
		}
	}
	summary := map[string]int{}
	for _, n := range report.Namespaces {
		if n.Namespace == nsA || n.Namespace == nsB {
			summary[n.Namespace] = n.Objects
			if n.Errors < 1 {
				t.Errorf("namespace %s: want at least 1 error, got %+v", n.Namespace, n)
			}
		}
	}
	if summary[nsA] != 2 || summary[nsB] != 2 {
		t.Errorf("per-namespace objects: want 2 and 2, got %v", summary)
	}
	listed := strings.Join(report.Kinds.Listed, ",")
	for _, r := range []string{"pods", "jobs.batch", "deployments.apps", "pytorchjobs.kubeflow.org"} {
		if !strings.Contains(","+listed+",", ","+r+",") {
			t.Errorf("kinds listed %q lack %s", listed, r)
		}
	}
	for _, s := range report.Kinds.Skipped {
		if s.Kind == "PyTorchJob" || s.Kind == "Deployment" {
			t.Errorf("%s.%s is served but was skipped", s.Kind, s.Group)
		}
	}
	if len(report.Kinds.Skipped) == 0 {
		t.Errorf("no kind skipped: the test CRDs do not include Ray, so RayJob must be skipped")
	}
}
