package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for CreateDatabase
)

// Start starts a server for t (or returns PG_DSN's) and closes it in
// t.Cleanup. It fails t if the server does not start.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Launch(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// shared is the server of Shared, stopped by Run.
var shared struct {
	mu      sync.Mutex
	running bool // Run is running the tests
	srv     *Server
	err     error
}

// Run runs the tests (m.Run), then closes the server Shared started, if
// any, and returns the exit code for os.Exit. Call it from TestMain.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.running = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.running = false
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Println(err)
			code = 1
		}
		shared.srv = nil
	}
	return code
}

// Shared returns the test binary's server, started (with opts) by its
// first call and closed when Run returns; later calls ignore opts. It fails
// t if the server did not start, or if TestMain does not call Run (the
// server would outlive the tests).
func Shared(t testing.TB, opts ...Option) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.running {
		t.Fatal("pgtest: Shared needs TestMain to call pgtest.Run(m)")
	}
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = Launch(context.Background(), opts...)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// NewDatabase creates an empty database on the server and returns its
// DSN; it is dropped in t.Cleanup. Tests sharing a server get one each, so
// that their tables never meet.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, drop, err := s.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dsn
}

// CreateDatabase creates an empty database named pgtest_<random> and
// returns its DSN and a function that drops it (ending its connections).
func (s *Server) CreateDatabase(ctx context.Context) (dsn string, drop func() error, err error) {
	u, err := url.Parse(s.dsn)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: DSN %q: %w", s.dsn, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pgtest_" + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", s.dsn)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	u.Path = "/" + name
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := sql.Open("pgx", s.dsn)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		if err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return u.String(), drop, nil
}
