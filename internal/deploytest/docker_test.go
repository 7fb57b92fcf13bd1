package deploytest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// docker runs the docker CLI and returns its trimmed stdout.
func docker(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// mustDocker is docker, failing the test on an error.
func mustDocker(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := docker(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// engineAnswers skips the test unless a Docker engine answers.
func engineAnswers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker CLI on PATH (apt-get install docker.io): no Docker engine to deploy on")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := docker(ctx, "info", "--format", "{{.ServerVersion}}"); err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
}

// runID is a random name part, so that concurrent runs do not collide.
func runID(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// engine is the Docker Engine API on its unix socket: stop and kill go to
// it directly, so that the times measured from them do not include the
// docker CLI's own start. Without a unix socket they go through the CLI.
type engine struct {
	client *http.Client // nil: use the CLI
}

func newEngine() *engine {
	host := os.Getenv("DOCKER_HOST")
	sock := "/var/run/docker.sock"
	switch {
	case host == "":
	case strings.HasPrefix(host, "unix://"):
		sock = strings.TrimPrefix(host, "unix://")
	default:
		return &engine{}
	}
	if _, err := os.Stat(sock); err != nil {
		return &engine{}
	}
	return &engine{client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}}
}

// post sends POST path (e.g. /containers/NAME/stop?t=10), as `docker
// stop` or `docker kill` does; it returns once the engine has answered.
func (e *engine) post(ctx context.Context, path string, cli ...string) error {
	if e.client == nil {
		_, err := docker(ctx, cli...)
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://docker"+path, nil)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotModified {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, strings.TrimSpace(b.String()))
	}
	return nil
}

// stop is `docker stop -t 10 name`: SIGTERM, SIGKILL after 10s.
func (e *engine) stop(ctx context.Context, name string) error {
	return e.post(ctx, "/containers/"+url.PathEscape(name)+"/stop?t=10", "stop", "-t", "10", name)
}

// kill is `docker kill name`: SIGKILL.
func (e *engine) kill(ctx context.Context, name string) error {
	return e.post(ctx, "/containers/"+url.PathEscape(name)+"/kill", "kill", name)
}

// member is one zklock container, its endpoints published on a loopback
// port of the host (a new one each time it starts).
type member struct {
	name string
	mu   sync.Mutex
	addr string // 127.0.0.1:PORT, "" while not running
}

func (m *member) address() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// refresh reads the host port the engine published the container's 8080 on.
func (m *member) refresh(ctx context.Context) error {
	out, err := docker(ctx, "port", m.name, "8080/tcp")
	if err != nil {
		return err
	}
	addr, _, _ := strings.Cut(out, "\n")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("docker port %s 8080/tcp: %q: %w", m.name, out, err)
	}
	m.mu.Lock()
	m.addr = addr
	m.mu.Unlock()
	return nil
}

func (m *member) down() {
	m.mu.Lock()
	m.addr = ""
	m.mu.Unlock()
}

// errDown: the member is not running (no published port).
var errDown = errors.New("not running")

// notServing reports whether err says that nothing serves the member's
// endpoints (stopped, killed, starting): it does not lead. Any other error
// (a timeout) says nothing either way.
func notServing(err error) bool {
	return errors.Is(err, errDown) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// get asks one of the member's endpoints and returns the status code. The
// Host is the container's own address (127.0.0.1:8080), which zklock
// --http 0.0.0.0:8080 answers to; the published port is another.
func (m *member) get(ctx context.Context, c *http.Client, path string) (int, error) {
	addr := m.address()
	if addr == "" {
		return 0, errDown
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	req.Host = "127.0.0.1:8080"
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = new(bytes.Buffer).ReadFrom(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
