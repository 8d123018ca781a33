package e2e

// The webhook's test PKI: a CA (given to the API server as caBundle) and a
// serving certificate for 127.0.0.1, laid out like a mounted Kubernetes
// Secret (tls.crt -> ..data/tls.crt, ..data -> ..<generation>), so rotation
// is the same atomic symlink swap the kubelet does.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

type testPKI struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	gen    int
	serial *big.Int // serial of the current serving certificate
}

func newTestPKI(dir string) (*testPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rdma-webhook-e2e-webhook-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(48 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: dir, ca: ca, caKey: key,
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), p.caPEM, 0o644); err != nil {
		return nil, err
	}
	if err := p.rotate(); err != nil {
		return nil, err
	}
	for _, f := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *testPKI) certPath() string { return filepath.Join(p.dir, "tls.crt") }
func (p *testPKI) keyPath() string  { return filepath.Join(p.dir, "tls.key") }

func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

// issue makes a new serving key pair (PEM).
func (p *testPKI) issue() (certPEM, keyPEM []byte, serial *big.Int, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rdma-webhook.e2e.svc"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "rdma-webhook.rdma-webhook.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), serial, nil
}

// rotate writes a new serving certificate into a new generation directory
// and swaps ..data to it atomically (what the kubelet does for a Secret).
func (p *testPKI) rotate() error {
	certPEM, keyPEM, serial, err := p.issue()
	if err != nil {
		return err
	}
	p.gen++
	genName := fmt.Sprintf("..gen_%d_%d", p.gen, time.Now().UnixNano())
	genDir := filepath.Join(p.dir, genName)
	if err := os.MkdirAll(genDir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(genDir, "tls.crt"), certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(genDir, "tls.key"), keyPEM, 0o600); err != nil {
		return err
	}
	tmp := filepath.Join(p.dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(genName, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(p.dir, "..data")); err != nil {
		return err
	}
	p.serial = serial
	return nil
}

// rotateInPlace replaces the files behind ..data with rename(2), the way a
// cert tool writing plain files would (key first, then certificate).
func (p *testPKI) rotateInPlace() error {
	certPEM, keyPEM, serial, err := p.issue()
	if err != nil {
		return err
	}
	target, err := os.Readlink(filepath.Join(p.dir, "..data"))
	if err != nil {
		return err
	}
	genDir := filepath.Join(p.dir, target)
	for _, f := range []struct {
		name string
		data []byte
	}{{"tls.key", keyPEM}, {"tls.crt", certPEM}} {
		tmp := filepath.Join(genDir, "."+f.name+".tmp")
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(genDir, f.name)); err != nil {
			return err
		}
	}
	p.serial = serial
	return nil
}
