package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-zookeeper/zk"
)

// WipedDataDir is the negative test of C3 that the plan asks for: what
// fencing tokens are worth if an operator wipes ZooKeeper's data directory.
// Contender a takes the lock three times; the (standalone) server is
// stopped, its data directory emptied and the server started again, so
// zxids start over; contender b, on a new connection, takes the lock three
// times. b's tokens are lower than a's, and C3 must say so: a fenced
// resource that remembered a's tokens would now refuse every holder.
func WipedDataDir(ctx context.Context, e *Env) {
	take := func(c *inproc, ops int) {
		for op := int64(1); op <= int64(ops); op++ {
			h, err := c.lock(ctx, op)
			if err != nil {
				e.T.Errorf("%s lock: %v", c.name, err)
				return
			}
			c.release(op, h)
		}
	}
	take(e.contender("a"), 3)
	if e.wipe(ctx, FaultWipe) {
		take(e.contender("b"), 3)
	}
}

// wipe rebuilds the (standalone) server from empty, logged as fault name:
// stopped, its data directory emptied, started again, so that zxids start
// over. The server then refuses every client that has seen a later zxid
// (the old connections retry forever), so the suite gets a new connection;
// and its own nodes went with the data: they are made again. It reports
// whether all went well (otherwise the test has failed).
func (e *Env) wipe(ctx context.Context, name string) bool {
	e.Fault(name, "0", 0, func() error {
		if err := e.C.Stop(0); err != nil {
			return err
		}
		if err := os.RemoveAll(filepath.Join(e.C.DataDir(0), "data", "version-2")); err != nil {
			return err
		}
		return e.C.Start(0)
	}, nil)
	e.Conn = e.C.Connect(e.T, 10*time.Second)
	for _, p := range []string{"/reliability", e.Root, e.Root + "-reg", RegisterPath(e.Root, 0)} {
		if err := createRetry(ctx, e.Conn, p); err != nil {
			e.T.Errorf("create %s after the wipe: %v", p, err)
			return false
		}
	}
	return true
}

// createRetry creates p (data "0"), retrying while the connection recovers.
func createRetry(ctx context.Context, conn *zk.Conn, p string) error {
	for {
		_, err := conn.Create(p, []byte("0"), 0, zk.WorldACL(zk.PermAll))
		if err == nil || err == zk.ErrNodeExists {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
