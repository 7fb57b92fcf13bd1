package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// Expire ends a session on the server side, as a session timeout would,
// while its client may still believe it is connected. It opens a raw TCP
// connection to a live member, sends a ConnectRequest carrying the
// victim's session id and password (recorded by this Cluster's Dialer,
// WrapDialer, Connect or any of its Proxies), then a closeSession request,
// and waits for the server's reply.
//
// When Expire returns nil the session's end is committed: its ephemeral
// nodes are deleted (a reader on another member of an ensemble may need
// Sync to see that), and the victim gets zk.StateExpired (and its watches
// fire with zk.ErrSessionExpired) on its next contact with a server, at the
// latest after one ping interval (a third of its session timeout).
//
// Errors: ErrUnknownSession if the credentials were never recorded;
// ErrNoSession if the server says the session is already gone; otherwise
// the network or protocol errors from every member tried.
func (c *Cluster) Expire(sessionID int64) error {
	cred, ok := c.book.get(sessionID)
	if !ok {
		return fmt.Errorf("%w: session 0x%x (connect through Cluster.Dialer, Connect or a Proxy)", ErrUnknownSession, sessionID)
	}
	var errs []error
	sent := false // a closeSession went out whose reply did not come back
	for attempt := 0; attempt < 3; attempt++ {
		for _, i := range c.liveMembers() {
			err := expireAt(c.servers[i], sessionID, cred, c.clientTLS())
			switch {
			case err == nil:
				return nil
			case errors.Is(err, ErrNoSession) && sent:
				return nil // our closeSession committed before its reply could come back
			case errors.Is(err, ErrNoSession):
				return err
			case errors.Is(err, errUnconfirmed):
				sent = true
			}
			errs = append(errs, fmt.Errorf("server %d (%s): %w", i, c.servers[i], err))
		}
		if !sent {
			break
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("zktest: expire session 0x%x: no live server", sessionID)
	}
	return fmt.Errorf("zktest: expire session 0x%x: %w", sessionID, errors.Join(errs...))
}

// errUnconfirmed: a closeSession was sent, and the connection ended before
// its reply came.
var errUnconfirmed = errors.New("closeSession sent, reply lost")

func expireAt(addr string, sid int64, cred credential, tc *tls.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := dialRaw(ctx, addr, tc)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := wire.ConnectRequest{TimeoutMs: cred.timeoutMs, SessionID: sid, Passwd: cred.passwd}
	if err := wire.WriteFrame(conn, wire.EncodeConnectRequest(req)); err != nil {
		return err
	}
	p, err := wire.ReadFrame(conn, wire.DefaultMaxFrame)
	if err != nil {
		return fmt.Errorf("read ConnectResponse: %w", err)
	}
	_, got, _, err := wire.ParseConnectResponse(p)
	if err != nil {
		return err
	}
	if got == 0 {
		return fmt.Errorf("%w: 0x%x", ErrNoSession, sid)
	}
	const xid = 1
	closeReq := wire.AppendRequestHeader(nil, wire.RequestHeader{Xid: xid, Type: wire.OpCloseSession})
	if err := wire.WriteFrame(conn, closeReq); err != nil {
		return err
	}
	for {
		p, err := wire.ReadFrame(conn, wire.DefaultMaxFrame)
		if err != nil {
			// The victim, whose connection ours displaced, may reconnect
			// and displace ours in turn before the reply is sent: Expire
			// asks again whether the session lives.
			return fmt.Errorf("%w: read closeSession reply: %w", errUnconfirmed, err)
		}
		h, err := wire.ParseReplyHeader(p)
		if err != nil {
			return err
		}
		if h.Xid != xid {
			continue // a notification or ping reply
		}
		if h.Err != 0 {
			return fmt.Errorf("closeSession failed with ZooKeeper error %d", h.Err)
		}
		return nil
	}
}
