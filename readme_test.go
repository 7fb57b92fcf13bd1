package zklock_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// The README's Go code, compiled here: every block of it that is not a
// whole file or test of another package is below, verbatim (see
// TestREADMECodeBlocks).

// --- README: the mutex ---

// nightlyReport writes the report while it holds /locks/nightly-report.
func nightlyReport(ctx context.Context, servers []string) error {
	sess, err := zklock.Connect(servers, zklock.WithSessionTimeout(10*time.Second))
	if err != nil {
		return err
	}
	defer sess.Close()

	m, err := zklock.NewMutex(sess, "/locks/nightly-report")
	if err != nil {
		return err
	}
	hold, err := m.Lock(ctx) // waits until held, ctx ends, or the session expires
	if err != nil {
		return err // never (nil, nil): a nil hold always comes with an error
	}
	defer hold.Release()

	// Work under the lock with hold.Context(): it is cancelled the moment the
	// lock may be lost. Pass the token to every resource you write.
	return writeReport(hold.Context(), hold.Token())
}

// --- README: fencing, data kept in ZooKeeper ---

func writeConfig(sess *zklock.Session, hold *zklock.Hold, b []byte) error {
	_, err := sess.Conn().Multi(hold.Guard(), &zk.SetDataRequest{Path: "/app/config", Data: b, Version: -1})
	return err
}

// --- README: TLS ---

func connectTLS(ca *x509.CertPool, clientCert tls.Certificate) (*zklock.Session, error) {
	sess, err := zklock.Connect([]string{"zk1.example.com:2281", "zk2.example.com:2281", "zk3.example.com:2281"},
		zklock.WithTLS(&tls.Config{RootCAs: ca, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12}))
	return sess, err
}

// --- README: credentials and ACLs ---

func teamMutex(servers []string, user, password string) (*zklock.Session, *zklock.Mutex, error) {
	sess, err := zklock.Connect(servers, zklock.WithAuth("digest", []byte(user+":"+password)))
	if err != nil {
		return nil, nil, err
	}
	m, err := zklock.NewMutex(sess, "/locks/team/nightly", zklock.WithACL(zklock.CreatorACL()))
	return sess, m, err
}

// --- end of the README's code ---

var reportToken atomic.Int64

// writeReport stands for the README's report: it records the token.
func writeReport(ctx context.Context, token int64) error {
	reportToken.Store(token)
	return ctx.Err()
}

// The README's mutex function and guarded write, run: the report is
// written under the lock with its token; the guarded write applies while
// the hold lasts and is refused once it is released. The TLS snippet
// connects nowhere (Connect returns at once).
func TestIntegration_READMECode(t *testing.T) {
	c := zktest.Start(t)
	require.NoError(t, nightlyReport(ctxTimeout(t, 20*time.Second), c.Servers()))
	require.Positive(t, reportToken.Load())

	s := connect(t, c)
	_, err := s.Conn().Create("/app", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = s.Conn().Create("/app/config", []byte("v1"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	m, err := zklock.NewMutex(s, "/locks/config")
	require.NoError(t, err)
	h, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, writeConfig(s, h, []byte("v2")))
	require.NoError(t, h.Release())
	require.Error(t, writeConfig(s, h, []byte("v3")), "a released hold's guard must fail the write")
	data, _, err := s.Conn().Get("/app/config")
	require.NoError(t, err)
	require.Equal(t, "v2", string(data))

	sess, err := connectTLS(x509.NewCertPool(), tls.Certificate{})
	require.NoError(t, err)
	require.NoError(t, sess.Close())
}

// ignored matches a Go file the build never compiles.
var ignored = regexp.MustCompile(`(?m)^//go:build ignore$`)

// goBlocks returns the README's ```go blocks.
func goBlocks(t *testing.T, readme string) [][]string {
	t.Helper()
	var blocks [][]string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```go":
			in, cur = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			cur = append(cur, line)
		}
	}
	require.NoError(t, sc.Err())
	require.False(t, in, "an unterminated ```go block")
	return blocks
}

// findBlock reports whether block occurs in src as consecutive lines, each
// with the same indentation of tabs (a block in a function body is indented
// there and not in the README).
func findBlock(src []byte, block []string) bool {
	lines := strings.Split(string(src), "\n")
	for i := range lines {
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], "\t"))]
		if i+len(block) > len(lines) || lines[i] != indent+block[0] {
			continue
		}
		ok := true
		for j, b := range block {
			if l := lines[i+j]; l != indent+b && !(b == "" && l == "") {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Every Go block of the README compiles: each is, verbatim, part of a Go
// file of the repository that the build compiles (this file, a test of
// zktest or zktest/containers, an example program); go vet and go test of
// each module compile those. A README edit that leaves its copy behind
// fails here, and an edit of the copy that does not compile fails the build.
func TestREADMECodeBlocks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := goBlocks(t, string(readme))
	require.GreaterOrEqual(t, len(blocks), 6, "the README's Go blocks")
	var files []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	}))
	srcs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if !ignored.Match(b) {
			srcs[f] = b
		}
	}
	for _, block := range blocks {
		var where []string
		for f, src := range srcs {
			if findBlock(src, block) {
				where = append(where, f)
			}
		}
		require.NotEmpty(t, where, "this README block is in no Go file of the repository:\n%s", strings.Join(block, "\n"))
		t.Logf("%q... is in %v", block[0], where)
	}
}

// mdLink matches a Markdown link or image target that is a path in the
// repository (not a URL, not an anchor of the same page).
var mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)(#[^)]*)?\)`)

// Every link of the README to a file or directory of the repository
// resolves, and every example program is linked from it.
func TestREADMELinks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, m := range mdLink.FindAllStringSubmatch(string(readme), -1) {
		target := filepath.Clean(m[1])
		linked[target] = true
		_, err := os.Stat(target)
		require.NoError(t, err, "the README links %s, which does not exist", m[1])
	}
	examples, err := os.ReadDir("examples")
	require.NoError(t, err)
	for _, e := range examples {
		if e.IsDir() {
			require.True(t, linked[filepath.Join("examples", e.Name())], "the README never links examples/%s", e.Name())
		}
	}
}

// notifyContext matches a call of signal.NotifyContext and its arguments.
var notifyContext = regexp.MustCompile(`(?m)signal\.NotifyContext\((.*)\)\s*$`)

// Every program users copy (the example programs, the package's Example
// functions, the README's code) stops on SIGTERM as on SIGINT: systemd,
// Docker and Kubernetes stop a process with SIGTERM, and a leader that
// dies on it without releasing keeps the next one waiting for its session
// to expire. TestIntegration_LeaderOnlySIGTERM measures the handover.
func TestExamplesStopOnSIGTERM(t *testing.T) {
	files, err := filepath.Glob("example_*_test.go")
	require.NoError(t, err)
	mains, err := filepath.Glob("examples/*/main.go")
	require.NoError(t, err)
	files = append(append(files, mains...), "README.md")
	calls := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range notifyContext.FindAllStringSubmatch(string(src), -1) {
			calls++
			require.Contains(t, m[1], "syscall.SIGTERM", "%s: %s stops on SIGINT only", f, m[0])
			require.True(t, strings.Contains(m[1], "os.Interrupt") || strings.Contains(m[1], "syscall.SIGINT"),
				"%s: %s does not stop on SIGINT", f, m[0])
		}
	}
	require.GreaterOrEqual(t, calls, 6, "the programs' signal.NotifyContext calls")
}
