package e2e

// The chart's CEL matchConditions, evaluated by the real kube-apiserver with
// the real server behind them: in a selected namespace, Pods and workloads
// without GPU or RDMA resources never reach the webhook (not one review in
// its debug log, one `... name=<name> namespace=<ns> ...` line per review),
// while a GPU pod still does and comes back mutated.

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func cpuPodYAML(name string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
  containers:
  - name: web
    image: registry.invalid/web:1
    resources:
      limits:
        cpu: "1"
        memory: 1Gi
`
}

const cpuDeploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cpu-deploy
spec:
  selector:
    matchLabels: {app: cpu-deploy}
  template:
    metadata:
      labels: {app: cpu-deploy}
    spec:
      containers:
      - name: web
        image: registry.invalid/web:1
`

func TestCPUWorkloadsSkipTheWebhook(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	ns := "e2e-hostnet-cpu-only"
	mustCreateNS(t, ns, true)
	waitSelected(t, ns)
	logFrom := fileSize(E.wh.logPath)

	for name, manifest := range map[string]string{"cpu-pod": cpuPodYAML("cpu-pod"), "cpu-deploy": cpuDeploymentYAML} {
		if _, stderr, err := E.kcIn(manifest, "create", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("create %s: %v: %s", name, err, stderr)
		}
	}
	// A GPU pod afterwards: it must reach the webhook, so its review in the
	// log also shows the log is written (the check below is not vacuous).
	if _, stderr, err := E.kcIn(gpuPodYAML("gpu-after-cpu"), "create", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("create the GPU pod: %v: %s", err, stderr)
	}
	if s := mustJSON(stored(t, ns, podRef("gpu-after-cpu"))["spec"]); !looksMutated(s) {
		t.Errorf("the GPU pod was not mutated: %s", s)
	}
	var lines []string
	err := eventually(15*time.Second, func() error {
		data, _ := os.ReadFile(E.wh.logPath)
		lines = nil
		if int64(len(data)) > logFrom {
			lines = strings.Split(string(data[logFrom:]), "\n")
		}
		for _, l := range lines {
			if strings.Contains(l, " name=gpu-after-cpu ") {
				return nil
			}
		}
		return fmt.Errorf("the GPU pod's review is not in the webhook log")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if strings.Contains(l, " name=cpu-pod ") || strings.Contains(l, " name=cpu-deploy") {
			t.Errorf("a CPU object reached the webhook: %s", l)
		}
	}
	for _, cfg := range E.configs {
		whs, _ := cfg["webhooks"].([]any)
		for _, w := range whs {
			if _, ok := w.(map[string]any)["matchConditions"]; !ok {
				t.Errorf("%v has no matchConditions: the chart did not render them", cfg["kind"])
			}
		}
	}
}
