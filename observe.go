package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
)

// Observe follows the election's leader without taking part, as
// LeaderLatch.Observe does (see there): it emits the current leader, then
// every change, and closes the channel when ctx ends or the session closes.
func (e *LeaderElection) Observe(ctx context.Context) <-chan Participant {
	return observeLeader(ctx, e.q.s, e.q.dir)
}

// Observe follows the latch's leader without taking part (the latch need
// not be started): it emits the current leader, then every change, each
// leader once and in the order they led, and closes the channel (ending its
// goroutine) when ctx ends or the session is closed. An empty Node means no
// one takes part. The channel has latest-value semantics: a slow reader
// never delays the observer or the session, and receives the latest leader
// known, skipping those that came and went meanwhile (a leader may also be
// skipped that led for less time than a listing takes). Errors are retried
// with the session's backoff, except those retrying cannot fix: an
// unreadable directory or leader's node ends the observation, whose last
// value is then a Participant whose Err wraps ErrNotAuthorized (or
// ErrRefused). A nil ctx gives a closed channel.
// See docs/protocol.md#observing-a-leader.
func (l *LeaderLatch) Observe(ctx context.Context) <-chan Participant {
	return observeLeader(ctx, l.q.s, l.q.dir)
}

// ObserveLeader follows the leader of the election or latch at path on s,
// creating nothing, as LeaderLatch.Observe does. It returns an error
// wrapping ErrInvalidArgument for a nil context or session and
// ErrInvalidPath for a bad path.
func ObserveLeader(ctx context.Context, s *Session, path string) (<-chan Participant, error) {
	if ctx == nil || s == nil {
		return nil, fmt.Errorf("%w: nil context or session", ErrInvalidArgument)
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	return observeLeader(ctx, s, s.FullPath(path)), nil
}

// observeLeader runs the follower of the exclusive queue in dir (a znode
// path) on its own goroutine.
func observeLeader(ctx context.Context, s *Session, dir string) <-chan Participant {
	out := make(chan Participant)
	if ctx == nil {
		close(out)
		return out
	}
	go func() {
		defer close(out)
		o := follower{s: s, dir: dir}
		var (
			pending *Participant // the latest leader, not yet received
			last    *Participant // the latest leader emitted (or pending)
			retry   <-chan time.Time
			attempt int
		)
		for {
			_, _, changed := s.snapshot()
			p, ch, err := o.leader(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case permanent(err):
				select { // the reason, as the last value; then the channel closes
				case out <- Participant{Err: err}:
				case <-ctx.Done():
				}
				return
			case err != nil:
				if s.State() == StateClosed {
					return
				}
				retry, ch, attempt = time.After(s.cfg.retry.Delay(attempt, nil)), nil, attempt+1
			default:
				attempt, retry = 0, nil
				if last == nil || last.Path != p.Path || last.Token != p.Token {
					pending, last = &p, &p
				}
			}
		wait:
			for {
				var (
					send chan Participant
					next Participant
				)
				if pending != nil {
					send, next = out, *pending
				}
				select {
				case send <- next:
					pending = nil
				case ev := <-ch:
					if ev.Type == zk.EventNodeDataChanged && p.Node != "" {
						// The leader is unchanged: watch it again.
						if ch, err = o.rewatch(ctx, p); err == nil {
							continue
						}
					}
					break wait
				case <-retry:
					break wait
				case <-changed:
					var state State
					state, _, changed = s.snapshot()
					switch state {
					case StateClosed:
						return
					case StateSuspended, StateConnecting:
						continue
					}
					break wait // reconnected or expired: list again
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// follower finds a queue's leader and arms the one watch that tells when
// it may change.
type follower struct {
	s   *Session
	dir string
}

// leader lists the queue and returns its leader (a zero Participant if
// none) with a watch: on the leader's node, else on the directory.
func (o *follower) leader(ctx context.Context) (Participant, <-chan zk.Event, error) {
	for {
		children, err := o.s.list(ctx, o.dir)
		if errors.Is(err, zk.ErrNoNode) {
			ok, ch, err := o.s.existsWatch(ctx, o.dir)
			if err != nil || !ok {
				return Participant{}, ch, o.refused(err, accessRead, o.dir, "the election's directory")
			}
			continue // created meanwhile (our watch fires once, harmlessly)
		}
		if err != nil {
			return Participant{}, nil, o.refused(err, accessList, o.dir, "the election's directory")
		}
		cs := sortContenders(children)
		if len(cs) == 0 {
			children, ch, err := o.s.listWatch(ctx, o.dir)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				continue
			case err != nil:
				return Participant{}, nil, o.refused(err, accessList, o.dir, "the election's directory")
			case len(sortContenders(children)) > 0:
				continue // one joined meanwhile
			}
			return Participant{}, ch, nil
		}
		p := Participant{Node: cs[0].name, Path: o.s.callerPath(o.dir + "/" + cs[0].name), Kind: cs[0].kind, Sequence: cs[0].seq, Holds: true}
		ch, err := o.get(ctx, &p)
		if errors.Is(err, zk.ErrNoNode) {
			continue // the leader went meanwhile
		}
		return p, ch, o.refused(err, accessRead, path.Join(o.dir, p.Node), "the leader's node")
	}
}

// refused is err, or the error ending the observation if err is permanent
// (see refused); the path named is the caller's.
func (o *follower) refused(err error, a access, node, what string) error {
	if r := refused(err, a, o.s.callerPath(node), what); r != nil {
		return r
	}
	return err
}

// get reads the leader's node into p and watches it.
func (o *follower) get(ctx context.Context, p *Participant) (<-chan zk.Event, error) {
	data, stat, ch, err := o.s.readWatch(ctx, path.Join(o.dir, p.Node))
	if err != nil {
		return nil, err
	}
	p.setStat(data, stat)
	return ch, nil
}

// rewatch watches the same leader again after its data changed; the node
// must still be the same one (same czxid).
func (o *follower) rewatch(ctx context.Context, p Participant) (<-chan zk.Event, error) {
	q := p
	ch, err := o.get(ctx, &q)
	if err == nil && q.Token != p.Token {
		return nil, zk.ErrNoNode
	}
	return ch, err
}
