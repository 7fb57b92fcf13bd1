package zktest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// TLS is the key material of a Cluster started WithTLS,
// WithTLSClientAuth or WithTLSHostNames: a certificate authority made for
// the test, the servers' certificates (for 127.0.0.1, ::1 and localhost,
// or with WithTLSHostNames for one host name each) and a client
// certificate, all signed by it, and the PEM files holding them, so that
// Java, Python and command-line clients can be pointed at the same files.
// The files live in the cluster's directory and are removed with it.
type TLS struct {
	// CAFile is the CA certificate (PEM): the trust store for clients.
	CAFile string
	// CertFile and KeyFile are the client certificate and its private
	// key (PEM, PKCS #8).
	CertFile, KeyFile string
	// KeyStoreFile holds the client's private key and certificate in one
	// PEM file, the form ZooKeeper's PEM key store (Java clients) reads.
	KeyStoreFile string
	// ClientAuth tells whether the servers require a client certificate
	// (ssl.clientAuth=need).
	ClientAuth bool

	// HostNames are the names of WithTLSHostNames, one per member: member
	// i's certificate is valid for HostNames[i] alone (no IP address), so
	// a client that checks it must dial that name (or set ServerName).
	// Empty otherwise.
	HostNames []string

	serverKeyStores []string // per member: server key and certificate, one PEM file
	roots           *x509.CertPool
	client          tls.Certificate
}

// ClientConfig returns a new tls.Config for a client of the cluster: it
// trusts the test CA, presents the client certificate, and asks for TLS 1.2
// or later. ServerName is left empty: the server certificate is valid for
// 127.0.0.1, ::1 and localhost, and the harness's dialers (and
// zklock.WithTLS) check it against the address dialled; with
// WithTLSHostNames each member's is valid for its name only, so dial the
// members by those names. Modify the copy at will (for example drop
// Certificates to act as a client without a certificate).
func (t *TLS) ClientConfig() *tls.Config {
	return &tls.Config{
		RootCAs:      t.roots,
		Certificates: []tls.Certificate{t.client},
		MinVersion:   tls.VersionTLS12,
	}
}

// TLS returns the cluster's TLS material, or nil for a plaintext cluster.
func (c *Cluster) TLS() *TLS { return c.tls }

// clientTLS is the configuration the harness itself uses (four-letter
// words, Expire, Dialer), nil for plaintext.
func (c *Cluster) clientTLS() *tls.Config { return c.tls.harnessConfig() }

// harnessConfig is ClientConfig for the harness's own connections, which
// dial the members' addresses: with WithTLSHostNames, a member's
// certificate must chain to the test CA and be valid for one of the
// members' names (the harness does not know which address is whose when
// it dials), instead of for the address. nil for plaintext.
func (t *TLS) harnessConfig() *tls.Config {
	if t == nil {
		return nil
	}
	tc := t.ClientConfig()
	if len(t.HostNames) == 0 {
		return tc
	}
	names, roots := t.HostNames, t.roots
	tc.InsecureSkipVerify = true // verified below, against the names
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("zktest: no server certificate")
		}
		leaf := cs.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
			return err
		}
		for _, n := range names {
			if leaf.VerifyHostname(n) == nil {
				return nil
			}
		}
		return fmt.Errorf("zktest: server certificate for %v, none of %v", leaf.DNSNames, names)
	}
	return tc
}

// WithTLS serves clients only over TLS: the servers listen on a secure
// client port (ZooKeeper's secureClientPort, with the Netty connection
// factory and PEM key and trust stores) and the plaintext client port is
// closed. The certificates are made for the test with crypto/x509 (see
// TLS). Cluster.Servers lists the secure addresses; Dialer, Connect,
// FourLetter, Expire and WaitServing speak TLS; a Proxy cannot be used
// (it reads the protocol's frames). Local backend only: other backends skip
// the test. Only client connections use TLS: an ensemble's members talk to
// each other in plaintext. Default: off (plaintext).
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithTLSClientAuth is WithTLS with client certificates required
// (ssl.clientAuth=need): a client without one is refused during the TLS
// handshake. Default: off.
func WithTLSClientAuth() Option {
	return func(c *config) { c.tls, c.clientAuth = true, true }
}

// WithTLSHostNames is WithTLS with member i's certificate made for
// names[i] alone, a DNS name without any IP address, as certificates are
// usually issued for the hosts of an ensemble (zk1, zk2, zk3): a client
// that checks it must dial the member by that name (TLS.HostNames; for
// names other than localhost, through a dialer that maps them to the
// member's address, so nothing is added to the system's resolver). Give
// one name per server. Combine it with WithTLSClientAuth to require
// client certificates too. Default: none (the certificate of WithTLS).
func WithTLSHostNames(names ...string) Option {
	return func(c *config) { c.tls, c.tlsNames = true, append([]string(nil), names...) }
}

// pki is the test CA with a server and a client certificate, made once
// per test binary (key generation is the slow part).
type pki struct {
	caPEM              []byte
	serverCert, srvKey []byte // PEM
	clientCert, cliKey []byte // PEM
	roots              *x509.CertPool
	client             tls.Certificate

	// issue signs a new certificate with the CA: for server use (and
	// client use, as members present it to each other) when server, valid
	// for the given IPs and DNS names.
	issue func(cn string, usage x509.ExtKeyUsage, server bool, ips []net.IP, names []string) (certPEM, keyPEM []byte, err error)
}

var testPKI = sync.OnceValues(makePKI)

func makePKI() (*pki, error) {
	newKey := func() (*ecdsa.PrivateKey, []byte, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, nil, err
		}
		return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	serial := int64(1)
	now := time.Now()
	template := func(cn string) *x509.Certificate {
		serial++
		return &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn, Organization: []string{"zktest"}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(7 * 24 * time.Hour),
		}
	}
	caKey, _, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("zktest: CA key: %w", err)
	}
	caT := template("zktest CA")
	caT.IsCA, caT.BasicConstraintsValid = true, true
	caT.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("zktest: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // serial numbers
	issue := func(cn string, usage x509.ExtKeyUsage, server bool, ips []net.IP, names []string) (certPEM, keyPEM []byte, err error) {
		k, keyPEM, err := newKey()
		if err != nil {
			return nil, nil, err
		}
		mu.Lock()
		t := template(cn)
		mu.Unlock()
		t.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		t.ExtKeyUsage = []x509.ExtKeyUsage{usage}
		if server {
			// Also good for client authentication: ZooKeeper members
			// present it to each other and Netty checks it.
			t.ExtKeyUsage = append(t.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
			t.IPAddresses, t.DNSNames = ips, names
		}
		der, err := x509.CreateCertificate(rand.Reader, t, ca, &k.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
	}
	p := &pki{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), roots: x509.NewCertPool(), issue: issue}
	p.roots.AddCert(ca)
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if p.serverCert, p.srvKey, err = issue("zktest server", x509.ExtKeyUsageServerAuth, true, loopback, []string{"localhost"}); err != nil {
		return nil, fmt.Errorf("zktest: server certificate: %w", err)
	}
	if p.clientCert, p.cliKey, err = issue("zktest client", x509.ExtKeyUsageClientAuth, false, nil, nil); err != nil {
		return nil, fmt.Errorf("zktest: client certificate: %w", err)
	}
	if p.client, err = tls.X509KeyPair(p.clientCert, p.cliKey); err != nil {
		return nil, err
	}
	return p, nil
}

// writeTLS writes the cluster's PEM files into dir: with names, one server
// certificate per member, for its name alone.
func writeTLS(dir string, clientAuth bool, names []string) (*TLS, error) {
	p, err := testPKI()
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, "tls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	t := &TLS{
		CAFile:       filepath.Join(dir, "ca.pem"),
		CertFile:     filepath.Join(dir, "client-cert.pem"),
		KeyFile:      filepath.Join(dir, "client-key.pem"),
		KeyStoreFile: filepath.Join(dir, "client.pem"),
		ClientAuth:   clientAuth,
		HostNames:    append([]string(nil), names...),
		roots:        p.roots,
		client:       p.client,
	}
	files := map[string][]byte{
		t.CAFile:       p.caPEM,
		t.CertFile:     p.clientCert,
		t.KeyFile:      p.cliKey,
		t.KeyStoreFile: append(append([]byte{}, p.cliKey...), p.clientCert...),
	}
	if len(names) == 0 {
		ks := filepath.Join(dir, "server.pem")
		t.serverKeyStores = []string{ks}
		files[ks] = append(append([]byte{}, p.srvKey...), p.serverCert...)
	}
	for i, name := range names {
		cert, key, err := p.issue("zktest server "+name, x509.ExtKeyUsageServerAuth, true, nil, []string{name})
		if err != nil {
			return nil, fmt.Errorf("zktest: server certificate for %s: %w", name, err)
		}
		ks := filepath.Join(dir, fmt.Sprintf("server-%d.pem", i+1))
		t.serverKeyStores = append(t.serverKeyStores, ks)
		files[ks] = append(key, cert...)
	}
	for name, b := range files {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// serverProps are the JVM system properties that make member serve TLS
// with t's files.
func (t *TLS) serverProps(member int) map[string]string {
	auth := "none"
	if t.ClientAuth {
		auth = "need"
	}
	return map[string]string{
		"zookeeper.serverCnxnFactory":               "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"zookeeper.ssl.keyStore.location":           t.serverKeyStores[min(member, len(t.serverKeyStores)-1)],
		"zookeeper.ssl.keyStore.type":               "PEM",
		"zookeeper.ssl.trustStore.location":         t.CAFile,
		"zookeeper.ssl.trustStore.type":             "PEM",
		"zookeeper.ssl.clientAuth":                  auth,
		"zookeeper.ssl.hostnameVerification":        "false",
		"zookeeper.ssl.quorum.hostnameVerification": "false",
	}
}

// dialRaw opens a connection to addr for the harness's own requests, over
// TLS when tc is not nil.
func dialRaw(ctx context.Context, addr string, tc *tls.Config) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || tc == nil {
		return conn, err
	}
	tconn := tls.Client(conn, forAddr(tc, addr))
	if err := tconn.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("zktest: TLS handshake with %s: %w", addr, err)
	}
	return tconn, nil
}

// forAddr returns tc with ServerName set to addr's host if it has none, so
// that the certificate is checked against the address dialled.
func forAddr(tc *tls.Config, addr string) *tls.Config {
	if tc.ServerName != "" || tc.InsecureSkipVerify {
		return tc
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	tc = tc.Clone()
	tc.ServerName = host
	return tc
}
