package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// Event kinds. Workers write invoke/ok/fail/loss/release/write/zkwrite/czxid,
// the register writes reg, the nemesis writes fault-start/fault-end, the
// in-process contract checks write contract.
const (
	KindInvoke     = "invoke"      // Lock called
	KindOK         = "ok"          // Lock returned a hold
	KindFail       = "fail"        // Lock returned an error
	KindLoss       = "loss"        // the hold's Done channel closed with ErrLost
	KindRelease    = "release"     // Release is about to be called
	KindWrite      = "write"       // a write to the fenced register and its answer
	KindZKInvoke   = "zkinvoke"    // a guarded multi on the ZooKeeper register is sent
	KindZKWrite    = "zkwrite"     // ... and its answer
	KindStat       = "stat"        // an independent read of the holder's node
	KindReg        = "reg"         // the register's own acceptance log
	KindFaultStart = "fault-start" // the nemesis began a fault
	KindFaultEnd   = "fault-end"   // ... and healed it
	KindContract   = "contract"    // an API contract check (C7)
	KindExit       = "exit"        // a worker stopped cleanly
	KindState      = "state"       // a worker's session changed state (Name: suspended, expired, ...)
	KindRegSet     = "reg-set"     // the register's final set of accepted writes, per resource
	KindPGInvoke   = "pginvoke"    // a transaction on the PostgreSQL register begins
	KindPGWrite    = "pgwrite"     // ... and its outcome as the worker saw it (Out)
	KindPGRow      = "pgrow"       // a row of the PostgreSQL register, read after the run
	KindPGFence    = "pgfence"     // a resource's row of the fence table, read after the run
	KindPGRead     = "pgread"      // ... the read is complete (Seq: the rows read)
)

// Event is one line of a history. T is CLOCK_MONOTONIC (see Mono).
type Event struct {
	T       int64    `json:"t"`
	Kind    string   `json:"k"`
	Worker  string   `json:"w,omitempty"`  // worker process label
	Client  int      `json:"c,omitempty"`  // client (goroutine, own session) in the worker
	Op      int64    `json:"op,omitempty"` // acquisition number of that client
	Lock    string   `json:"lock,omitempty"`
	Read    bool     `json:"r,omitempty"` // a shared (read) acquisition
	Session int64    `json:"sid,omitempty"`
	Node    string   `json:"node,omitempty"`
	Token   int64    `json:"tok,omitempty"`
	Czxid   int64    `json:"czxid,omitempty"` // stat: the node's czxid
	Owner   int64    `json:"owner,omitempty"` // stat: the node's ephemeralOwner
	Zxid    int64    `json:"zxid,omitempty"`  // zkwrite: mzxid of the accepted write
	T0      int64    `json:"t0,omitempty"`    // zkwrite: when the multi was sent (T: when it returned)
	Ver     int32    `json:"ver,omitempty"`   // zkwrite: the register node's version after the write
	Amb     bool     `json:"amb,omitempty"`   // zkwrite: outcome unknown (connection lost, session gone)
	Elem    string   `json:"el,omitempty"`    // write: the element added to the register's set
	Set     []string `json:"set,omitempty"`   // reg-set: every accepted element
	OK      bool     `json:"ok,omitempty"`
	Max     int64    `json:"max,omitempty"` // reg: the highest token before this write
	Err     string   `json:"err,omitempty"`
	Fault   string   `json:"fault,omitempty"`
	Target  string   `json:"target,omitempty"`
	Name    string   `json:"name,omitempty"` // contract name
	Seq     int64    `json:"seq,omitempty"`  // pgrow: the row's place in its resource's commit order
	Out     string   `json:"out,omitempty"`  // pgwrite: committed, stale, other-era, error or unknown
	Era     string   `json:"era,omitempty"`  // ok, pginvoke, pgrow, pgfence: the ensemble era of the token ("" unknown)
}

// HoldID names one acquisition: worker, client, op.
func (e Event) HoldID() string { return fmt.Sprintf("%s/%d/%d", e.Worker, e.Client, e.Op) }

// Log appends events as JSON lines; safe for concurrent use.
type Log struct {
	mu sync.Mutex
	w  *bufio.Writer
	f  *os.File
}

// CreateLog opens (truncating) a JSONL log file.
func CreateLog(path string) (*Log, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Log{w: bufio.NewWriterSize(f, 64<<10), f: f}, nil
}

// Add stamps e with Mono if it has no time, and appends it.
func (l *Log) Add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.T == 0 {
		e.T = Mono()
	}
	b, _ := json.Marshal(e)
	l.w.Write(b)
	l.w.WriteByte('\n')
}

// Flush writes buffered lines to the file.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// Close flushes and closes the file.
func (l *Log) Close() error {
	if err := l.Flush(); err != nil {
		return err
	}
	return l.f.Close()
}

// ReadEvents parses a JSONL history; a torn last line (a killed writer) is
// ignored.
func ReadEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// ReadFiles reads and merges histories, ordered by time (stable).
func ReadFiles(paths ...string) ([]Event, error) {
	var all []Event
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		evs, err := ReadEvents(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, evs...)
	}
	SortEvents(all)
	return all, nil
}

// SortEvents orders events by time, keeping the order of equal stamps.
func SortEvents(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
}
