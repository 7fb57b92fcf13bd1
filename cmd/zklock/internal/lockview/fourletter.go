package lockview

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxAnswer bounds what a four-letter word's answer is read to: cons
// lists every connection of a member, about 300 bytes each.
const maxAnswer = 8 << 20

// errNotAllowed is a four-letter word the member refuses
// (4lw.commands.whitelist).
var errNotAllowed = errors.New("zklock: four-letter word not allowed")

// fourLetter sends cmd to the member at addr (over TLS with tc, as the
// secure client port answers) and returns its answer, read to at most
// maxAnswer bytes, within ctx.
func fourLetter(ctx context.Context, addr, cmd string, tc *tls.Config) (string, error) {
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var rw io.ReadWriter = conn
	if tc != nil {
		c := tc.Clone()
		if c.ServerName == "" {
			c.ServerName, _, _ = net.SplitHostPort(addr)
		}
		rw = tls.Client(conn, c)
	}
	if _, err := io.WriteString(rw, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(rw, maxAnswer))
	if tc != nil && errors.Is(err, io.ErrUnexpectedEOF) && len(b) > 0 {
		err = nil // closed without a TLS close_notify: the answer is whole
	}
	if err != nil {
		return "", fmt.Errorf("%s to %s: %w", cmd, addr, err)
	}
	if strings.Contains(string(b), "is not in the whitelist") || strings.Contains(string(b), "not executed because") {
		return "", fmt.Errorf("%w: %s on %s", errNotAllowed, cmd, addr)
	}
	return string(b), nil
}

// consLine matches a connection of cons: " /ADDR[1](... sid=0x...,...)".
var consLine = regexp.MustCompile(`^\s*/(\S+)\[\d+\]\((.*)\)\s*$`)

// parseCons returns the client address of every session in a cons answer,
// by session id. Java prints an IPv6 address without brackets, or with
// them (JDK 14 on).
func parseCons(out string) map[int64]string {
	m := map[int64]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 4096), 1<<16)
	for sc.Scan() {
		g := consLine.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		var sid int64
		for f := range strings.SplitSeq(g[2], ",") {
			if v, ok := strings.CutPrefix(f, "sid=0x"); ok {
				u, err := strconv.ParseUint(v, 16, 64)
				if err == nil {
					sid = int64(u)
				}
			}
		}
		if sid == 0 {
			continue // not yet a session (a handshake under way)
		}
		addr := g[1]
		if i := strings.LastIndexByte(addr, ':'); i > 0 {
			host, port := strings.Trim(addr[:i], "[]"), addr[i+1:]
			if ip := net.ParseIP(host); ip != nil {
				addr = net.JoinHostPort(ip.String(), port)
			}
		}
		m[sid] = addr
	}
	return m
}

// Member is one ensemble member as its srvr answer describes it.
type Member struct {
	Addr        string  `json:"addr"`
	Up          bool    `json:"up"` // it answered srvr
	Problem     string  `json:"problem,omitempty"`
	Mode        string  `json:"mode,omitempty"`         // leader, follower, observer, standalone
	Zxid        string  `json:"zxid,omitempty"`         // 0x...
	Outstanding int     `json:"outstanding"`            // requests queued
	AvgLatency  float64 `json:"avg_latency_ms"`         // average request latency
	Connections int     `json:"connections"`            // client connections
	Own         bool    `json:"view_session,omitempty"` // the view's session is connected to it
}

// parseSrvr fills m from a srvr answer.
func parseSrvr(out string, m *Member) {
	for line := range strings.SplitSeq(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Mode":
			m.Mode = v
		case "Zxid":
			m.Zxid = v
		case "Outstanding":
			m.Outstanding, _ = strconv.Atoi(v)
		case "Connections":
			m.Connections, _ = strconv.Atoi(v)
		case "Latency min/avg/max":
			if f := strings.Split(v, "/"); len(f) == 3 {
				m.AvgLatency, _ = strconv.ParseFloat(f[1], 64)
			}
		}
	}
}
