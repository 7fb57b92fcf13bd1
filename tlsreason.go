package zklock

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"sync/atomic"
)

// The reasons a TLS refusal is reported with, in the terms a user acts on.
// Each is wrapped, beside ErrTLSHandshake and what crypto/tls said, by the
// errors of a session whose servers refuse it: which alert a server sends
// for a reason differs between ZooKeeper's JVMs (for a missing client
// certificate: bad_certificate, handshake_failure or certificate_required),
// so test for these, not for the alert.
var (
	// ErrTLSClientCertificate: the server asked for a client certificate
	// and refused ours, or we sent none (check WithTLS's Certificates, the
	// CLI's --tls-cert and --tls-key, and the server's trust store).
	ErrTLSClientCertificate = errors.New("zklock: the server refused our client certificate")
	// ErrTLSUntrusted: the server's certificate does not verify against
	// our trusted roots (unknown authority, expired, not for serving).
	ErrTLSUntrusted = errors.New("zklock: the server's certificate is not trusted")
	// ErrTLSNameMismatch: the server's certificate is valid, but not for
	// the name we reached it by (ServerName, the CLI's --tls-server-name).
	ErrTLSNameMismatch = errors.New("zklock: the server's certificate does not name the server")
)

// tlsReason is a TLS failure with the reason it is reported as.
type tlsReason struct {
	reason error  // one of the ErrTLS reasons
	detail string // what we know beyond the reason, or ""
	err    error  // as crypto/tls said it
}

func (e *tlsReason) Error() string {
	msg := e.reason.Error()[len("zklock: "):]
	if e.detail != "" {
		msg += " (" + e.detail + ")"
	}
	return msg + ": " + e.err.Error()
}

func (e *tlsReason) Unwrap() []error { return []error{e.reason, e.err} }

// certRequest is what one connection's handshake learned of the server's
// request for a client certificate.
type certRequest struct {
	asked atomic.Bool // the server asked for one
	sent  atomic.Bool // we sent one
}

// choose answers the server's request as crypto/tls does without a
// GetClientCertificate (the first of cfg's certificates the server
// accepts, else none), or by cfg's own callback, and records it.
func (r *certRequest) choose(cfg *tls.Config) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		r.asked.Store(true)
		var cert *tls.Certificate
		if cfg.GetClientCertificate != nil {
			c, err := cfg.GetClientCertificate(cri)
			if err != nil {
				return nil, err
			}
			cert = c
		} else {
			for i := range cfg.Certificates {
				if cri.SupportsCertificate(&cfg.Certificates[i]) == nil {
					cert = &cfg.Certificates[i]
					break
				}
			}
		}
		if cert == nil {
			cert = &tls.Certificate{}
		}
		r.sent.Store(len(cert.Certificate) > 0)
		return cert, nil
	}
}

// certAlerts are the alerts a server sends when it refuses a client
// certificate (or its absence), as crypto/tls words them: JVMs differ in
// which they send, and TLS 1.3 servers send theirs after the handshake.
var certAlerts = map[string]bool{
	"tls: bad certificate": true, "tls: unsupported certificate": true, "tls: revoked certificate": true,
	"tls: expired certificate": true, "tls: unknown certificate": true, "tls: unknown certificate authority": true,
	"tls: access denied": true, "tls: handshake failure": true, "tls: certificate required": true,
}

// explain wraps err, a failure of the TLS connection, with its reason
// when it has one; other errors are returned as they are.
func (r *certRequest) explain(err error) error {
	var (
		host x509.HostnameError
		ca   x509.UnknownAuthorityError
		cert x509.CertificateInvalidError
		op   *net.OpError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &host):
		return &tlsReason{reason: ErrTLSNameMismatch, err: err}
	case errors.As(err, &ca), errors.As(err, &cert):
		return &tlsReason{reason: ErrTLSUntrusted, err: err}
	case errors.As(err, &op) && op.Op == "remote error" && r.asked.Load() && certAlerts[op.Err.Error()]:
		detail := "we sent none; it requires one"
		if r.sent.Load() {
			detail = "it does not trust the certificate we sent"
		}
		return &tlsReason{reason: ErrTLSClientCertificate, detail: detail, err: err}
	}
	return err
}

// tlsConn is a client TLS connection whose read errors carry their reason:
// a TLS 1.3 server refuses a client certificate after the handshake, with
// the first read.
type tlsConn struct {
	*tls.Conn
	req *certRequest
}

func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	return n, c.req.explain(err)
}
