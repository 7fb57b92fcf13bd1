// This file is, verbatim, the README's copy-paste test for a module that
// uses zktest (see "Testing with zktest"); internal/release runs the
// README's copy in a fresh module outside this repository.

package orders_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Needs java and a ZooKeeper server: apt install zookeeper, brew install
// zookeeper, or an unpacked Apache release in ZOOKEEPER_HOME.
func TestIntegration_OrdersLock(t *testing.T) {
	c := zktest.Start(t) // one server on 127.0.0.1, stopped in t.Cleanup
	sess, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	m, err := zklock.NewMutex(sess, "/locks/orders")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hold, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Expire(hold.SessionID()); err != nil { // the server ends the session
		t.Fatal(err)
	}
	select {
	case <-hold.Done(): // the code under test must stop acting for the lock
	case <-time.After(10 * time.Second):
		t.Fatal("the hold was not reported lost")
	}
}
