package e2e

// The webhook configurations: rendered by the chart (`helm template`), with
// each webhook's Service reference replaced by a URL on 127.0.0.1 and the
// test CA as caBundle, so what the API server evaluates is the chart's own
// rules, selectors, failure policy and timeouts.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const releaseName = "rdma-webhook"
const releaseNamespace = "rdma-webhook"

// helmTemplate renders the chart with its default values (plus the files in
// E2E_HELM_VALUES, comma separated) and returns the objects as JSON maps.
func (e *env) helmTemplate(extraArgs ...string) ([]map[string]any, string, error) {
	if e.helm == "" {
		return nil, "", fmt.Errorf("helm not found (run scripts/install-helm.sh or set HELM)")
	}
	// The default image.repository names no registry, which the chart refuses;
	// no pod of the chart runs here (only its webhook configurations are used).
	args := []string{"template", releaseName, filepath.Join(e.repo, "charts/rdma-webhook"), "--namespace", releaseNamespace,
		"--set", "image.allowUnqualified=true"}
	if v := os.Getenv("E2E_HELM_VALUES"); v != "" {
		for _, f := range strings.Split(v, ",") {
			args = append(args, "-f", f)
		}
	}
	args = append(args, extraArgs...)
	cmd := exec.Command(e.helm, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, out.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	objs, err := splitYAML(out.String())
	return objs, out.String(), err
}

func splitYAML(s string) ([]map[string]any, error) {
	var objs []map[string]any
	var cur []string
	flush := func() error {
		doc := strings.Join(cur, "\n")
		cur = nil
		if strings.TrimSpace(stripComments(doc)) == "" {
			return nil
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return fmt.Errorf("parse YAML document: %v\n%s", err, doc)
		}
		if m != nil {
			objs = append(objs, m)
		}
		return nil
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "---") {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, line)
	}
	return objs, flush()
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// webhookConfigsForTest returns the chart's webhook configurations, turned
// into URL webhooks on the test's port with the test CA.
func (e *env) webhookConfigsForTest() ([]map[string]any, bool, error) {
	var configs []map[string]any
	fromChart := false
	objs, _, err := e.helmTemplate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: WARNING: cannot render the chart (%v)\n", err)
	}
	for _, o := range objs {
		k, _ := o["kind"].(string)
		if k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration" {
			configs = append(configs, o)
		}
	}
	if len(configs) > 0 {
		fromChart = true
	} else if strict() {
		return nil, false, fmt.Errorf("the chart rendered no webhook configurations (helm: %q, error: %v), and CI=true / E2E_REQUIRE_SERVER=1 forbid the fallback", e.helm, err)
	} else {
		fmt.Fprintln(os.Stderr, "e2e: WARNING: the chart renders no webhook configurations yet: using the built-in fallback (testdata/webhook-fallback.yaml)")
		data, err := os.ReadFile(filepath.Join(e.repo, "tests/e2e/testdata/webhook-fallback.yaml"))
		if err != nil {
			return nil, false, err
		}
		configs, err = splitYAML(string(data))
		if err != nil {
			return nil, false, err
		}
	}
	caBundle := base64.StdEncoding.EncodeToString(e.pki.caPEM)
	for _, c := range configs {
		kind := c["kind"].(string)
		defPath := "/mutate"
		if kind == "ValidatingWebhookConfiguration" {
			defPath = "/validate"
		}
		whs, _ := c["webhooks"].([]any)
		for _, w := range whs {
			wm := w.(map[string]any)
			cc, _ := wm["clientConfig"].(map[string]any)
			path := defPath
			if svc, ok := cc["service"].(map[string]any); ok {
				if p, ok := svc["path"].(string); ok && p != "" {
					path = p
				}
			}
			wm["clientConfig"] = map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d%s", e.wh.port, path),
				"caBundle": caBundle,
			}
		}
		// Drop what cert-manager or helm would manage.
		if md, ok := c["metadata"].(map[string]any); ok {
			delete(md, "annotations")
		}
	}
	return configs, fromChart, nil
}

func (e *env) installWebhookConfigs() error {
	configs, fromChart, err := e.webhookConfigsForTest()
	if err != nil {
		return err
	}
	e.configs, e.chartConfigs = configs, fromChart
	if err := e.applyConfigs(configs); err != nil {
		return err
	}
	e.nsLabels = selectorLabels(configs)
	fmt.Fprintf(os.Stderr, "e2e: %d webhook configuration(s) installed (from chart: %v); selected namespaces get labels %v\n",
		len(configs), fromChart, e.nsLabels)
	// Wait until the API server calls the webhook: a dry-run of a GPU pod in
	// a hostNetwork namespace comes back mutated.
	ns := "e2e-hostnet-ready"
	if err := e.createNamespace(ns, true); err != nil {
		return err
	}
	return eventually(60*time.Second, func() error {
		out, stderr, err := e.kcIn(gpuPodYAML("ready-probe"), "create", "--dry-run=server", "-n", ns, "-o", "json", "-f", "-")
		if err != nil {
			return fmt.Errorf("dry-run probe: %v: %s", err, stderr)
		}
		if !strings.Contains(out, `"hostNetwork": true`) {
			return fmt.Errorf("webhook not yet in effect: dry-run pod is not mutated")
		}
		return nil
	})
}

func (e *env) applyConfigs(configs []map[string]any) error {
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": configs}
	if _, stderr, err := e.kcIn(mustJSON(list), "apply", "-f", "-"); err != nil {
		return fmt.Errorf("apply webhook configurations: %v: %s", err, stderr)
	}
	return nil
}

// patchedConfigs returns deep copies of the installed configurations with
// f applied to every webhook.
func (e *env) patchedConfigs(f func(wh map[string]any)) []map[string]any {
	var out []map[string]any
	for _, c := range e.configs {
		var cp map[string]any
		if err := yaml.Unmarshal([]byte(mustJSON(c)), &cp); err != nil {
			panic(err)
		}
		for _, w := range cp["webhooks"].([]any) {
			f(w.(map[string]any))
		}
		out = append(out, cp)
	}
	return out
}

// selectorLabels returns labels that a namespace needs to be selected by
// every webhook's namespaceSelector.
func selectorLabels(configs []map[string]any) map[string]string {
	labels := map[string]string{}
	for _, c := range configs {
		for _, w := range c["webhooks"].([]any) {
			sel, _ := w.(map[string]any)["namespaceSelector"].(map[string]any)
			if ml, ok := sel["matchLabels"].(map[string]any); ok {
				for k, v := range ml {
					labels[k] = fmt.Sprint(v)
				}
			}
			exprs, _ := sel["matchExpressions"].([]any)
			for _, x := range exprs {
				xm := x.(map[string]any)
				key, _ := xm["key"].(string)
				op, _ := xm["operator"].(string)
				vals, _ := xm["values"].([]any)
				switch op {
				case "In":
					if key != "kubernetes.io/metadata.name" && len(vals) > 0 {
						if _, set := labels[key]; !set {
							labels[key] = fmt.Sprint(vals[0])
						}
					}
				case "Exists":
					if _, set := labels[key]; !set {
						labels[key] = "true"
					}
				}
			}
		}
	}
	return labels
}

// createNamespace creates ns, labelled so the webhooks select it when
// selected is true.
func (e *env) createNamespace(ns string, selected bool) error {
	if _, stderr, err := e.kc("create", "namespace", ns); err != nil && !strings.Contains(stderr, "AlreadyExists") {
		return fmt.Errorf("create namespace %s: %v: %s", ns, err, stderr)
	}
	if selected {
		return e.labelNamespace(ns)
	}
	return nil
}

func (e *env) labelNamespace(ns string) error {
	args := []string{"label", "namespace", ns, "--overwrite"}
	for k, v := range e.nsLabels {
		args = append(args, k+"="+v)
	}
	if len(e.nsLabels) == 0 {
		return nil
	}
	if _, stderr, err := e.kc(args...); err != nil {
		return fmt.Errorf("label namespace %s: %v: %s", ns, err, stderr)
	}
	return nil
}

func gpuPodYAML(name string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
  containers:
  - name: trainer
    image: registry.invalid/trainer:1
    resources:
      limits:
        nvidia.com/gpu: 1
`
}
