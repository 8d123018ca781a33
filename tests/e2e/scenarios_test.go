package e2e

// The scenarios. They run in this order (go test runs tests in source
// order); the ones that kill, stop or reconfigure the webhook come last and
// leave it healthy with the original configurations again.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var modeNamespaces = []string{"e2e-hostnet", "e2e-sriov", "e2e-shared", "e2e-tcp"}

func workloadFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(E.repo, "tests/e2e/testdata/workloads/*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workload manifests: %v", err)
	}
	sort.Strings(files)
	return files
}

func isCRDKind(obj map[string]any) bool {
	av, _ := obj["apiVersion"].(string)
	return strings.Contains(av, ".") && !strings.HasPrefix(av, "batch/") && !strings.HasPrefix(av, "apps/")
}

// waitSelected waits until the API server sends ns to the webhook (its
// namespace informer has seen the label): a GPU pod dry-run comes back
// mutated (any RDMA mode injects NCCL_ variables).
func waitSelected(t *testing.T, ns string) {
	t.Helper()
	if err := eventually(30*time.Second, func() error {
		out, stderr, err := E.kcIn(gpuPodYAML("probe"), "create", "--dry-run=server", "-n", ns, "-o", "json", "-f", "-")
		if err != nil {
			return fmt.Errorf("%v: %s", err, stderr)
		}
		if !strings.Contains(out, "NCCL_") {
			return fmt.Errorf("namespace %s not yet selected", ns)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// selectedModeNamespaces creates one selected namespace per policy mode
// (name: the mode's prefix + suffix) and waits until each reaches the webhook.
func selectedModeNamespaces(t *testing.T, suffix string) []string {
	t.Helper()
	var nss []string
	for _, base := range modeNamespaces {
		ns := base + suffix
		mustCreateNS(t, ns, true)
		nss = append(nss, ns)
	}
	for _, ns := range nss {
		waitSelected(t, ns)
	}
	return nss
}

func mustCreateNS(t *testing.T, ns string, selected bool) {
	t.Helper()
	if err := E.createNamespace(ns, selected); err != nil {
		t.Fatal(err)
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// --------------------------------------------------------------------------
// Needs only the API server.

// TestControlPlane: the API server built from k8s.io/kubernetes serves the
// test's CRDs and admits the workload kinds in a namespace no webhook selects.
func TestControlPlane(t *testing.T) {
	logsOnFailure(t)
	out, stderr, err := E.kc("version", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl version: %v: %s", err, stderr)
	}
	var v struct {
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	_ = json.Unmarshal([]byte(out), &v)
	t.Logf("kube-apiserver %s", v.ServerVersion.GitVersion)
	if !strings.HasPrefix(v.ServerVersion.GitVersion, "v1.") {
		t.Errorf("unexpected server version %q", v.ServerVersion.GitVersion)
	}
	ns := "e2e-plain"
	mustCreateNS(t, ns, false)
	for _, f := range workloadFiles(t) {
		if _, stderr, err := E.kc("create", "-n", ns, "-f", f); err != nil {
			t.Errorf("create %s in an unselected namespace: %v: %s", filepath.Base(f), err, stderr)
		}
	}
	plugins, _, _ := E.kc("get", "--raw", "/readyz?verbose")
	if !strings.Contains(plugins, "ok") {
		t.Errorf("readyz not ok: %s", plugins)
	}
}

// TestChartObjectsServerDryRun: every object the chart renders is accepted
// by the real API server's schema validation.
func TestChartObjectsServerDryRun(t *testing.T) {
	logsOnFailure(t)
	if E.helm == "" {
		if strict() {
			t.Fatal("helm not available, and CI=true / E2E_REQUIRE_SERVER=1 forbid skipping")
		}
		t.Skip("helm not available: run scripts/install-helm.sh (tests/e2e/run.sh does)")
	}
	objs, rendered, err := E.helmTemplate()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Skip("the chart renders no objects yet (charts/rdma-webhook/templates is empty)")
	}
	mustCreateNS(t, releaseNamespace, false)
	out, stderr, err := E.kcIn(rendered, "apply", "--dry-run=server", "-n", releaseNamespace, "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server of the chart's %d objects: %v\n%s\n%s", len(objs), err, stderr, out)
	}
	t.Logf("%d chart objects pass server-side dry-run:\n%s", len(objs), out)
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[fmt.Sprint(o["kind"])] = true
	}
	for _, k := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if !kinds[k] {
			t.Errorf("the chart renders no %s", k)
		}
	}
}

// --------------------------------------------------------------------------
// Needs the server.

// TestMutationMatchesPrediction: every workload kind, in each mode of the
// policy, is stored with exactly the fields `rdma-webhook mutate` predicts
// for the webhook to write (CRD kinds, which nothing defaults: the whole
// spec).
func TestMutationMatchesPrediction(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	// Mode off first: nothing shows when it is selected, but it is labelled
	// before the others, so once they are selected it is too.
	mustCreateNS(t, "e2e-off-mutate", true)
	for _, ns := range append(selectedModeNamespaces(t, "-mutate"), "e2e-off-mutate") {
		base := strings.TrimSuffix(ns, "-mutate")
		for _, f := range workloadFiles(t) {
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			t.Run(strings.TrimPrefix(base, "e2e-")+"/"+name, func(t *testing.T) {
				ops, predicted := predict(t, ns, f)
				if base == "e2e-off" && len(ops) != 0 {
					t.Errorf("mutate predicts operations in mode off: %s", mustJSON(ops))
				}
				if base != "e2e-off" && len(ops) == 0 {
					t.Errorf("mutate predicts no change for a GPU workload in %s mode", base)
				}
				if _, stderr, err := E.kc("create", "-n", ns, "-f", f); err != nil {
					t.Fatalf("kubectl create: %v: %s", err, stderr)
				}
				got := stored(t, ns, f)
				diffs := comparePatched(ops, predicted, got)
				for _, d := range diffs {
					t.Error(d)
				}
				t.Logf("%d predicted operations, %d differ from the stored object", len(ops), len(diffs))
				if base == "e2e-off" {
					if sp := mustJSON(got["spec"]); looksMutated(sp) {
						t.Errorf("stored object in mode off was mutated: %s", sp)
					}
				}
				if isCRDKind(got) {
					if !subset(predicted["spec"], got["spec"]) || !subset(got["spec"], predicted["spec"]) {
						t.Errorf("stored spec differs from the prediction:\n  predicted %s\n  stored    %s",
							mustJSON(predicted["spec"]), mustJSON(got["spec"]))
					}
				}
				// Idempotence through the API server: an UPDATE with the
				// stored object changes nothing.
				// (Controllers may update the object meanwhile: retry conflicts.)
				if err := eventually(20*time.Second, func() error {
					_, stderr, err := E.kcIn(mustJSON(stored(t, ns, f)), "replace", "-f", "-")
					if err != nil {
						return fmt.Errorf("replace with the stored object: %v: %s", err, stderr)
					}
					return nil
				}); err != nil {
					t.Error(err)
				} else if again := stored(t, ns, f); !subset(got["spec"], again["spec"]) || !subset(again["spec"], got["spec"]) {
					t.Errorf("second admission changed the spec:\n  first  %s\n  second %s", mustJSON(got["spec"]), mustJSON(again["spec"]))
				}
			})
		}
	}
}

func lookupString(doc any, ptr string) string {
	v, _ := lookup(doc, ptr)
	s, _ := v.(string)
	return s
}

// denyCases: manifests that break a rule in every mode; each names a rule
// the denial must mention (besides those `check` predicts).
var denyCases = []struct {
	name, rule, manifest string
}{
	{"invalid-gid-index", "invalid-nccl-value", `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bad-gid
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: trainer:1
            env:
            - {name: NCCL_IB_GID_INDEX, value: "three"}
            resources:
              limits:
                nvidia.com/gpu: 8
`},
	{"legacy-network-key", "legacy-network-key", `apiVersion: batch/v1
kind: Job
metadata:
  name: bad-legacy-key
spec:
  template:
    metadata:
      annotations:
        kubernetes.v1.cni.cncf.io/networks: sriov-rdma-net@eth1
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        resources:
          limits:
            nvidia.com/gpu: 8
            rdma/vf: 1
`},
}

// checkDenied asserts kubectl refused with every predicted error rule id
// and the must-have rule, and a message that says more than the id.
func checkDenied(t *testing.T, stderr string, must string, predicted []finding) {
	t.Helper()
	t.Logf("refused: %s", strings.TrimSpace(stderr))
	if !strings.Contains(stderr, "denied the request") {
		t.Errorf("kubectl error is not a webhook denial: %s", stderr)
	}
	ids := map[string]bool{must: true}
	for _, f := range predicted {
		ids[f.Rule] = true
	}
	for id := range ids {
		i := strings.Index(stderr, id)
		if i < 0 {
			t.Errorf("kubectl error does not name rule %s: %s", id, stderr)
			continue
		}
		if len(strings.TrimSpace(stderr[i+len(id):])) < 20 {
			t.Errorf("kubectl error names %s but says nothing after it (the fix): %s", id, stderr)
		}
	}
}

// TestDenialNamesRule: a manifest that breaks a rule is refused; kubectl's
// error names the rule id and the fix.
func TestDenialNamesRule(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	for _, ns := range selectedModeNamespaces(t, "-deny") {
		base := strings.TrimSuffix(ns, "-deny")
		for _, c := range denyCases {
			t.Run(strings.TrimPrefix(base, "e2e-")+"/"+c.name, func(t *testing.T) {
				f := writeTemp(t, c.name+".yaml", c.manifest)
				_, mutated := predict(t, ns, f)
				errs := predictedErrors(t, ns, mutated)
				if len(errs) == 0 {
					t.Errorf("check predicts no error finding for %s in %s (expected %s)", c.name, ns, c.rule)
				}
				_, stderr, err := E.kc("create", "-n", ns, "-f", f)
				if err == nil {
					t.Fatalf("kubectl create of %s was accepted", c.name)
				}
				checkDenied(t, stderr, c.rule, errs)
				if _, _, err := E.kc("get", "-n", ns, "-f", f); err == nil {
					t.Errorf("denied object was stored")
				}
			})
		}
	}
}

// TestDryRunServer: `kubectl create --dry-run=server` returns the mutated
// object (as predicted), refuses what a real create refuses, stores nothing.
func TestDryRunServer(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	ns := "e2e-sriov-dryrun"
	mustCreateNS(t, ns, true)
	waitSelected(t, ns)
	for _, f := range workloadFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			ops, predicted := predict(t, ns, f)
			out, stderr, err := E.kc("create", "--dry-run=server", "-n", ns, "-f", f, "-o", "json")
			if err != nil {
				t.Fatalf("create --dry-run=server: %v: %s", err, stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("dry-run output: %v", err)
			}
			for _, d := range comparePatched(ops, predicted, got) {
				t.Error(d)
			}
			if _, stderr, err := E.kc("get", "-n", ns, "-f", f); err == nil || !strings.Contains(stderr, "NotFound") {
				t.Errorf("dry-run stored the object (get: %v %s)", err, stderr)
			}
		})
	}
	for _, c := range denyCases {
		t.Run("deny/"+c.name, func(t *testing.T) {
			f := writeTemp(t, c.name+".yaml", c.manifest)
			_, mutated := predict(t, ns, f)
			errs := predictedErrors(t, ns, mutated)
			_, stderr, err := E.kc("create", "--dry-run=server", "-n", ns, "-f", f)
			if err == nil {
				t.Fatalf("dry-run of %s was accepted", c.name)
			}
			checkDenied(t, stderr, c.rule, errs)
		})
	}
}

const badDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: legacy-trainer
spec:
  replicas: 1
  selector:
    matchLabels: {app: legacy-trainer}
  template:
    metadata:
      labels: {app: legacy-trainer}
    spec:
      containers:
      - name: trainer
        image: trainer:1
        env:
        - {name: NCCL_IB_GID_INDEX, value: "three"}
        resources:
          limits:
            nvidia.com/gpu: 8
`

// TestUpdateOnlyWhenTemplateChanges: label, annotation, finalizer, scale
// and restartedAt updates pass on an old non-compliant object; an UPDATE
// that changes (or breaks) a pod template is refused.
func TestUpdateOnlyWhenTemplateChanges(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	ns := "e2e-hostnet-update"
	mustCreateNS(t, ns, false)
	// The old object predates the webhook: created while the namespace
	// was not selected.
	f := writeTemp(t, "legacy.yaml", badDeployment)
	if _, stderr, err := E.kc("create", "-n", ns, "-f", f); err != nil {
		t.Fatalf("create legacy deployment in an unselected namespace: %v: %s", err, stderr)
	}
	if err := E.labelNamespace(ns); err != nil {
		t.Fatal(err)
	}
	waitSelected(t, ns)

	allowed := []struct {
		name string
		args []string
	}{
		{"label", []string{"label", "deployment/legacy-trainer", "team=vision"}},
		{"annotation", []string{"annotate", "deployment/legacy-trainer", "owner=e2e"}},
		{"finalizer-add", []string{"patch", "deployment/legacy-trainer", "--type=merge", "-p", `{"metadata":{"finalizers":["e2e.rdma-webhook.io/hold"]}}`}},
		{"finalizer-remove", []string{"patch", "deployment/legacy-trainer", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`}},
		{"scale", []string{"scale", "deployment/legacy-trainer", "--replicas=3"}},
		{"restartedAt", []string{"rollout", "restart", "deployment/legacy-trainer"}},
	}
	for _, a := range allowed {
		t.Run("allowed/"+a.name, func(t *testing.T) {
			if _, stderr, err := E.kc(append([]string{"-n", ns}, a.args...)...); err != nil {
				t.Errorf("kubectl %s on the old non-compliant object was refused: %v: %s", strings.Join(a.args, " "), err, stderr)
			}
		})
	}
	t.Run("refused/template-change-on-noncompliant", func(t *testing.T) {
		_, stderr, err := E.kc("-n", ns, "set", "image", "deployment/legacy-trainer", "trainer=trainer:2")
		if err == nil {
			t.Fatalf("a pod template change on a non-compliant object was accepted")
		}
		checkDenied(t, stderr, "invalid-nccl-value", nil)
	})
	t.Run("refused/template-breaking-update", func(t *testing.T) {
		good := filepath.Join(E.repo, "tests/e2e/testdata/workloads/pytorchjob.yaml")
		if _, stderr, err := E.kc("create", "-n", ns, "-f", good); err != nil {
			t.Fatalf("create compliant PyTorchJob: %v: %s", err, stderr)
		}
		// Break it: an invalid NCCL value in the Worker template.
		patch := `[{"op":"add","path":"/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/env/-","value":{"name":"NCCL_IB_GID_INDEX","value":"three"}}]`
		_, stderr, err := E.kc("-n", ns, "patch", "pytorchjobs.kubeflow.org/pytorchjob", "--type=json", "-p", patch)
		if err == nil {
			t.Fatalf("a template-breaking UPDATE was accepted")
		}
		checkDenied(t, stderr, "invalid-nccl-value", nil)
		// And a label on the now-compliant object passes.
		if _, stderr, err := E.kc("-n", ns, "label", "pytorchjobs.kubeflow.org/pytorchjob", "team=vision"); err != nil {
			t.Errorf("label on a compliant object refused: %v: %s", err, stderr)
		}
	})
}

// TestUnselectedNamespacesNeverReachWebhook: namespaces without the label,
// and kube-system even with it, are never sent to the webhook.
func TestUnselectedNamespacesNeverReachWebhook(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	logFrom := fileSize(E.wh.logPath)
	ns := "e2e-hostnet-unlabelled" // the policy would mutate it, were it sent
	mustCreateNS(t, ns, false)
	check := func(t *testing.T, ns string) {
		for _, f := range append(workloadFiles(t), writeTemp(t, "bad.yaml", denyCases[0].manifest)) {
			if _, stderr, err := E.kc("create", "-n", ns, "-f", f); err != nil {
				t.Errorf("create %s in %s: %v: %s", filepath.Base(f), ns, err, stderr)
				continue
			}
			if s := mustJSON(stored(t, ns, f)["spec"]); looksMutated(s) {
				t.Errorf("%s in %s was mutated: %s", filepath.Base(f), ns, s)
			}
		}
	}
	t.Run(ns, func(t *testing.T) { check(t, ns) })
	t.Run("kube-system", func(t *testing.T) {
		if err := E.labelNamespace("kube-system"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			args := []string{"label", "namespace", "kube-system"}
			for k := range E.nsLabels {
				args = append(args, k+"-")
			}
			_, _, _ = E.kc(args...)
		}()
		time.Sleep(2 * time.Second) // let the API server's namespace informer see the label
		check(t, "kube-system")
	})
	// The webhook runs with --log-level debug: it logs every review with
	// its namespace. (Its request counter cannot tell: the controllers keep
	// submitting in other, selected namespaces.)
	data, _ := os.ReadFile(E.wh.logPath)
	if int64(len(data)) >= logFrom {
		for _, line := range strings.Split(string(data[logFrom:]), "\n") {
			if strings.Contains(line, "e2e-hostnet-unlabelled") || strings.Contains(line, "kube-system") {
				t.Errorf("the webhook was called for an unselected namespace: %s", line)
			}
		}
	}
}

// TestControllerCreatedPods: with kube-controller-manager running, the
// pods the Job and ReplicaSet controllers create from a mutated template
// reach the Pod webhook and are admitted unchanged: the pod-level mutation
// is an empty patch, and mutate predicts no operation for them either.
func TestControllerCreatedPods(t *testing.T) {
	requireWebhook(t)
	if !withControllerManager() {
		t.Skip("E2E_CONTROLLER_MANAGER=0: no kube-controller-manager")
	}
	logsOnFailure(t)
	ns := "e2e-sriov-controllers"
	mustCreateNS(t, ns, true)
	waitSelected(t, ns)
	for _, c := range []struct{ file, selector, templatePtr string }{
		{"job.yaml", "job-name=job", "/spec/template"},
		{"deployment.yaml", "app=deployment", "/spec/template"},
	} {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			f := filepath.Join(E.repo, "tests/e2e/testdata/workloads", c.file)
			if _, stderr, err := E.kc("create", "-n", ns, "-f", f); err != nil {
				t.Fatalf("create: %v: %s", err, stderr)
			}
			tmpl, _ := lookup(stored(t, ns, f), c.templatePtr)
			var pods []any
			if err := eventually(90*time.Second, func() error {
				out, stderr, err := E.kc("get", "pods", "-n", ns, "-l", c.selector, "-o", "json")
				if err != nil {
					return fmt.Errorf("%v: %s", err, stderr)
				}
				var list struct{ Items []any }
				_ = json.Unmarshal([]byte(out), &list)
				if len(list.Items) == 0 {
					ev, _, _ := E.kc("get", "events", "-n", ns)
					return fmt.Errorf("no pod created by the controller yet; events:\n%s", ev)
				}
				pods = list.Items
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				pod := p.(map[string]any)
				name := lookupString(pod, "/metadata/name")
				if refs, _ := lookup(pod, "/metadata/ownerReferences/0/controller"); refs != true {
					t.Errorf("pod %s has no controller owner reference", name)
				}
				// What the template says (mutated at submit) is what the pod has.
				for _, ptr := range []string{"/spec/containers", "/spec/hostNetwork", "/spec/dnsPolicy", "/spec/volumes",
					"/metadata/annotations/k8s.v1.cni.cncf.io~1networks"} {
					want, inTmpl := lookup(tmpl, ptr)
					have, inPod := lookup(pod, ptr)
					if inTmpl != inPod || (inTmpl && !subset(want, have)) {
						t.Errorf("pod %s %s differs from its template:\n  template %s\n  pod      %s", name, ptr, mustJSON(want), mustJSON(have))
					}
				}
				out, stderr, code, err := rw(mustJSON(pod), "mutate", "-o", "patch", "--policy", E.policy, "--namespace", ns, "-")
				if err != nil || code > 1 {
					t.Fatalf("mutate -o patch of pod %s: exit %d %v: %s", name, code, err, stderr)
				}
				if strings.TrimSpace(out) != "[]" {
					t.Errorf("mutate predicts operations for controller-created pod %s (not idempotent): %s", name, out)
				}
			}
		})
	}
}

// looksMutated: the JSON of a stored spec holds something only the webhook
// adds to the test's manifests (none sets these).
func looksMutated(spec string) bool {
	for _, mark := range []string{`"hostNetwork":true`, "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME", "IPC_LOCK", "rdma/"} {
		if strings.Contains(spec, mark) {
			return true
		}
	}
	return false
}

// TestWebhookDown: the webhook process is killed. failurePolicy Fail:
// submissions in selected namespaces fail with a clear error, others are
// unaffected; Ignore: they pass unmutated; after a restart all is normal.
func TestWebhookDown(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	sel, unsel := "e2e-hostnet-down", "e2e-hostnet-down-unselected"
	mustCreateNS(t, sel, true)
	mustCreateNS(t, unsel, false)
	waitSelected(t, sel)
	defer func() {
		if err := E.applyConfigs(E.configs); err != nil {
			t.Error(err)
		}
		requireWebhook(t)
	}()

	if err := E.applyConfigs(E.patchedConfigs(func(w map[string]any) { w["failurePolicy"] = "Fail" })); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	E.wh.kill()

	t.Run("Fail", func(t *testing.T) {
		start := time.Now()
		_, stderr, err := E.kcIn(gpuPodYAML("while-down-fail"), "create", "-n", sel, "-f", "-")
		if err == nil {
			t.Fatalf("submission in a selected namespace passed while the webhook is down with failurePolicy Fail")
		}
		if !strings.Contains(stderr, "failed calling webhook") {
			t.Errorf("error does not say the webhook call failed: %s", stderr)
		}
		t.Logf("refused after %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr))
		if _, stderr, err := E.kcIn(gpuPodYAML("while-down-unselected"), "create", "-n", unsel, "-f", "-"); err != nil {
			t.Errorf("unselected namespace affected by the down webhook: %v: %s", err, stderr)
		}
		if _, stderr, err := E.kc("create", "configmap", "while-down", "-n", "kube-system", "--from-literal=a=b"); err != nil {
			t.Errorf("kube-system affected by the down webhook: %v: %s", err, stderr)
		}
	})

	t.Run("Ignore", func(t *testing.T) {
		if err := E.applyConfigs(E.patchedConfigs(func(w map[string]any) { w["failurePolicy"] = "Ignore" })); err != nil {
			t.Fatal(err)
		}
		err := eventually(15*time.Second, func() error {
			_, stderr, err := E.kcIn(gpuPodYAML("while-down-ignore"), "create", "-n", sel, "-f", "-")
			if err != nil {
				return fmt.Errorf("with failurePolicy Ignore the submission failed: %v: %s", err, stderr)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if looksMutated(mustJSON(stored(t, sel, podRef("while-down-ignore"))["spec"])) {
			t.Errorf("pod admitted with Ignore while the webhook is down is mutated?")
		}
	})

	t.Run("restart", func(t *testing.T) {
		if err := E.applyConfigs(E.configs); err != nil {
			t.Fatal(err)
		}
		if err := E.wh.start(); err != nil {
			t.Fatal(err)
		}
		waitSelected(t, sel)
		if _, stderr, err := E.kcIn(gpuPodYAML("after-restart"), "create", "-n", sel, "-f", "-"); err != nil {
			t.Fatalf("after restart: %v: %s", err, stderr)
		}
		if s := mustJSON(stored(t, sel, podRef("after-restart"))["spec"]); !looksMutated(s) {
			t.Errorf("pod created after restart is not mutated: %s", s)
		}
	})
}

// TestCertRotationUnderLoad: the serving certificate is rotated on disk
// (Secret-style ..data swap, then files replaced in place) while the API
// server keeps submitting over keep-alive connections: nothing fails, and
// the webhook ends up serving the new certificate.
func TestCertRotationUnderLoad(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	ns := "e2e-sriov-rotate"
	mustCreateNS(t, ns, true)
	waitSelected(t, ns)

	first, err := E.wh.servingCert()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var failures []string
	created := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("rot-%d-%d", w, i)
				_, stderr, err := E.kcIn(gpuPodYAML(name), "create", "-n", ns, "-f", "-")
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("%s at %s: %s", name, time.Now().Format("15:04:05.000"), strings.TrimSpace(stderr)))
				} else {
					created++
				}
				mu.Unlock()
			}
		}(w)
	}
	time.Sleep(3 * time.Second)
	if err := E.pki.rotate(); err != nil {
		t.Error(err)
	}
	t.Logf("rotated (..data swap) at %s", time.Now().Format("15:04:05.000"))
	time.Sleep(4 * time.Second)
	if err := E.pki.rotateInPlace(); err != nil {
		t.Error(err)
	}
	t.Logf("rotated (files replaced in place) at %s", time.Now().Format("15:04:05.000"))
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d submissions during rotation, %d failed", created+len(failures), len(failures))
	for _, f := range failures {
		t.Errorf("submission failed during rotation: %s", f)
	}
	if created == 0 {
		t.Errorf("no submission succeeded")
	}
	if err := eventually(20*time.Second, func() error {
		c, err := E.wh.servingCert()
		if err != nil {
			return err
		}
		if c.SerialNumber.Cmp(E.pki.serial) != 0 {
			return fmt.Errorf("webhook still serves serial %s (first %s), want %s", c.SerialNumber, first.SerialNumber, E.pki.serial)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	// Still mutating after the rotation.
	if _, stderr, err := E.kcIn(gpuPodYAML("after-rotation"), "create", "-n", ns, "-f", "-"); err != nil {
		t.Errorf("after rotation: %v: %s", err, stderr)
	}
}

// TestSlowWebhookTimeout: the webhook stops answering (SIGSTOP) and the API
// server's timeoutSeconds decides; failurePolicy Fail refuses within the
// timeout, Ignore admits unmutated; after SIGCONT all is normal.
func TestSlowWebhookTimeout(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	ns := "e2e-hostnet-slow"
	mustCreateNS(t, ns, true)
	waitSelected(t, ns)
	defer func() {
		_ = E.wh.signal(syscall.SIGCONT)
		if err := E.applyConfigs(E.configs); err != nil {
			t.Error(err)
		}
	}()
	const timeout = 2
	for _, policy := range []string{"Fail", "Ignore"} {
		t.Run(policy, func(t *testing.T) {
			if err := E.applyConfigs(E.patchedConfigs(func(w map[string]any) {
				w["failurePolicy"] = policy
				w["timeoutSeconds"] = timeout
			})); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			if err := E.wh.signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			name := "slow-" + strings.ToLower(policy)
			_, stderr, err := E.kcIn(gpuPodYAML(name), "create", "-n", ns, "-f", "-")
			took := time.Since(start)
			_ = E.wh.signal(syscall.SIGCONT)
			t.Logf("failurePolicy %s, timeoutSeconds %d: answered after %s", policy, timeout, took.Round(time.Millisecond))
			if took > 30*time.Second {
				t.Errorf("the API server took %s, far beyond timeoutSeconds=%d", took, timeout)
			}
			switch policy {
			case "Fail":
				if err == nil {
					t.Fatalf("a stalled webhook with failurePolicy Fail admitted the pod")
				}
				low := strings.ToLower(stderr)
				if !strings.Contains(low, "timeout") && !strings.Contains(low, "deadline exceeded") {
					t.Errorf("error does not say the call timed out: %s", stderr)
				}
			case "Ignore":
				if err != nil {
					t.Fatalf("a stalled webhook with failurePolicy Ignore refused the pod: %s", stderr)
				}
				if looksMutated(mustJSON(stored(t, ns, podRef(name))["spec"])) {
					t.Errorf("pod admitted past a stalled webhook is mutated?")
				}
			}
		})
	}
	t.Run("resumed", func(t *testing.T) {
		if err := E.applyConfigs(E.configs); err != nil {
			t.Fatal(err)
		}
		_ = E.wh.signal(syscall.SIGCONT)
		waitSelected(t, ns)
	})
}
