// Package lockview is the model behind `zklock ui` and `zklock ls`: every
// lock directory under a root, walked and kept current by ZooKeeper
// watches (one children watch per directory, shared by every reader), each
// judged by the recipes' own rules (zklock.Queue), with a timeline of what
// happened while it was watched; and the HTTP server that shows it.
//
// It reads only: the one write it can make is a revocation request
// (zklock.Revoke), and only when the server was started with revocation
// allowed. How each timeline event is inferred is in docs/cli.md.
package lockview

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock"
)

// Recipe is what a lock directory is, judged by its nodes' names.
type Recipe string

// The recipes a directory can be told to be. Curator's LeaderSelector and
// zklock's LeaderElection are mutexes on the wire, so a mutex may be an
// election; a semaphore's lease count is known only if it is stored.
const (
	RecipeMutex          Recipe = "mutex"           // lock- nodes (Curator InterProcessMutex, LeaderSelector; zklock Mutex, LeaderElection)
	RecipeReadWrite      Recipe = "read-write"      // __READ__ and __WRIT__ nodes
	RecipeLatch          Recipe = "leader-latch"    // latch- nodes
	RecipeSemaphore      Recipe = "semaphore"       // leases/ and locks/ (Curator InterProcessSemaphoreV2, zklock Semaphore), or kazoo's
	RecipeSemaphoreMutex Recipe = "semaphore-mutex" // a semaphore whose stored lease count is 1 (Curator InterProcessSemaphoreMutex)
	RecipeKazoo          Recipe = "kazoo-lock"      // kazoo __lock__ / __rlock__ nodes only
	RecipeMixed          Recipe = "mixed"           // nodes of recipes that do not exclude each other
)

// Label is the recipe as the page shows it.
func (r Recipe) Label() string {
	switch r {
	case RecipeMutex:
		return "mutex / leader election"
	case RecipeSemaphoreMutex:
		return "semaphore mutex"
	}
	return string(r)
}

// Lock is one lock directory: an overview row, and with Queue and
// Timeline, a lock's page. Times are the ZooKeeper servers' clocks (ctime).
type Lock struct {
	Path     string   `json:"path"` // the caller's path (without the namespace)
	Recipe   Recipe   `json:"recipe"`
	Dialects []string `json:"dialects"`         // whose node names: curator (Curator and zklock), go-zookeeper, kazoo
	Leases   int      `json:"leases,omitempty"` // a semaphore's stored lease count; 0 if not stored
	Holders  []Node   `json:"holders"`
	Waiting  int      `json:"waiting"`
	// HeldSince is the first holder's node's creation time; OldestWait the
	// first waiter's (zero if none).
	HeldSince  time.Time `json:"held_since,omitzero"`
	HeldFrom   string    `json:"held_since_from,omitempty"` // "seen": the view saw the hold begin; "ctime": it held when first seen
	OldestWait time.Time `json:"oldest_wait,omitzero"`
	Token      int64     `json:"fencing_token,omitempty"` // the first holder's czxid
	Others     int       `json:"other_children"`          // children that are not lock nodes
	Problem    string    `json:"problem,omitempty"`       // what could not be shown, and why
	Queue      []Node    `json:"queue,omitempty"`         // the lock's page: every node, in queue order
	Timeline   []Event   `json:"timeline,omitempty"`      // the lock's page: newest first
	History    *History  `json:"history,omitempty"`       // the lock's page: who queued and held when
	// RecentHolds counts the acquisitions in each of the last 30 minutes,
	// the oldest first (the overview's sparkline).
	RecentHolds []int `json:"recent_holds,omitempty"`
}

// Node is one participant's node.
type Node struct {
	Name       string      `json:"node"`
	Path       string      `json:"path"` // the caller's path of the node
	Kind       zklock.Kind `json:"kind"`
	Sequence   int32       `json:"sequence"`
	Session    string      `json:"session"`         // ephemeralOwner, 0x...
	ID         string      `json:"id"`              // the first MaxIDBytes of the node's data as text (base64 if not UTF-8), owner line aside: the participant's id
	Owner      string      `json:"owner,omitempty"` // the owner id zklock recorded in the data (zklock.WithOwner)
	Size       int32       `json:"data_bytes"`      // the length of the node's data; ID is cut when it exceeds MaxIDBytes
	Cut        bool        `json:"id_truncated,omitempty"`
	Token      int64       `json:"fencing_token"`
	Ctime      time.Time   `json:"ctime,omitzero"`
	Holds      bool        `json:"holds"`
	Waits      string      `json:"waits_for,omitempty"`  // the node it waits for (its predecessor by the rule)
	Role       string      `json:"role"`                 // holds, waits, acquiring (a semaphore's internal lock)
	Unread     bool        `json:"unread,omitempty"`     // not read (past the detail limit, or Unreadable): session, id and times unknown
	Unreadable string      `json:"unreadable,omitempty"` // why the node cannot be read (its ACL), if it cannot
	Client     *Client     `json:"client,omitempty"`     // where its session connects from (the members' cons)
	sid        int64
}

// Age is how long ago the node was created, from now.
func (n Node) Age(now time.Time) time.Duration { return age(n.Ctime, now) }

// Event is one entry of a lock's timeline. How each kind is inferred from
// successive listings is documented in docs/cli.md.
type Event struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"` // acquired, released, lost, deleted, gave-up, queued, revoke-requested
	Node    string    `json:"node"`
	Session string    `json:"session,omitempty"`
	ID      string    `json:"id,omitempty"`
	Token   int64     `json:"fencing_token,omitempty"`
	Why     string    `json:"why"`
}

// Timeline event kinds.
const (
	EventAcquired = "acquired"         // a node began to hold
	EventReleased = "released"         // a holder's node went, with no sign of a loss
	EventLost     = "lost"             // a holder's node went with its session, or was deleted by another client
	EventDeleted  = "deleted"          // a waiter's node was deleted by another client
	EventGaveUp   = "gave-up"          // a waiter's node went (timeout, cancel, its session ended)
	EventQueued   = "queued"           // a waiter joined the queue
	EventRevoke   = "revoke-requested" // this server asked the holder to release
)

// Overview is every lock under the root, as /api/locks gives it.
type Overview struct {
	Root      string    `json:"root"`
	Namespace string    `json:"namespace,omitempty"`
	Connected bool      `json:"connected"`
	Problem   string    `json:"problem,omitempty"` // the root is missing, the connection is lost, ...
	At        time.Time `json:"at"`
	Locks     []Lock    `json:"locks"`
	// NotShown counts the directories found and not watched, so not shown:
	// the children, past Config.MaxDirs, of the directories watched.
	NotShown int `json:"dirs_not_shown,omitempty"`
	// Ensemble is each member's health (srvr), when members are known;
	// ClientsNote says why client addresses are not shown.
	Ensemble    []Member `json:"ensemble,omitempty"`
	ClientsNote string   `json:"clients_note,omitempty"`
	// Deadlocks are the cycles of the wait-for graph (deadlock.go).
	Deadlocks []Deadlock `json:"deadlocks,omitempty"`
}

// Status is the state of the view as a whole, for a page's banner.
type Status struct {
	Connected   bool
	Problem     string
	NotShown    int // as in Overview
	At          time.Time
	Members     []Member
	ClientsNote string
	Deadlocks   []Deadlock // the page's banner (deadlock.go)
}

// Thousands writes n with a comma every three digits: 98,000.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	start := 0
	if n < 0 {
		start = 1
	}
	var b strings.Builder
	for i := range len(s) {
		if i > start && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func age(t, now time.Time) time.Duration {
	if t.IsZero() || now.Before(t) {
		return 0
	}
	return now.Sub(t).Truncate(time.Second)
}

// sessionHex formats a session id as ZooKeeper does.
func sessionHex(id int64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("0x%x", uint64(id))
}

// MaxIDBytes bounds the node data a view keeps and shows: a participant's
// id is the first MaxIDBytes of its node's data, read once per node.
const MaxIDBytes = 256

// dataText is the first MaxIDBytes of a node's data as text (a rune cut
// in half dropped), or, if that is not UTF-8, their base64; and whether
// data was longer. The result shares no memory with data.
func dataText(data []byte) (string, bool) {
	b := data[:min(len(data), MaxIDBytes)]
	cut := len(b) < len(data)
	if cut {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1] // a rune cut at the bound
		}
	}
	if utf8.Valid(b) {
		return strings.Clone(string(b)), cut
	}
	b = data[:min(len(data), MaxIDBytes)]
	return base64.StdEncoding.EncodeToString(b), cut
}
