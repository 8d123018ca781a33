// Command controlplane runs a real, single-process Kubernetes control plane
// for the end-to-end tests: an embedded etcd and kube-apiserver (built from
// the published k8s.io/kubernetes module), both on 127.0.0.1 only.
//
//	controlplane --dir DIR
//
// It writes into DIR:
//
//	ca.crt, ca.key          the cluster CA (signs the API server's serving cert)
//	apiserver.crt/.key      the serving certificate (SANs 127.0.0.1, localhost)
//	sa.key, sa.pub          the service-account signing key pair
//	tokens.csv              static token file: one admin in system:masters
//	kubeconfig              for kubectl and the tests
//	etcd/                   etcd's data directory
//	etcd-url                etcd's client URL (a test compacts etcd through it)
//	ready                   created once /readyz answers ok (holds the URL)
//
// etcd runs in this process; kube-apiserver runs as a child (this binary
// re-executed as `controlplane kube-apiserver ARGS`), so that it can be
// restarted alone: SIGHUP stops it (SIGTERM, SIGKILL after 3s) and starts
// it again on the same port, with the same certificates and etcd, then
// writes `ready` again. The tests of the cluster watch use that to restart
// the API server under a running webhook.
//
// With --controller-manager it also runs kube-controller-manager (a child
// process: this binary re-executed as `controlplane kube-controller-manager
// ARGS`) with the job, replicaset, deployment, namespace, service-account
// and garbage-collector controllers, so a Job's pods are created for real.
//
// Logs go to stderr. SIGTERM/SIGINT stops the API server, then etcd. When
// the API server exits on its own, this process exits too.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"rdma-webhook/tests/e2e/internal/netutil"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "kube-controller-manager" {
		cmd := kcm.NewControllerManagerCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "kube-apiserver" {
		cmd := app.NewAPIServerCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		return
	}
	dir := flag.String("dir", "", "working directory for certificates, kubeconfig and etcd data (required)")
	verbosity := flag.Int("v", 1, "kube-apiserver log verbosity")
	withKCM := flag.Bool("controller-manager", false, "also run kube-controller-manager")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "controlplane: --dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *verbosity, *withKCM); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

func run(dir string, verbosity int, withKCM bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(dir, "ready"))

	// --- certificates and keys ---
	caCert, caKey, err := newCA()
	if err != nil {
		return err
	}
	if err := writeCertKey(dir, "ca", caCert, caKey); err != nil {
		return err
	}
	srvCert, srvKey, err := newServing(caCert, caKey, "kube-apiserver",
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")})
	if err != nil {
		return err
	}
	if err := writeCertKey(dir, "apiserver", srvCert, srvKey); err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub); err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	token := hex.EncodeToString(tok)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"),
		[]byte(token+",e2e-admin,e2e-admin,\"system:masters\"\n"), 0o600); err != nil {
		return err
	}

	// --- embedded etcd ---
	ports, err := netutil.FreePorts(3)
	if err != nil {
		return err
	}
	etcdCfg := embed.NewConfig()
	etcdCfg.Name = "e2e"
	etcdCfg.Dir = filepath.Join(dir, "etcd")
	etcdCfg.LogLevel = "warn"
	clientURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", ports[0]))
	peerURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", ports[1]))
	etcdCfg.ListenClientUrls = []url.URL{*clientURL}
	etcdCfg.AdvertiseClientUrls = []url.URL{*clientURL}
	etcdCfg.ListenPeerUrls = []url.URL{*peerURL}
	etcdCfg.AdvertisePeerUrls = []url.URL{*peerURL}
	etcdCfg.InitialCluster = etcdCfg.InitialClusterFromName(etcdCfg.Name)
	etcd, err := embed.StartEtcd(etcdCfg)
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	defer etcd.Close()
	select {
	case <-etcd.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("etcd did not become ready within 60s")
	}
	fmt.Fprintf(os.Stderr, "controlplane: etcd ready at %s\n", clientURL)

	// --- kubeconfig ---
	securePort := ports[2]
	server := fmt.Sprintf("https://127.0.0.1:%d", securePort)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin, namespace: default}
current-context: e2e
`, server, filepath.Join(dir, "ca.crt"), token)
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		return err
	}

	if err := os.WriteFile(filepath.Join(dir, "etcd-url"), []byte(clientURL.String()+"\n"), 0o644); err != nil {
		return err
	}

	// --- kube-apiserver, a child process ---
	apiserverArgs := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", securePort),
		"--etcd-servers=" + clientURL.String(),
		"--tls-cert-file=" + filepath.Join(dir, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(dir, "ca.crt"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=Node,RBAC",
		// Default admission plugins (MutatingAdmissionWebhook and
		// ValidatingAdmissionWebhook included). ServiceAccount is off: no
		// controller-manager creates the namespaces' default accounts.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--profiling=false",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, "cert-dir"),
		// ResourceClaimTemplates are not in the watch cache: their watches
		// are served by etcd itself, so that a compacted resourceVersion
		// gives the 410 Gone of etcd (TestClusterWatchFaults); every other
		// resource is cached as usual.
		"--watch-cache-sizes=resourceclaimtemplates.resource.k8s.io#0",
		fmt.Sprintf("--v=%d", verbosity),
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	for first := true; ; first = false {
		apiserver, exited, err := startAPIServer(apiserverArgs)
		if err != nil {
			return err
		}
		ready := make(chan struct{})
		go func() { waitReady(dir, server, caCert, token, exited); close(ready) }()
		if first && withKCM {
			go func() {
				<-ready
				startControllerManager(dir)
			}()
		}
		select {
		case err := <-exited:
			return fmt.Errorf("kube-apiserver exited: %v", err)
		case <-stop:
			stopProcess(apiserver, exited)
			return nil
		case <-hup:
			t0 := time.Now()
			_ = os.Remove(filepath.Join(dir, "ready"))
			stopProcess(apiserver, exited)
			fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver stopped for a restart in %s; etcd keeps running\n",
				time.Since(t0).Round(time.Millisecond))
		}
	}
}

// startAPIServer runs kube-apiserver as a child process that dies with this
// one; exited receives its end.
func startAPIServer(args []string) (*exec.Cmd, chan error, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, append([]string{"kube-apiserver"}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver started (pid %d)\n", cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd, exited, nil
}

// stopProcess ends a child: SIGTERM, SIGKILL 3s later. The API server stops
// listening at once on SIGTERM; here it then waited up to the SIGKILL, so a
// longer grace would only make the restart slower.
func stopProcess(cmd *exec.Cmd, exited chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// startControllerManager runs kube-controller-manager as a child process
// that dies with this one.
func startControllerManager(dir string) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "controlplane: kube-controller-manager:", err)
		return
	}
	cmd := exec.Command(self, "kube-controller-manager",
		"--kubeconfig="+filepath.Join(dir, "kubeconfig"),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--controllers=job-controller,replicaset-controller,deployment-controller,namespace-controller,serviceaccount-controller,garbage-collector-controller",
		"--concurrent-job-syncs=2",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane: kube-controller-manager:", err)
		return
	}
	fmt.Fprintf(os.Stderr, "controlplane: kube-controller-manager started (pid %d)\n", cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		fmt.Fprintln(os.Stderr, "controlplane: kube-controller-manager exited:", err)
	}()
}

// waitReady writes `ready` once /readyz answers ok; it gives up when the API
// server exits first (exited is not drained: the caller reads it).
func waitReady(dir, server string, ca *x509.Certificate, token string, exited chan error) {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	for {
		if len(exited) > 0 {
			return
		}
		req, _ := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				_ = os.WriteFile(filepath.Join(dir, "ready"), []byte(server+"\n"), 0o644)
				fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver ready at %s\n", server)
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func newCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rdma-webhook-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func newServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, dns []string, ips []net.IP) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func writeCertKey(dir, name string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", cert.Raw); err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
