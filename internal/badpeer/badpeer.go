// Package badpeer runs loopback servers that are not ZooKeeper, for tests
// of what a client does when something else answers on ZooKeeper's port.
package badpeer

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
)

// Replying returns the address of a loopback server that reads each
// connection's first frame (a ZooKeeper ConnectRequest: a 4-byte length,
// then that many bytes), writes reply, and keeps the connection open until
// the test ends; it stops in t's cleanup.
func Replying(t testing.TB, reply []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("badpeer: %v", err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				var n [4]byte
				if _, err := io.ReadFull(c, n[:]); err == nil {
					if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))); err == nil {
						_, _ = c.Write(reply)
					}
				}
				<-done
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		close(done)
		wg.Wait()
	})
	return l.Addr().String()
}

// HTTP400 is what an HTTP server that rejects a binary request at once
// (nginx does) answers. One that waits for a line's end says nothing.
var HTTP400 = []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
