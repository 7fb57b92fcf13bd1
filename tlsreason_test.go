package zklock

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every alert a server sends for a refused client certificate is that
// reason, whichever the JVM sends; other alerts, and failures when the
// server asked for no certificate, keep crypto/tls's words only.
func TestTLSReasonFromAlert(t *testing.T) {
	alert := func(text string) error { return &net.OpError{Op: "remote error", Err: errors.New(text)} }
	for _, tc := range []struct {
		name        string
		err         error
		asked, sent bool
		want        error
		detail      string
	}{
		{"JDK 17.0.15, TLS 1.2", alert("tls: bad certificate"), true, false, ErrTLSClientCertificate, "we sent none"},
		{"JDK 17.0.19, TLS 1.2", alert("tls: handshake failure"), true, false, ErrTLSClientCertificate, "we sent none"},
		{"JDK 17.0.19, TLS 1.3", alert("tls: certificate required"), true, false, ErrTLSClientCertificate, "we sent none"},
		{"untrusted client certificate", alert("tls: unknown certificate authority"), true, true, ErrTLSClientCertificate, "does not trust the certificate we sent"},
		{"certificate unknown", alert("tls: unknown certificate"), true, true, ErrTLSClientCertificate, "does not trust"},
		{"not asked", alert("tls: handshake failure"), false, false, nil, ""},
		{"version", alert("tls: protocol version not supported"), true, false, nil, ""},
		{"eof", io.EOF, true, false, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &certRequest{}
			r.asked.Store(tc.asked)
			r.sent.Store(tc.sent)
			got := r.explain(tc.err)
			assert.ErrorIs(t, got, tc.err)
			if tc.want == nil {
				assert.Equal(t, tc.err, got, "unchanged")
				return
			}
			assert.ErrorIs(t, got, tc.want)
			assert.Contains(t, got.Error(), tc.detail)
			assert.Contains(t, got.Error(), tc.err.Error())
		})
	}
}

// choose picks a certificate as crypto/tls would and records the request.
func TestCertRequestChoose(t *testing.T) {
	r := &certRequest{}
	cert, err := r.choose(&tls.Config{})(&tls.CertificateRequestInfo{})
	assert.NoError(t, err)
	assert.Empty(t, cert.Certificate)
	assert.True(t, r.asked.Load())
	assert.False(t, r.sent.Load())

	r = &certRequest{}
	want := tls.Certificate{Certificate: [][]byte{{1}}}
	cert, err = r.choose(&tls.Config{GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &want, nil }})(&tls.CertificateRequestInfo{})
	assert.NoError(t, err)
	assert.Same(t, &want, cert)
	assert.True(t, r.sent.Load())
}
