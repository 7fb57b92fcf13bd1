package zklock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// The lease count is stored in the semaphore's node and checked under the
// internal mutex: see docs/protocol.md#the-lease-count.

// checkCount compares the stored lease count of the semaphore at path with
// leases, storing it first into empty data, and returns an error wrapping
// ErrInvalidArgument if another count is stored. Data that is not a count,
// and a node this session may not write, are left unchecked. Connection
// problems are retried, as the acquire's own requests are.
func checkCount(ctx context.Context, s *Session, path string, leases int) error {
	err := checkCountOnce(ctx, s, path, leases)
	for attempt := 0; isConnErr(err); attempt++ {
		if serr := s.cfg.retry.sleep(ctx, attempt); serr != nil {
			return serr
		}
		err = checkCountOnce(ctx, s, path, leases)
	}
	return err
}

func checkCountOnce(ctx context.Context, s *Session, path string, leases int) error {
	node := s.FullPath(path)
	want := []byte(strconv.Itoa(leases))
	for {
		data, stat, err := s.read(ctx, node)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil // gone with the session that held the internal mutex: the acquire fails on its own
		case permanent(err):
			return refused(err, accessRead, node, "the semaphore's lease count")
		case err != nil:
			return err
		}
		if len(data) > 0 {
			n, err := strconv.Atoi(strings.TrimSpace(string(data)))
			switch {
			case err != nil:
				return nil // not a count: not ours to judge
			case n != leases:
				return fmt.Errorf("%w: the semaphore at %s has %d leases (stored in its node), this participant %d: "+
					"every participant must use the same count", ErrInvalidArgument, path, n, leases)
			}
			return nil
		}
		err = s.setDataVersion(ctx, node, want, stat.Version)
		switch {
		case errors.Is(err, zk.ErrBadVersion):
			continue // written meanwhile: read what was stored
		case errors.Is(err, zk.ErrNoAuth):
			s.log.Warn("zklock: cannot store the semaphore's lease count (no write permission on its node)",
				"path", path, "leases", leases)
			return nil
		}
		return err
	}
}
