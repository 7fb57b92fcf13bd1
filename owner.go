package zklock

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// ownerMark opens the line WithOwner appends to a node's data.
const ownerMark = "\nzklock-owner="

// MaxOwnerLen bounds an owner id (WithOwner).
const MaxOwnerLen = 128

// WithOwner records id as the owner of the lock's nodes: a line
// "zklock-owner=ID" appended to the node's data (after WithData's, or this
// host's address, on a line of its own), so that a reader of the wait-for
// graph (`zklock status --deadlocks`, `zklock ui`) counts every session
// with one owner id as one party: the sessions of one process, or nested
// `zklock` invocations (which pass theirs to CMD in ZKLOCK_OWNER). Nodes
// without one (Curator's, kazoo's) are each their session's. The data's
// first line is unchanged, and Curator and kazoo treat a lock node's data
// as opaque. ProcessOwner is this process's id. Leader recipes ignore it
// (their data is the participant id Curator reports), and so does a
// revocable lock (its data is empty, as Curator's). An id longer than
// MaxOwnerLen, or with a control character, is refused by the recipe's
// constructor with an error wrapping ErrInvalidArgument. Default: none.
func WithOwner(id string) Option {
	return func(c *lockConfig) { c.owner = id }
}

// ProcessOwner is this process's owner id for WithOwner: HOST/PID/START,
// its host name, process id and start time (Unix milliseconds), unique
// across restarts and hosts.
var ProcessOwner = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = hostAddress()
	}
	return fmt.Sprintf("%s/%d/%d", host, os.Getpid(), processStart.UnixMilli())
})

var processStart = time.Now()

// validOwner refuses an owner id that would not survive as one line.
func validOwner(id string) error {
	if len(id) > MaxOwnerLen {
		return fmt.Errorf("%w: owner id of %d bytes, at most %d", ErrInvalidArgument, len(id), MaxOwnerLen)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: owner id %s has a control character", ErrInvalidArgument, strconv.Quote(id))
		}
	}
	return nil
}

// withOwner is data with the owner line, if id is not empty.
func withOwner(data []byte, id string) []byte {
	if id == "" {
		return data
	}
	return append(append(bytes.Clone(data), ownerMark...), id...)
}

// OwnerOf returns the owner id WithOwner recorded in a node's data, and
// the data without it; "" and data unchanged if it has none.
func OwnerOf(data []byte) (owner string, rest []byte) {
	i := bytes.LastIndex(data, []byte(ownerMark))
	if i < 0 {
		return "", data
	}
	id := data[i+len(ownerMark):]
	if len(id) == 0 || validOwner(string(id)) != nil || bytes.IndexByte(id, '\n') >= 0 {
		return "", data
	}
	return string(id), data[:i]
}
