package e2e

// The harness: one real control plane (embedded etcd + kube-apiserver, see
// cmd/controlplane) for the whole run, one rdma-webhook process that the
// scenarios may kill, stop and restart, kubectl for every submission.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"rdma-webhook/tests/e2e/internal/netutil"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// env is the shared state of one run.
type env struct {
	repo       string
	work       string // temp dir of this run (kept on failure)
	kubeconfig string
	kubectl    string
	cpLog      string
	cpCmd      *exec.Cmd
	cpDone     chan struct{} // closed when the control plane exited

	rwBinary string // "" when the server binary is not there yet
	helm     string // "" when helm is not available
	policy   string
	wh       *webhook
	pki      *testPKI

	// The webhook configurations as installed (JSON objects, after the
	// Service reference was replaced by a URL). chartConfigs is false when
	// the chart rendered none and the built-in fallback is in use.
	configs      []map[string]any
	chartConfigs bool
	nsLabels     map[string]string // labels that make a namespace selected
}

var E *env

func TestMain(m *testing.M) {
	code, err := setupAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup failed:", err)
		if E != nil {
			dumpFile(os.Stderr, "kube-apiserver log (tail)", E.cpLog, 0, 150)
			if E.wh != nil {
				dumpFile(os.Stderr, "rdma-webhook log (tail)", E.wh.logPath, 0, 150)
			}
		}
		code = 1
	}
	os.Exit(code)
}

func setupAndRun(m *testing.M) (int, error) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return 1, err
	}
	work, err := os.MkdirTemp("", "rw-e2e-")
	if err != nil {
		return 1, err
	}
	E = &env{repo: repo, work: work, kubectl: "kubectl"}
	if k := os.Getenv("KUBECTL"); k != "" {
		E.kubectl = k
	}
	if a := os.Getenv("E2E_ARTIFACTS"); a != "" {
		_ = os.MkdirAll(a, 0o755)
		E.work, _ = os.MkdirTemp(a, "run-")
	}
	fmt.Fprintf(os.Stderr, "e2e: work dir %s\n", E.work)

	cp, err := controlplaneBinary(repo)
	if err != nil {
		return 1, err
	}
	start := time.Now()
	if err := E.startControlPlane(cp); err != nil {
		return 1, err
	}
	defer E.stopControlPlane()
	fmt.Fprintf(os.Stderr, "e2e: control plane ready in %s\n", time.Since(start).Round(time.Millisecond))

	if err := E.installCRDs(); err != nil {
		return 1, err
	}

	E.helm = findHelm(repo)
	E.policy = filepath.Join(repo, "tests/e2e/testdata/policy.yaml")

	E.rwBinary = os.Getenv("RW_BINARY")
	if E.rwBinary != "" {
		if st, err := os.Stat(E.rwBinary); err != nil || st.IsDir() {
			fmt.Fprintf(os.Stderr, "e2e: RW_BINARY=%s does not exist yet: the scenarios that need the server are SKIPPED\n", E.rwBinary)
			E.rwBinary = ""
		}
	} else {
		fmt.Fprintln(os.Stderr, "e2e: RW_BINARY is not set: the scenarios that need the server are SKIPPED")
	}
	if E.rwBinary != "" {
		E.rwBinary, _ = filepath.Abs(E.rwBinary)
		E.pki, err = newTestPKI(filepath.Join(E.work, "webhook-pki"))
		if err != nil {
			return 1, err
		}
		E.wh = &webhook{logPath: filepath.Join(E.work, "rdma-webhook.log")}
		if err := E.wh.start(); err != nil {
			return 1, err
		}
		defer E.wh.stop()
		if err := E.installWebhookConfigs(); err != nil {
			return 1, err
		}
	}

	code := m.Run()
	if code == 0 && os.Getenv("E2E_KEEP") == "" && os.Getenv("E2E_ARTIFACTS") == "" {
		defer os.RemoveAll(work)
	}
	return code, nil
}

// controlplaneBinary returns the prebuilt control plane (run.sh builds it
// into $REPO/.cache/e2e-bin) or builds it with the go tool.
func controlplaneBinary(repo string) (string, error) {
	if p := os.Getenv("E2E_CONTROLPLANE"); p != "" {
		return p, nil
	}
	out := filepath.Join(repo, ".cache/e2e-bin/controlplane")
	fmt.Fprintln(os.Stderr, "e2e: E2E_CONTROLPLANE not set, building", out, "(cached by the go build cache)")
	cmd := exec.Command("nice", "-n", "10", "go", "build", "-o", out, "./cmd/controlplane")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build control plane: %w", err)
	}
	return out, nil
}

func findHelm(repo string) string {
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if p := filepath.Join(repo, ".cache/bin/helm"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	return ""
}

func (e *env) startControlPlane(bin string) error {
	dir := filepath.Join(e.work, "controlplane")
	e.cpLog = filepath.Join(e.work, "kube-apiserver.log")
	logf, err := os.Create(e.cpLog)
	if err != nil {
		return err
	}
	args := []string{"--dir", dir}
	if withControllerManager() {
		args = append(args, "--controller-manager")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	e.cpCmd = cmd
	e.kubeconfig = filepath.Join(dir, "kubeconfig")
	e.cpDone = make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); logf.Close(); close(e.cpDone) }()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-e.cpDone:
			return fmt.Errorf("control plane exited before ready: %v", waitErr)
		case <-time.After(300 * time.Millisecond):
		}
		if fileExists(filepath.Join(dir, "ready")) {
			// Wait for the default namespace and the RBAC bootstrap.
			for time.Now().Before(deadline) {
				if _, _, err := e.kc("get", "namespace", "default", "-o", "name"); err == nil {
					return nil
				}
				time.Sleep(300 * time.Millisecond)
			}
		}
	}
	return errors.New("control plane not ready within 3 minutes")
}

// strict: under CI (or E2E_REQUIRE_SERVER=1) what is missing fails instead
// of being skipped or replaced by a fallback.
func strict() bool { return os.Getenv("CI") == "true" || os.Getenv("E2E_REQUIRE_SERVER") == "1" }

// withControllerManager: kube-controller-manager runs unless
// E2E_CONTROLLER_MANAGER=0.
func withControllerManager() bool { return os.Getenv("E2E_CONTROLLER_MANAGER") != "0" }

func (e *env) stopControlPlane() {
	if e.cpCmd == nil || e.cpCmd.Process == nil {
		return
	}
	_ = e.cpCmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.cpDone:
	case <-time.After(3 * time.Second):
		// Its data is thrown away: no need to wait for a graceful drain.
		_ = syscall.Kill(-e.cpCmd.Process.Pid, syscall.SIGKILL)
		<-e.cpDone
	}
}

// restartAPIServer stops kube-apiserver and starts it again on the same port
// with the same etcd (cmd/controlplane restarts it on SIGHUP), and returns
// once it serves again as before: /readyz ok, kubectl answers, and every CRD
// kind resolves, so the scenarios after this one find the control plane as
// it was. readyAt is when /readyz answered ok again.
func (e *env) restartAPIServer() (readyAt time.Time, err error) {
	ready := filepath.Join(e.work, "controlplane", "ready")
	if err := os.Remove(ready); err != nil {
		return readyAt, err
	}
	t0 := time.Now()
	if err := e.cpCmd.Process.Signal(syscall.SIGHUP); err != nil {
		return readyAt, err
	}
	for !fileExists(ready) {
		select {
		case <-e.cpDone:
			return readyAt, errors.New("the control plane exited during the API server's restart")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(t0) > 2*time.Minute {
			return readyAt, errors.New("kube-apiserver not ready within 2 minutes of its restart")
		}
	}
	readyAt = time.Now()
	if err := eventually(time.Minute, func() error {
		if _, stderr, err := e.kc("get", "namespace", "default", "-o", "name"); err != nil {
			return fmt.Errorf("after the restart: %s", stderr)
		}
		return nil
	}); err != nil {
		return readyAt, err
	}
	// Applying the CRDs again changes nothing; it waits until each is
	// established and its kind resolves again.
	return readyAt, e.installCRDs()
}

func (e *env) installCRDs() error {
	f := filepath.Join(e.repo, "tests/e2e/testdata/crds.yaml")
	if _, stderr, err := e.kc("apply", "-f", f); err != nil {
		return fmt.Errorf("install CRDs: %v: %s", err, stderr)
	}
	if _, stderr, err := e.kc("wait", "--for=condition=Established", "--timeout=60s", "-f", f); err != nil {
		return fmt.Errorf("CRDs not established: %v: %s", err, stderr)
	}
	// The discovery cache of kubectl may lag right after: prove every kind resolves.
	for _, r := range []string{"pytorchjobs.kubeflow.org", "mpijobs.kubeflow.org", "jobs.batch.volcano.sh",
		"jobsets.jobset.x-k8s.io", "leaderworkersets.leaderworkerset.x-k8s.io"} {
		if err := eventually(30*time.Second, func() error {
			_, stderr, err := e.kc("get", r, "-A", "-o", "name")
			if err != nil {
				return fmt.Errorf("%s: %s", r, stderr)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// kc runs kubectl against the test cluster.
func (e *env) kc(args ...string) (string, string, error) {
	return e.kcIn("", args...)
}

// kcIn runs kubectl with stdin.
func (e *env) kcIn(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, append([]string{"--kubeconfig", e.kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// ---------------------------------------------------------------- webhook

type webhook struct {
	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{}
	port      int
	probePort int
	logPath   string
	starts    int
	extra     []string // more `serve` flags (the cluster watch's)
}

func (w *webhook) start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.port == 0 {
		ports, err := netutil.FreePorts(2)
		if err != nil {
			return err
		}
		w.port, w.probePort = ports[0], ports[1]
	}
	logf, err := os.OpenFile(w.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w.starts++
	fmt.Fprintf(logf, "\n===== e2e: rdma-webhook start #%d at %s =====\n", w.starts, time.Now().Format(time.RFC3339Nano))
	args := []string{"serve",
		"--tls-cert", E.pki.certPath(), "--tls-key", E.pki.keyPath(),
		"--policy", E.policy,
		"--listen", fmt.Sprintf("127.0.0.1:%d", w.port),
		"--probe-listen", fmt.Sprintf("127.0.0.1:%d", w.probePort),
		"--log-format", "text",
		"--log-level", "debug", // a line per review, with its namespace
		"--shutdown-delay", "1s",
	}
	args = append(args, w.extra...)
	cmd := exec.Command(E.rwBinary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	w.cmd = cmd
	done := make(chan struct{})
	w.done = done
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("rdma-webhook exited at start: %v (args %v)", cmd.ProcessState, args)
		case <-time.After(100 * time.Millisecond):
		}
		if w.readyLocked() {
			return nil
		}
	}
	return fmt.Errorf("rdma-webhook not ready within 30s (args %v)", args)
}

// readyLocked: /readyz on the probe port answers 200 and TLS handshakes.
func (w *webhook) readyLocked() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", w.probePort))
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return false
	}
	_, err = w.servingCert()
	return err == nil
}

// servingCert returns the leaf certificate the webhook serves now.
func (w *webhook) servingCert() (*x509.Certificate, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := tls.DialWithDialer(&d, "tcp", fmt.Sprintf("127.0.0.1:%d", w.port),
		&tls.Config{RootCAs: E.pki.pool(), ServerName: "127.0.0.1"})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// kill stops the webhook at once (SIGKILL).
func (w *webhook) kill() {
	w.mu.Lock()
	cmd, done := w.cmd, w.done
	w.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

// stop: SIGTERM, then SIGKILL after 20s.
func (w *webhook) stop() {
	w.mu.Lock()
	cmd, done := w.cmd, w.done
	w.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (w *webhook) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		return false
	}
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

func (w *webhook) signal(s syscall.Signal) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil || w.cmd.Process == nil {
		return errors.New("webhook not started")
	}
	return w.cmd.Process.Signal(s)
}

// metric returns the sum of a Prometheus counter over the series whose
// label text contains every filter, or -1 when /metrics is not available.
func (w *webhook) metric(name string, filters ...string) float64 {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", w.probePort))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return -1
	}
	body, _ := io.ReadAll(resp.Body)
	sum := 0.0
	found := false
lines:
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		for _, f := range filters {
			if !strings.Contains(rest, f) {
				continue lines
			}
		}
		fields := strings.Fields(rest)
		var v float64
		if _, err := fmt.Sscanf(fields[len(fields)-1], "%g", &v); err == nil {
			sum += v
			found = true
		}
	}
	if !found {
		return 0
	}
	return sum
}

// requireWebhook skips a scenario that needs the server binary and makes
// sure a healthy webhook is running.
func requireWebhook(t *testing.T) {
	t.Helper()
	if E.rwBinary == "" {
		if strict() {
			t.Fatal("rdma-webhook binary not available (RW_BINARY), and CI=true / E2E_REQUIRE_SERVER=1 forbid skipping")
		}
		t.Skip("rdma-webhook binary not available (set RW_BINARY to a built rdma-webhook): scenario needs the server")
	}
	if !E.wh.running() {
		if err := E.wh.start(); err != nil {
			t.Fatalf("restart webhook: %v", err)
		}
	}
	_ = E.wh.signal(syscall.SIGCONT)
}

// ---------------------------------------------------------------- logs

// logsOnFailure prints what the API server and the webhook logged during
// the test when it fails.
func logsOnFailure(t *testing.T) {
	t.Helper()
	cpOff := fileSize(E.cpLog)
	var whOff int64
	if E.wh != nil {
		whOff = fileSize(E.wh.logPath)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b strings.Builder
		dumpFile(&b, "kube-apiserver log during "+t.Name(), E.cpLog, cpOff, 200)
		if E.wh != nil {
			dumpFile(&b, "rdma-webhook log during "+t.Name(), E.wh.logPath, whOff, 200)
		}
		t.Log("\n" + b.String())
	})
}

func dumpFile(w io.Writer, title, path string, from int64, maxLines int) {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(w, "----- %s: %v\n", title, err)
		return
	}
	defer f.Close()
	_, _ = f.Seek(from, io.SeekStart)
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	skipped := 0
	if len(lines) > maxLines {
		skipped = len(lines) - maxLines
		lines = lines[skipped:]
	}
	fmt.Fprintf(w, "----- %s (%s", title, path)
	if skipped > 0 {
		fmt.Fprintf(w, ", last %d lines, %d earlier omitted", maxLines, skipped)
	}
	fmt.Fprintln(w, ") -----")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "----- end of %s -----\n", title)
}

// ---------------------------------------------------------------- small helpers

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func eventually(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func here() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(f)
}
