package e2e

// The cluster watch as the webhook's decisions see it, on the real API server: a
// ResourceClaimTemplate and a DeviceClass created after the webhook started change its next
// answer without a restart; a resourceVersion that etcd compacted away gives a real 410 Gone
// and a relist that loses nothing; an API server restarted under the webhook (etcd kept) is
// reconnected to with backoff, and objects created after it reach the decision.
//
// The decisions are asked of the watching webhook's own /validate with an AdmissionReview
// (no webhook configuration points at it) and read from the answer's `path` audit annotation.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The namespace of these scenarios: the e2e policy's default (mode off, validation warn)
// applies, and the path is decided whatever the mode.
const faultsNS = "e2e-watch-dra"

// dranetClass selects dranet's NICs that do RDMA, as the policy's default dra.nicDrivers
// (driver dra.net, attribute rdma) recognises them (docs/dra.md).
const dranetClass = `
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-dranet-rdma}
spec:
  selectors:
    - cel: {expression: 'device.driver == "dra.net" && device.attributes["dra.net"].rdma == true'}
`

// claimTemplate: one request of the class above.
func claimTemplate(name string) string {
	return fmt.Sprintf(`
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: %s, namespace: %s}
spec:
  spec:
    devices:
      requests:
        - name: nics
          exactly: {deviceClassName: e2e-dranet-rdma, count: 2}
`, name, faultsNS)
}

// draPod: a GPU pod whose NICs come from a claim made from the template `template`.
func draPod(template string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "trainer-" + template, "namespace": faultsNS},
		"spec": map[string]any{
			"resourceClaims": []any{map[string]any{"name": "nics", "resourceClaimTemplateName": template}},
			"containers": []any{map[string]any{
				"name": "train", "image": "example.com/train:1",
				"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"IPC_LOCK"}}},
				"resources": map[string]any{
					"limits": map[string]any{"nvidia.com/gpu": "8"},
					"claims": []any{map[string]any{"name": "nics"}},
				},
			}},
		},
	}
}

// decidedPath asks the webhook's /validate about a Pod CREATE and returns the path it decided.
func (w *webhook) decidedPath(pod map[string]any) (string, error) {
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid":       "e2e-watch-faults",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"resource":  map[string]any{"group": "", "version": "v1", "resource": "pods"},
			"namespace": faultsNS, "operation": "CREATE",
			"name":     pod["metadata"].(map[string]any)["name"],
			"userInfo": map[string]any{"username": "e2e"},
			"object":   pod,
		},
	}
	c := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: E.pki.pool(), ServerName: "127.0.0.1"}}}
	resp, err := c.Post(fmt.Sprintf("https://127.0.0.1:%d/validate", w.port), "application/json",
		bytes.NewReader([]byte(mustJSON(review))))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var answer struct {
		Response struct {
			AuditAnnotations map[string]string `json:"auditAnnotations"`
		} `json:"response"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || resp.StatusCode != 200 {
		return "", fmt.Errorf("/validate: HTTP %d: %s", resp.StatusCode, body)
	}
	return answer.Response.AuditAnnotations["path"], nil
}

// waitPath waits until the webhook decides `want` for the pod and returns how long that took.
func waitPath(t *testing.T, w *webhook, pod map[string]any, want string, timeout time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	if err := eventually(timeout, func() error {
		got, err := w.decidedPath(pod)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("path %q, want %q", got, want)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", pod["metadata"].(map[string]any)["name"], err)
	}
	return time.Since(t0)
}

func lists(w *webhook, resource string) float64 {
	return w.metric("rdma_webhook_watch_lists_total", `resource="`+resource+`"`, `result="ok"`)
}

func objects(w *webhook, resource string) float64 {
	return w.metric("rdma_webhook_watch_objects", `resource="`+resource+`"`)
}

// clusterCount is how many objects of a resource the API server holds (all namespaces).
func clusterCount(t *testing.T, resource string) float64 {
	t.Helper()
	out, stderr, err := E.kc("get", resource, "-A", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get %s: %v: %s", resource, err, stderr)
	}
	return float64(len(strings.Fields(out)))
}

// compactEtcd writes twice, so that etcd's revision is at least two past every
// resourceVersion the webhook holds (a watch from v starts at v+1, which a compaction to v+1
// still keeps), then compacts etcd's history up to that revision.
func compactEtcd(t *testing.T) int64 {
	t.Helper()
	for _, verb := range []string{"create", "delete"} {
		if _, stderr, err := E.kc(verb, "configmap", "-n", faultsNS, "compaction-mark"); err != nil {
			t.Fatalf("%s configmap: %v: %s", verb, err, stderr)
		}
	}
	url, err := os.ReadFile(filepath.Join(E.work, "controlplane", "etcd-url"))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{strings.TrimSpace(string(url))}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := cli.Get(ctx, "compaction-probe")
	if err != nil {
		t.Fatalf("etcd get: %v", err)
	}
	rev := got.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("etcd compact to %d: %v", rev, err)
	}
	return rev
}

// logHas: a line of the webhook's log past byte `from` holds every part.
func logHas(w *webhook, from int64, parts ...string) bool {
	b, _ := os.ReadFile(w.logPath)
	if from > int64(len(b)) {
		return false
	}
	for _, line := range strings.Split(string(b[from:]), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

const (
	deviceClasses  = "deviceclasses.resource.k8s.io"
	claimTemplates = "resourceclaimtemplates.resource.k8s.io"
)

func TestClusterWatchFaults(t *testing.T) {
	requireWebhook(t)
	logsOnFailure(t)
	installWatchRBAC(t)
	if _, stderr, err := E.kc("create", "namespace", faultsNS); err != nil {
		t.Fatalf("namespace: %v: %s", err, stderr)
	}
	t.Cleanup(func() {
		_, _, _ = E.kcIn(dranetClass, "delete", "--ignore-not-found", "-f", "-")
		_, _, _ = E.kc("delete", "namespace", faultsNS, "--wait=false")
	})
	// Watches end after [2s, 4s) and retries wait at most 2s, so that the faults below are
	// seen and recovered from within seconds.
	w := watchingWebhook(t, "rdma-webhook", "--watch-timeout", "2s", "--watch-backoff-max", "2s")

	t.Run("a template and a class created after start change the next decision", func(t *testing.T) {
		pod := draPod("rdma-nics")
		if got, err := w.decidedPath(pod); err != nil || got != "unknown" {
			t.Fatalf("before the template exists: path %q (%v), want unknown", got, err)
		}
		if _, stderr, err := E.kcIn(claimTemplate("rdma-nics"), "apply", "-f", "-"); err != nil {
			t.Fatalf("template: %v: %s", err, stderr)
		}
		if err := eventually(20*time.Second, func() error {
			if v := objects(w, claimTemplates); v != clusterCount(t, claimTemplates) {
				return fmt.Errorf("templates in the store: %v", v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// The template names a class the cluster does not have yet: still unknown.
		if got, err := w.decidedPath(pod); err != nil || got != "unknown" {
			t.Fatalf("template without its class: path %q (%v), want unknown", got, err)
		}
		if _, stderr, err := E.kcIn(dranetClass, "apply", "-f", "-"); err != nil {
			t.Fatalf("class: %v: %s", err, stderr)
		}
		took := waitPath(t, w, pod, "dra", 20*time.Second)
		t.Logf("MEASURED: DeviceClass created -> decision dra in %s", took.Round(time.Millisecond))
		if v := lists(w, deviceClasses); v != 1 {
			t.Errorf("deviceclasses LISTs = %v, want 1: a watch event, not a relist, changed the decision", v)
		}
	})

	t.Run("an etcd compaction expires the watch: 410 Gone, relist, nothing lost", func(t *testing.T) {
		before, beforeClasses := lists(w, claimTemplates), lists(w, deviceClasses)
		logFrom := fileSize(w.logPath)
		if _, stderr, err := E.kcIn(claimTemplate("rdma-nics-2"), "apply", "-f", "-"); err != nil {
			t.Fatalf("template: %v: %s", err, stderr)
		}
		rev := compactEtcd(t)
		t0 := time.Now()
		// Templates are watched from etcd itself (cmd/controlplane keeps them out of the
		// watch cache): the next watch, from a resourceVersion below the compaction, is
		// answered 410 Gone.
		if err := eventually(20*time.Second, func() error {
			if v := lists(w, claimTemplates); v <= before {
				return fmt.Errorf("resourceclaimtemplates LISTs = %v, want more than %v after compacting to %d", v, before, rev)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("MEASURED: etcd compacted -> templates listed again in %s", time.Since(t0).Round(time.Millisecond))
		if !logHas(w, logFrom, "resourceVersion expired (410 Gone); listing again", claimTemplates) {
			t.Errorf("no 410 line for %s in the log", claimTemplates)
		}
		// etcd's 410 comes inside the watch's stream, as an ERROR event.
		if v := w.metric("rdma_webhook_watch_events_total", `resource="`+claimTemplates+`"`, `type="error"`); v < 1 {
			t.Errorf("resourceclaimtemplates ERROR events = %v, want the 410 as one", v)
		}
		if got, want := objects(w, claimTemplates), clusterCount(t, claimTemplates); got != want {
			t.Errorf("templates in the store after the relist: %v, the cluster has %v", got, want)
		}
		waitPath(t, w, draPod("rdma-nics"), "dra", 5*time.Second)
		waitPath(t, w, draPod("rdma-nics-2"), "dra", 5*time.Second)
		// Cached resources resume from their bookmarks: the compaction is not theirs to see.
		t.Logf("deviceclasses LISTs %v -> %v (served from the watch cache)", beforeClasses, lists(w, deviceClasses))
	})

	t.Run("API server restarted: reconnect with backoff, new objects reach the decision", func(t *testing.T) {
		classes, templates := lists(w, deviceClasses), lists(w, claimTemplates)
		logFrom := fileSize(w.logPath)
		// Polled beside the restart: when the class list count moved, and the fewest classes
		// the webhook held meanwhile.
		p := pollRestart(t, w, classes)
		t0 := time.Now()
		readyAt, err := E.restartAPIServer()
		if err != nil {
			t.Fatalf("restart: %v", err)
		}
		t.Logf("MEASURED: kube-apiserver stopped and ready again in %s", readyAt.Sub(t0).Round(time.Millisecond))
		// The new API server's watch cache starts at etcd's current revision: the class
		// watch's resourceVersion is older, so it is answered 410 and listed again.
		var at time.Time
		if err := eventually(30*time.Second, func() error {
			if at = p.relisted(); at.IsZero() {
				return fmt.Errorf("deviceclasses LISTs = %v, want more than %v after the restart", lists(w, deviceClasses), classes)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// The new API server serves lists and watches a little before its /readyz says ok.
		t.Logf("MEASURED: deviceclasses listed again %s after the restart began (%s after /readyz ok)",
			at.Sub(t0).Round(time.Millisecond), at.Sub(readyAt).Round(time.Millisecond))
		if !logHas(w, logFrom, "watch broke; watching again with backoff") {
			t.Errorf("no line for the broken watches")
		}
		// The relist follows the new watch cache's 410, or a first refusal (403) of the new
		// API server when the watch met that first.
		if !logHas(w, logFrom, "resourceVersion expired (410 Gone); listing again", deviceClasses) &&
			!logHas(w, logFrom, "403", deviceClasses) {
			t.Errorf("no 410 or 403 line for %s in the log", deviceClasses)
		}
		if v := w.metric("rdma_webhook_watch_synced", `resource="`+deviceClasses+`"`); v != 1 {
			t.Errorf("deviceclasses synced = %v after the restart, want 1", v)
		}
		// Objects created after the restart reach the decision.
		if _, stderr, err := E.kcIn(claimTemplate("after-restart"), "apply", "-f", "-"); err != nil {
			t.Fatalf("template: %v: %s", err, stderr)
		}
		took := waitPath(t, w, draPod("after-restart"), "dra", 30*time.Second)
		t.Logf("MEASURED: template created after the restart -> decision dra in %s", took.Round(time.Millisecond))
		// etcd kept the templates' history: their watch resumed from its resourceVersion,
		// unless it met the new API server's first moment of refusals (403), after which it
		// lists again.
		refused := logHas(w, logFrom, "403", claimTemplates)
		if v := lists(w, claimTemplates); v != templates && !refused {
			t.Errorf("resourceclaimtemplates LISTs %v -> %v: want the watch resumed from etcd's history, not a relist", templates, v)
		}
		t.Logf("resourceclaimtemplates: refused for a moment: %v; LISTs %v -> %v", refused, templates, lists(w, claimTemplates))
		if got, want := objects(w, claimTemplates), clusterCount(t, claimTemplates); got != want {
			t.Errorf("templates in the store: %v, the cluster has %v", got, want)
		}
		// The new API server refuses for a moment (403 until its RBAC caches are filled): the
		// webhook keeps what it had instead of falling back to the policy.
		if v := p.fewestClasses(); v < 1 {
			t.Errorf("the webhook held %v DeviceClasses at some point of the restart, want 1 throughout", v)
		}
		// (Kinds never listed, whose CRD is not installed, have nothing to keep: their
		// refusal is logged as RBAC's.)
		for _, r := range []string{deviceClasses, claimTemplates, "resourceclaims.resource.k8s.io",
			"network-attachment-definitions.k8s.cni.cncf.io"} {
			if logHas(w, logFrom, "RBAC forbids", r) {
				t.Errorf("%s: a refusal during the restart was logged as RBAC taken away", r)
			}
		}
	})
}

// restartPoll watches a webhook's metrics every 50 ms during an API server restart.
type restartPoll struct {
	mu         sync.Mutex
	relistedAt time.Time
	fewest     float64
}

func pollRestart(t *testing.T, w *webhook, classesBefore float64) *restartPoll {
	p := &restartPoll{fewest: objects(w, deviceClasses)}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			v, l := objects(w, deviceClasses), lists(w, deviceClasses)
			p.mu.Lock()
			if v >= 0 && v < p.fewest {
				p.fewest = v
			}
			if p.relistedAt.IsZero() && l > classesBefore {
				p.relistedAt = time.Now()
			}
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })
	return p
}

func (p *restartPoll) relisted() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.relistedAt
}

func (p *restartPoll) fewestClasses() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fewest
}
