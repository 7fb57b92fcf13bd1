package reliability

import (
	"bufio"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Register is the fenced resource: a set per resource, to which a write adds
// its element iff the write's token is at least the highest token accepted
// for that resource; it checks, adds and logs in one atomic step (one
// mutex). Every request, accepted or not, is appended to the acceptance log
// as a KindReg event, in the order the register decided them, and Close
// appends each resource's final set (KindRegSet), so checker C2 can verify
// both the order of tokens and that the final set is exactly the
// acknowledged writes (Jepsen's set-full: nothing lost, nothing phantom).
//
// Protocol, one line per request over TCP:
//
//	W <resource> <token> <element>   fenced write   -> "OK" or "REJ <max>"
//	U <resource> <token> <element>   unfenced write -> "OK" (negative control N1:
//	                                 a resource that does not check tokens)
type Register struct {
	mu  sync.Mutex
	max map[string]int64
	set map[string][]string
	log *Log
}

// NewRegister returns a register logging to log.
func NewRegister(log *Log) *Register {
	return &Register{max: map[string]int64{}, set: map[string][]string{}, log: log}
}

// Write applies one request and returns whether it was accepted and the
// highest token before it.
func (r *Register) Write(resource string, token int64, elem string, fenced bool) (bool, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := r.max[resource]
	ok := !fenced || token >= before
	if ok {
		r.max[resource] = max(before, token)
		r.set[resource] = append(r.set[resource], elem)
	}
	r.log.Add(Event{Kind: KindReg, Lock: resource, Token: token, Elem: elem, OK: ok, Max: before})
	return ok, before
}

// Close appends every resource's final set to the log, in sorted order of
// resources, and closes the log.
func (r *Register) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.set))
	for k := range r.set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r.log.Add(Event{Kind: KindRegSet, Lock: k, Set: r.set[k]})
	}
	return r.log.Close()
}

// Serve answers requests on l until it is closed.
func (r *Register) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go r.serveConn(c)
	}
}

func (r *Register) serveConn(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	w := bufio.NewWriter(c)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || (f[0] != "W" && f[0] != "U") {
			fmt.Fprintf(w, "ERR bad request\n")
			w.Flush()
			continue
		}
		tok, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			fmt.Fprintf(w, "ERR bad token\n")
			w.Flush()
			continue
		}
		if ok, max := r.Write(f[1], tok, f[3], f[0] == "W"); ok {
			fmt.Fprintf(w, "OK\n")
		} else {
			fmt.Fprintf(w, "REJ %d\n", max)
		}
		w.Flush()
		r.log.Flush()
	}
}

// RegisterClient is one connection to a register.
type RegisterClient struct {
	c  net.Conn
	rd *bufio.Reader
}

// DialRegister connects to a register at addr.
func DialRegister(addr string) (*RegisterClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &RegisterClient{c: c, rd: bufio.NewReader(c)}, nil
}

// Write sends one write and reports whether the register accepted it.
func (rc *RegisterClient) Write(resource string, token int64, elem string, fenced bool) (bool, error) {
	op := "W"
	if !fenced {
		op = "U"
	}
	if _, err := fmt.Fprintf(rc.c, "%s %s %d %s\n", op, resource, token, elem); err != nil {
		return false, err
	}
	line, err := rc.rd.ReadString('\n')
	if err != nil {
		return false, err
	}
	switch {
	case strings.HasPrefix(line, "OK"):
		return true, nil
	case strings.HasPrefix(line, "REJ"):
		return false, nil
	}
	return false, fmt.Errorf("register: %s", strings.TrimSpace(line))
}

// Close closes the connection.
func (rc *RegisterClient) Close() error { return rc.c.Close() }
