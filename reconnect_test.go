package zklock_test

import (
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/proc"
	"github.com/zklock/zklock/zktest"
)

// While no server answers, the session tries them again within the first
// second without failing the requests it has not sent yet (go-zookeeper
// alone fails them with ErrNoServer after one pass and then pauses a
// second); past that second it fails them, so that a raw request, a plain
// one or a multi guarded by a hold, fails while the outage lasts, long
// before the hold is lost, instead of waiting it out.
func TestIntegration_ReconnectPacing(t *testing.T) {
	c := zktest.Start(t)
	p := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(p.Dialer()), zklock.WithSessionTimeout(20*time.Second))
	t.Cleanup(p.Heal)
	h, err := newMutex(t, s, "/locks/pacing").Lock(ctxTimeout(t, 30*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Release() })
	_, err = s.Conn().Create("/pacing-data", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Conn().Delete("/pacing-data", -1) })

	requests := map[string]func() error{
		"exists": func() error { _, _, err := s.Conn().Exists("/"); return err },
		"guarded multi": func() error {
			_, err := s.Conn().Multi(h.Guard(), &zk.SetDataRequest{Path: "/pacing-data", Data: []byte("x"), Version: -1})
			return err
		},
	}
	for name, send := range requests {
		// outage refuses every connection, cuts the open one and sends
		// the request once the session knows it is away.
		outage := func(t *testing.T) <-chan error {
			p.Refuse(0)
			p.Cut()
			require.Eventually(t, func() bool { return s.State() != zklock.StateConnected }, 10*time.Second, time.Millisecond)
			res := make(chan error, 1)
			go func() { res <- send() }()
			return res
		}

		t.Run(name+"/short outage", func(t *testing.T) {
			res := outage(t)
			// Two attempts refused after the request was queued:
			// go-zookeeper alone reports a pass (and fails the request)
			// before each.
			from := p.Accepted()
			require.Eventually(t, func() bool { return p.Accepted() >= from+2 }, 10*time.Second, time.Millisecond)
			p.Heal()
			select {
			case err := <-res:
				require.NoError(t, err, "the request failed instead of waiting for the server")
			case <-time.After(30 * time.Second):
				t.Fatal("the request did not end after the server came back")
			}
			require.NoError(t, s.WaitConnected(ctxTimeout(t, 30*time.Second)))
		})

		t.Run(name+"/long outage", func(t *testing.T) {
			res := outage(t)
			select {
			case err := <-res:
				require.ErrorIs(t, err, zk.ErrNoServer)
				require.NoError(t, h.Err(), "the request failed only once the hold was lost")
			case <-h.Done():
				t.Fatal("a raw request waited out the hold's loss limit")
			}
			p.Heal()
			require.NoError(t, s.WaitConnected(ctxTimeout(t, 30*time.Second)))
		})
	}
	for name, send := range requests {
		require.NoError(t, send(), "%s after the outages", name)
	}
	require.NoError(t, h.Err(), "the hold outlived the outages")
}

// A server that accepts a connection and never answers its handshake (one
// starting up, or stopped by SIGSTOP) holds the session for the session
// timeout shared among at least three (with one server, a third of it); the
// session then tries again and says why. go-zookeeper alone waits ten read
// timeouts (20s here) for the answer.
func TestIntegration_SilentServerIsLeft(t *testing.T) {
	c := zktest.Start(t)
	var log proc.Buffer
	s, err := zklock.Connect([]string{silentOnce(t, c.Servers()[0])},
		zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(3*time.Second),
		zklock.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.WaitConnected(ctxTimeout(t, 15*time.Second)))
	require.Contains(t, log.String(), "session handshake: no answer within 1s")
}

// silentOnce returns the address of a relay to server whose first
// connection is accepted and never answered; later ones reach server.
func silentOnce(t *testing.T, server string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	keep := func(cs ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, cs...)
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for first := true; ; first = false {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			keep(in)
			if first {
				continue // read nothing, answer nothing
			}
			out, err := net.Dial("tcp", server)
			if err != nil {
				in.Close()
				continue
			}
			keep(out)
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(out, in); out.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return ln.Addr().String()
}
