package e2e

// TrainJobs against Kubeflow Trainer's real CRDs (testdata/trainer-crds.yaml, v2.3.0): the API
// server holds the released schemas (pruning, CEL rules, list-map keys), so a TrainJob the
// webhook mutated is stored only if what the webhook wrote into spec.trainer and
// spec.runtimePatches is valid to Trainer. The stored TrainJob is then rendered the way Trainer
// renders it (trainerOracle below) and its `node` container must hold what the namespace's
// mode needs.
//
// A TrainJob is judged with its runtime, which the webhook reads from its cluster watch: this
// scenario starts a watching server and points copies of the chart's webhook configurations at
// it, for the namespaces it labels e2e.rdma-webhook.io/trainer=true only (the shared server, which
// does not watch, would read every TrainJob `unknown`).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

const trainerNSLabel = "e2e.rdma-webhook.io/trainer"

// A runtime as Trainer's stock torch runtime is shaped: one `node` job for the trainer, no
// GPUs, no RDMA, not on the host network.
const e2eTorchRuntime = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: e2e-torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: registry.invalid/ml/torch:2.5
                      env: [{name: RUNTIME_ONLY, value: "1"}]
                      resources:
                        requests: {cpu: "4"}
`

// Two nodes with eight GPUs each, and an entry of another manager (Kueue's) that the webhook
// must leave as it is.
func e2eTrainJob(name string, suspend bool) string {
	return fmt.Sprintf(`
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: %s}
spec:
  suspend: %t
  runtimeRef: {name: e2e-torch}
  trainer:
    image: registry.invalid/ml/llama-train:1
    numNodes: 2
    numProcPerNode: 8
    env: [{name: EPOCHS, value: "3"}]
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
  runtimePatches:
    - manager: kueue.x-k8s.io/manager
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector: {e2e/flavor: h100}
`, name, suspend)
}

// trainerWebhook starts a watching server and points copies of the installed webhook
// configurations at it for namespaces labelled trainerNSLabel.
func trainerWebhook(t *testing.T) *webhook {
	t.Helper()
	w := watchingWebhook(t, "rdma-webhook")
	configs := E.patchedConfigs(func(wh map[string]any) {
		cc := wh["clientConfig"].(map[string]any)
		url := cc["url"].(string)
		cc["url"] = strings.Replace(url, fmt.Sprintf(":%d/", E.wh.port), fmt.Sprintf(":%d/", w.port), 1)
		wh["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{trainerNSLabel: "true"}}
		wh["name"] = "trainer-" + wh["name"].(string)
	})
	var names []string
	for _, c := range configs {
		md := c["metadata"].(map[string]any)
		md["name"] = fmt.Sprint(md["name"]) + "-e2e-trainer"
		names = append(names, strings.ToLower(c["kind"].(string))+"/"+md["name"].(string))
	}
	if err := E.applyConfigs(configs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = E.kc(append([]string{"delete", "--ignore-not-found"}, names...)...) })
	return w
}

func trainerNamespace(t *testing.T, ns string) {
	t.Helper()
	mustCreateNS(t, ns, false)
	if _, stderr, err := E.kc("label", "namespace", ns, "--overwrite", trainerNSLabel+"=true"); err != nil {
		t.Fatalf("label %s: %v: %s", ns, err, stderr)
	}
	t.Cleanup(func() { _, _, _ = E.kc("delete", "namespace", ns, "--wait=false") })
}

// createTrainJob creates the TrainJob in ns, retrying while the API server has not yet seen
// the namespace's label or the new webhook configurations (the object comes back unmutated).
func createTrainJob(t *testing.T, ns, manifest string) (map[string]any, string) {
	t.Helper()
	var obj map[string]any
	var warnings string
	if err := eventually(30*time.Second, func() error {
		out, stderr, err := E.kcIn(manifest, "create", "-n", ns, "-o", "json", "-f", "-")
		if err != nil {
			return fmt.Errorf("create TrainJob: %v: %s", err, stderr)
		}
		obj = map[string]any{}
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			return err
		}
		if len(asList(dig(obj, "spec", "runtimePatches"))) < 2 {
			name := dig(obj, "metadata", "name").(string)
			_, _, _ = E.kc("delete", "trainjob", "-n", ns, name, "--wait=true")
			return fmt.Errorf("TrainJob stored without the webhook's runtimePatches entry: %s", out)
		}
		warnings = stderr
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return obj, warnings
}

func TestTrainJobWithTrainerCRDs(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	crds := filepath.Join(E.repo, "tests/e2e/testdata/trainer-crds.yaml")
	if _, stderr, err := E.kc("apply", "--server-side", "-f", crds); err != nil {
		t.Fatalf("Trainer CRDs: %v: %s", err, stderr)
	}
	if _, stderr, err := E.kc("wait", "--for=condition=Established", "--timeout=60s", "-f", crds); err != nil {
		t.Fatalf("Trainer CRDs not established: %v: %s", err, stderr)
	}
	if _, stderr, err := E.kcIn(watchRBAC, "apply", "-f", "-"); err != nil {
		t.Fatalf("RBAC: %v: %s", err, stderr)
	}
	if _, stderr, err := E.kcIn(e2eTorchRuntime, "apply", "-f", "-"); err != nil {
		t.Fatalf("runtime: %v: %s", err, stderr)
	}
	t.Cleanup(func() { _, _, _ = E.kc("delete", "clustertrainingruntime", "e2e-torch", "--ignore-not-found") })
	w := trainerWebhook(t)
	if err := eventually(30*time.Second, func() error {
		if v := w.metric("rdma_webhook_watch_objects", `resource="clustertrainingruntimes.trainer.kubeflow.org"`); v < 1 {
			return fmt.Errorf("clustertrainingruntimes in the watch = %v, want 1", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var runtime map[string]any
	out, stderr, err := E.kc("get", "clustertrainingruntime", "e2e-torch", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &runtime) != nil {
		t.Fatalf("get runtime: %v: %s", err, stderr)
	}

	t.Run("mutated TrainJob is valid to Trainer's schema and renders RDMA-ready pods", func(t *testing.T) {
		ns := "e2e-shared-trainer"
		trainerNamespace(t, ns)
		stored, _ := createTrainJob(t, ns, e2eTrainJob("llama", false))
		patches := asList(dig(stored, "spec", "runtimePatches"))
		if m := dig(patches[0].(map[string]any), "manager"); m != "kueue.x-k8s.io/manager" {
			t.Errorf("runtimePatches[0].manager = %v: the other manager's entry must stay first", m)
		}
		if sel := dig(patches[0].(map[string]any), "trainingRuntimeSpec", "template", "spec", "replicatedJobs"); !strings.Contains(mustJSON(sel), `"e2e/flavor":"h100"`) {
			t.Errorf("Kueue's entry changed: %s", mustJSON(patches[0]))
		}
		if m := dig(patches[1].(map[string]any), "manager"); m != "rdma-webhook.io/mutator" {
			t.Errorf("runtimePatches[1].manager = %v, want the webhook's", m)
		}
		pods := trainerOracle(t, runtime, stored)
		node := pods["node"]
		if node == nil {
			t.Fatalf("no `node` job in the rendered JobSet")
		}
		if p := dig(node, "spec", "parallelism"); fmt.Sprint(p) != "2" {
			t.Errorf("node job parallelism = %v, want numNodes 2", p)
		}
		c := container(t, node, "node")
		if caps := mustJSON(dig(c, "securityContext", "capabilities", "add")); !strings.Contains(caps, `"IPC_LOCK"`) {
			t.Errorf("node container capabilities %s lack IPC_LOCK", caps)
		}
		env := envMap(c)
		if env["NCCL_IB_DISABLE"] != "0" {
			t.Errorf("node container env %v: NCCL_IB_DISABLE != 0", env)
		}
		if env["EPOCHS"] != "3" || env["RUNTIME_ONLY"] != "1" {
			t.Errorf("node container env %v: the TrainJob's and the runtime's variables must stay", env)
		}
		limits := dig(c, "resources", "limits")
		if fmt.Sprint(dig(limits, "nvidia.com/gpu")) != "8" || fmt.Sprint(dig(limits, "rdma/hca_shared_devices_a")) != "1" {
			t.Errorf("node container limits %s: want 8 GPUs and the shared HCA", mustJSON(limits))
		}
		if fmt.Sprint(dig(c, "resources", "requests", "cpu")) != "4" {
			t.Errorf("node container requests %s: the runtime's cpu must stay (v2.3 merges)", mustJSON(dig(c, "resources")))
		}
		if img := dig(c, "image"); img != "registry.invalid/ml/llama-train:1" {
			t.Errorf("node image = %v", img)
		}
		if sel := mustJSON(dig(node, "spec", "template", "spec", "nodeSelector")); !strings.Contains(sel, "h100") {
			t.Errorf("Kueue's nodeSelector lost in the rendered pod: %s", sel)
		}
		// Submitting the stored object again changes nothing.
		again, stderr, err := E.kcIn(mustJSON(stored), "replace", "-n", ns, "-o", "json", "-f", "-")
		if err != nil {
			t.Fatalf("replace unchanged: %v: %s", err, stderr)
		}
		var after map[string]any
		_ = json.Unmarshal([]byte(again), &after)
		if mustJSON(after["spec"]) != mustJSON(stored["spec"]) {
			t.Errorf("an unchanged UPDATE changed the spec:\nbefore %s\nafter  %s", mustJSON(stored["spec"]), mustJSON(after["spec"]))
		}
	})

	t.Run("a runtime without hostNetwork is named in the warnings", func(t *testing.T) {
		ns := "e2e-hostnet-trainer"
		trainerNamespace(t, ns)
		stored, warnings := createTrainJob(t, ns, e2eTrainJob("llama", false))
		for _, want := range []string{"trainer-runtime-no-rdma-path", "ClusterTrainingRuntime 'e2e-torch'"} {
			if !strings.Contains(warnings, want) {
				t.Errorf("kubectl warnings lack %q:\n%s", want, warnings)
			}
		}
		pod := dig(trainerOracle(t, runtime, stored)["node"], "spec", "template", "spec")
		if dig(pod, "hostNetwork") != nil {
			t.Errorf("the rendered pod has hostNetwork %v: no TrainJob field carries it", dig(pod, "hostNetwork"))
		}
		if vols := mustJSON(dig(pod, "volumes")); !strings.Contains(vols, `"Memory"`) {
			t.Errorf("the rendered pod has no memory-backed /dev/shm (injectShm): %s", vols)
		}
	})

	t.Run("an UPDATE that changes the pods Trainer builds is judged", func(t *testing.T) {
		ns := "e2e-shared-trainer-upd"
		trainerNamespace(t, ns)
		stored, _ := createTrainJob(t, ns, e2eTrainJob("queued", true))
		spec := stored["spec"].(map[string]any)
		patches := asList(spec["runtimePatches"])
		ours := mustJSON(patches[1])
		// While it is suspended (the only time Trainer lets runtimePatches change), a profiler
		// appends an entry whose capability list replaces the one with IPC_LOCK: refused.
		var profiler map[string]any
		_ = json.Unmarshal([]byte(`{"manager": "e2e.example/profiler", "trainingRuntimeSpec": {"template": {"spec":
			{"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {"containers":
			[{"name": "node", "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}}]}}}}}]}}}}`), &profiler)
		spec["runtimePatches"] = append(append([]any{}, patches...), profiler)
		_, stderr, err := E.kcIn(mustJSON(stored), "replace", "-n", ns, "-f", "-")
		if err == nil || !strings.Contains(stderr, "ipc-lock-missing") {
			t.Errorf("an update dropping IPC_LOCK from the trainer pods: err %v, stderr %s; want refused naming ipc-lock-missing", err, stderr)
		}
		// Kueue admits it: its entry gains a toleration, and the job is resumed in one update.
		spec["runtimePatches"] = patches
		kueuePod := dig(asList(dig(patches[0], "trainingRuntimeSpec", "template", "spec", "replicatedJobs"))[0],
			"template", "spec", "template", "spec").(map[string]any)
		kueuePod["tolerations"] = []any{map[string]any{"key": "e2e/gpu", "operator": "Exists", "effect": "NoSchedule"}}
		spec["suspend"] = false
		out, stderr, err := E.kcIn(mustJSON(stored), "replace", "-n", ns, "-o", "json", "-f", "-")
		if err != nil {
			t.Fatalf("Kueue's admission update: %v: %s", err, stderr)
		}
		var after map[string]any
		_ = json.Unmarshal([]byte(out), &after)
		list := asList(dig(after, "spec", "runtimePatches"))
		if len(list) != 2 || !strings.Contains(mustJSON(list[0]), "e2e/gpu") || mustJSON(list[1]) != ours {
			t.Errorf("runtimePatches after Kueue's update: %s\nwant Kueue's entry as sent, then the webhook's unchanged %s", mustJSON(list), ours)
		}
		if mustJSON(dig(after, "spec", "trainer")) != mustJSON(spec["trainer"]) {
			t.Errorf("spec.trainer changed on UPDATE (Trainer's CRD makes it immutable)")
		}
		c := container(t, trainerOracle(t, runtime, after)["node"], "node")
		if caps := mustJSON(dig(c, "securityContext", "capabilities", "add")); !strings.Contains(caps, `"IPC_LOCK"`) {
			t.Errorf("rendered node capabilities %s lack IPC_LOCK", caps)
		}
	})
}

// trainerOracle renders a stored TrainJob on its runtime into the JobSet's replicated job
// templates (name -> batch/v1 JobTemplateSpec as a map), written from Trainer v2.3.0's own
// documented order (docs/operator-guides/runtime-patches.md; pkg/runtime/core/trainingruntime.go
// and pkg/runtime/framework/plugins/jobset/builder.go):
//  1. the runtime's spec.template.spec.replicatedJobs;
//  2. each runtimePatches entry in list order, as a Kubernetes strategic merge patch of the
//     JobSet spec: replicatedJobs merge by name and each job template by the batch/v1 patch
//     keys (containers and volumes by name, env by name, ...);
//  3. on jobs labelled trainer.kubeflow.org/trainjob-ancestor-step=trainer, container `node`:
//     spec.trainer image, command and args replace, env is upserted by name,
//     resourcesPerNode's limits and requests merge per resource name over the container's
//     (v2.3.0) and its claims are dropped; numNodes becomes parallelism and completions.
//
// It is independent of the webhook's C++ model: the merge is apimachinery's strategicpatch.
func trainerOracle(t *testing.T, runtime, trainjob map[string]any) map[string]map[string]any {
	t.Helper()
	jobs := map[string]map[string]any{}
	var order []string
	for _, j := range asList(dig(runtime, "spec", "template", "spec", "replicatedJobs")) {
		jm := j.(map[string]any)
		name := jm["name"].(string)
		tmpl, _ := jm["template"].(map[string]any)
		jobs[name] = deepCopy(t, tmpl)
		order = append(order, name)
	}
	for _, p := range asList(dig(trainjob, "spec", "runtimePatches")) {
		for _, rj := range asList(dig(p, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")) {
			rjm := rj.(map[string]any)
			base, ok := jobs[rjm["name"].(string)]
			if !ok {
				t.Fatalf("runtimePatches names job %v, which the runtime lacks", rjm["name"])
			}
			merged, err := strategicpatch.StrategicMergePatch([]byte(mustJSON(base)), []byte(mustJSON(rjm["template"])), batchv1.JobTemplateSpec{})
			if err != nil {
				t.Fatalf("strategic merge of %s: %v", mustJSON(rjm), err)
			}
			out := map[string]any{}
			if err := json.Unmarshal(merged, &out); err != nil {
				t.Fatal(err)
			}
			jobs[rjm["name"].(string)] = out
		}
	}
	trainer, _ := dig(trainjob, "spec", "trainer").(map[string]any)
	numNodes := dig(runtime, "spec", "mlPolicy", "numNodes")
	if n := dig(trainer, "numNodes"); n != nil {
		numNodes = n
	}
	for _, name := range order {
		job := jobs[name]
		if dig(job, "metadata", "labels", "trainer.kubeflow.org/trainjob-ancestor-step") != "trainer" {
			continue
		}
		spec := job["spec"].(map[string]any)
		spec["parallelism"], spec["completions"] = numNodes, numNodes
		for _, c := range asList(dig(spec, "template", "spec", "containers")) {
			cm := c.(map[string]any)
			if cm["name"] != "node" || trainer == nil {
				continue
			}
			for _, f := range []string{"image", "command", "args"} {
				if v, ok := trainer[f]; ok {
					cm[f] = v
				}
			}
			env := asList(cm["env"])
			for _, e := range asList(trainer["env"]) {
				found := false
				for i, have := range env {
					if have.(map[string]any)["name"] == e.(map[string]any)["name"] {
						env[i], found = e, true
					}
				}
				if !found {
					env = append(env, e)
				}
			}
			cm["env"] = env
			if rpn, ok := trainer["resourcesPerNode"].(map[string]any); ok {
				res, _ := cm["resources"].(map[string]any)
				merged := map[string]any{}
				for _, part := range []string{"limits", "requests"} {
					m := map[string]any{}
					for k, v := range asMap(res[part]) {
						m[k] = v
					}
					for k, v := range asMap(rpn[part]) {
						m[k] = v
					}
					if len(m) > 0 {
						merged[part] = m
					}
				}
				cm["resources"] = merged
			}
		}
	}
	return jobs
}

func container(t *testing.T, job map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range asList(dig(job, "spec", "template", "spec", "containers")) {
		if cm := c.(map[string]any); cm["name"] == name {
			return cm
		}
	}
	t.Fatalf("no container %q in %s", name, mustJSON(job))
	return nil
}

func envMap(c map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range asList(c["env"]) {
		em := e.(map[string]any)
		out[fmt.Sprint(em["name"])] = fmt.Sprint(em["value"])
	}
	return out
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asList(v any) []any         { l, _ := v.([]any); return l }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
