package zklock_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// holdAWhile keeps a lease while checking, one round trip at a time, that
// its node is a live lease node: until all n leases are taken (at most 50
// round trips), then 8 round trips more, about one acquisition. So holders
// overlap, and an extra holder would be counted while the others still hold.
func holdAWhile(conn *zk.Conn, occ *occupancy, n int, node string) error {
	for i, extra := 0, 8; i < 50 && extra > 0; i++ {
		if occ.inside.Load() >= int32(n) {
			extra--
		}
		ok, _, err := conn.Exists(node)
		if err != nil || !ok || !strings.Contains(node, "/leases/_c_") {
			return fmt.Errorf("held lease node %q: exists %v, %v", node, ok, err)
		}
	}
	return nil
}

// mix runs our acquirers and the Curator peer's objects named names on one
// semaphore of n leases, rounds acquisitions each, and fails the test if
// more than n held at once. Holders are counted from both sides: ours from
// the return of the acquire to the call of Release, Curator's from its
// acquired event to the release command; both are inside the true holding
// times, so any overlap counted is a real one.
func mix(t *testing.T, admin *zk.Conn, n, rounds int, ours []func(context.Context) (*zklock.Hold, error),
	cur *peers.Peer, names []string,
) *occupancy {
	t.Helper()
	var (
		occ  occupancy
		wg   sync.WaitGroup
		errs = make(chan error, 2*(len(ours)+len(names))*rounds)
	)
	enter := func(who string) {
		if got := occ.enter(); got > int32(n) {
			errs <- fmt.Errorf("%d holders of %d leases (%s just acquired)", got, n, who)
		}
	}
	for i, acquire := range ours {
		wg.Go(func() {
			for range rounds {
				h, err := acquire(ctxTimeout(t, time.Minute))
				if err != nil {
					errs <- err
					return
				}
				enter(fmt.Sprintf("ours %d", i))
				if err := holdAWhile(admin, &occ, n, h.Node()); err != nil {
					errs <- err
				}
				occ.leave()
				if err := h.Release(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for _, name := range names {
		wg.Go(func() {
			for range rounds {
				if _, err := cur.Do("acquire " + name); err != nil {
					errs <- err
					return
				}
				ev, err := cur.WaitEvent(ctxTimeout(t, time.Minute), name, "acquired")
				if err != nil {
					errs <- err
					return
				}
				enter("curator " + name)
				if err := holdAWhile(admin, &occ, n, ev.Arg); err != nil {
					errs <- err
				}
				occ.leave()
				if _, err := cur.Do("release " + name); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, (len(ours)+len(names))*rounds, occ.total.Load())
	return &occ
}

// Curator InterProcessSemaphoreMutex and our SemaphoreMutex on one path
// never both hold.
func TestIntegration_CuratorSemaphoreMutexInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		admin := c.Connect(t, sessionTimeout)
		s1, s2 := connect(t, c), connect(t, c)
		const path = "/sem/curator-mutex"
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		names := []string{"A", "B", "C"}
		for _, name := range names {
			cur.Must(t, "semmutex "+name+" "+path)
		}
		m := newSemMutex(t, s1, path)

		// Curator holds: we wait. Then we hold: Curator waits.
		cur.Must(t, "acquire A")
		ev := waitEvent(t, cur, "A", "acquired")
		require.Regexp(t, `^`+path+`/leases/_c_[0-9a-f-]{36}-lease-\d{10}$`, ev.Arg)
		_, err := m.TryLock(ctxTimeout(t, 10*time.Second))
		require.ErrorIs(t, err, zklock.ErrLocked)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err = m.Lock(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "we must wait while Curator holds")
		require.Equal(t, []string{ev.Arg[len(path+"/leases/"):]}, children(t, admin, path+"/leases"))
		cur.Must(t, "release A")
		h, err := m.Lock(ctxTimeout(t, 10*time.Second))
		require.NoError(t, err)
		cur.Must(t, "acquire A 500")
		waitEvent(t, cur, "A", "timeout")
		require.Equal(t, []string{h.Node()[len(path+"/leases/"):]}, children(t, admin, path+"/leases"),
			"Curator's timed-out lease is gone")
		require.NoError(t, h.Release())

		// A mix of 3 and 3 contenders, 20 rounds each.
		ours := []func(context.Context) (*zklock.Hold, error){
			m.Lock, newSemMutex(t, s2, path).Lock, newSemMutex(t, s2, path).Lock,
		}
		occ := mix(t, admin, 1, 20, ours, cur, names)
		t.Logf("%d acquisitions (Curator and ours), at most %d holder(s) at once", occ.total.Load(), occ.most.Load())
		require.EqualValues(t, 1, occ.most.Load())
		require.Empty(t, children(t, admin, path+"/leases"))
		require.Empty(t, children(t, admin, path+"/locks"))
	})
}

// Curator InterProcessSemaphoreV2 with 2 leases and our Semaphore of 2 on
// one path never exceed 2 holders together.
func TestIntegration_CuratorSemaphoreInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		admin := c.Connect(t, sessionTimeout)
		s1, s2 := connect(t, c), connect(t, c)
		const path = "/sem/curator-v2"
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		names := []string{"A", "B", "C"}
		for _, name := range names {
			cur.Must(t, "semaphore "+name+" "+path+" 2")
		}
		ours := []func(context.Context) (*zklock.Hold, error){
			newSemaphore(t, s1, path, 2).Acquire, newSemaphore(t, s2, path, 2).Acquire, newSemaphore(t, s2, path, 2).Acquire,
		}
		occ := mix(t, admin, 2, 20, ours, cur, names)
		t.Logf("%d acquisitions (Curator and ours), at most %d holders at once", occ.total.Load(), occ.most.Load())
		require.EqualValues(t, 2, occ.most.Load(), "holders never overlapped: the bound was not tested")
		require.Empty(t, children(t, admin, path+"/leases"))

		// Both sides count each other's leases: ours hold both, Curator waits;
		// a Curator semaphore wrongly configured with 3 leases does not, and the
		// count above would have seen it.
		held, err := newSemaphore(t, s1, path, 2).AcquireN(ctxTimeout(t, 10*time.Second), 2)
		require.NoError(t, err)
		cur.Must(t, "acquire A 500")
		waitEvent(t, cur, "A", "timeout")
		cur.Must(t, "semaphore X "+path+" 3")
		cur.Must(t, "acquire X")
		waitEvent(t, cur, "X", "acquired")
		require.Len(t, children(t, admin, path+"/leases"), 3)
		cur.Must(t, "release X")
		for _, h := range held {
			require.NoError(t, h.Release())
		}
	})
}

// The stored lease count and Curator: a Curator InterProcessSemaphoreV2 of
// 2 leases takes the path first (its node's data empty); ours stores the
// count there and Curator goes on sharing the leases with us (it neither
// reads nor minds the data); one of ours with another count is refused
// while Curator holds, without disturbing Curator's lease.
func TestIntegration_CuratorSemaphoreLeaseCount(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		admin := c.Connect(t, sessionTimeout)
		s1, s2 := connect(t, c), connect(t, c)
		const path = "/sem/curator-count"
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		for _, name := range []string{"A", "B"} {
			cur.Must(t, "semaphore "+name+" "+path+" 2")
		}
		cur.Must(t, "acquire A")
		leaseA := waitEvent(t, cur, "A", "acquired").Arg
		data, _, err := admin.Get(path)
		require.NoError(t, err)
		require.Empty(t, data, "Curator leaves its semaphore's node empty")

		ours := newSemaphore(t, s1, path, 2)
		h, err := ours.Acquire(ctxTimeout(t, 10*time.Second)) // the second lease
		require.NoError(t, err)
		data, _, err = admin.Get(path)
		require.NoError(t, err)
		require.Equal(t, "2", string(data))
		cur.Must(t, "acquire B 500") // both leases held: Curator counts ours
		waitEvent(t, cur, "B", "timeout")

		_, err = newSemaphore(t, s2, path, 3).Acquire(ctxTimeout(t, 10*time.Second))
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "a third lease for a participant of 3")
		want := []string{leaseA[len(path+"/leases/"):], h.Node()[len(path+"/leases/"):]}
		require.Eventually(t, func() bool { return assert.ElementsMatch(noT{}, want, children(t, admin, path+"/leases")) },
			10*time.Second, 10*time.Millisecond, "the refused participant's lease node is deleted")

		require.NoError(t, h.Release())
		cur.Must(t, "acquire B") // Curator takes the lease ours returned
		waitEvent(t, cur, "B", "acquired")
		cur.Must(t, "release A")
		cur.Must(t, "release B")

		// Mixed rounds on the stored count, as in TestIntegration_CuratorSemaphoreInterop.
		occ := mix(t, admin, 2, 10, []func(context.Context) (*zklock.Hold, error){ours.Acquire, newSemaphore(t, s2, path, 2).Acquire},
			cur, []string{"A", "B"})
		require.LessOrEqual(t, occ.most.Load(), int32(2))
		require.Empty(t, children(t, admin, path+"/leases"))
	})
}

// noT is an assert.TestingT that reports nothing, for assertions used as
// conditions.
type noT struct{}

func (noT) Errorf(string, ...any) {}

// Participants judges a semaphore's leases by Curator's rule: with 2 leases
// and 3 participants, Curator's and ours mixed, the acquirer that holds the
// internal lock has its lease node counted but waits: 2 hold, 1 waits,
// whoever waits and whether the count is stored (ours store it, Curator's
// do not). Once a holder releases, the waiter holds and no one waits.
func TestIntegration_ParticipantsSemaphoreCuratorRule(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		admin := c.Connect(t, sessionTimeout)
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		for _, tc := range []struct {
			name   string
			ours   int  // our holders, the rest of the two being Curator's
			waiter bool // ours waits, else Curator's
		}{
			{name: "curator-waits", ours: 1},
			{name: "ours-waits", ours: 1, waiter: true},
			{name: "curator-only"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				path := "/sem/participants-" + tc.name
				s := connect(t, c)
				var curNames []string
				for i := range 3 {
					name := fmt.Sprintf("%s-%d", tc.name, i)
					cur.Must(t, "semaphore "+name+" "+path+" 2")
					curNames = append(curNames, name)
				}
				var holds []*zklock.Hold
				for range tc.ours {
					h, err := newSemaphore(t, connect(t, c), path, 2).Acquire(ctxTimeout(t, 10*time.Second))
					require.NoError(t, err)
					holds = append(holds, h)
				}
				for _, name := range curNames[:2-tc.ours] {
					cur.Must(t, "acquire "+name)
					waitEvent(t, cur, name, "acquired")
				}
				waiting := make(chan error, 1)
				if tc.waiter {
					go func() {
						h, err := newSemaphore(t, s, path, 2).Acquire(ctxTimeout(t, time.Minute))
						if err == nil {
							err = h.Release()
						}
						waiting <- err
					}()
				} else {
					cur.Must(t, "acquire "+curNames[2])
				}
				require.Eventually(t, func() bool {
					return len(children(t, admin, path+"/leases")) == 3 && len(children(t, admin, path+"/locks")) == 1
				}, 20*time.Second, 10*time.Millisecond, "the third participant waits")

				ps, err := zklock.Participants(ctxTimeout(t, 10*time.Second), s, path)
				require.NoError(t, err)
				var held, waits []zklock.Participant
				for _, p := range ps {
					require.Equal(t, zklock.KindLease, p.Kind, p.Node)
					if p.Holds {
						held = append(held, p)
					} else {
						waits = append(waits, p)
					}
				}
				require.Len(t, held, 2, "holders: %+v", ps)
				require.Len(t, waits, 1, "waiters: %+v", ps)
				if tc.waiter {
					require.Equal(t, s.ID(), waits[0].Session, "our waiting acquirer's node")
				} else {
					require.NotEqual(t, s.ID(), waits[0].Session)
				}

				// A holder releases: the waiter holds, and leaves the internal lock.
				if tc.ours > 0 {
					require.NoError(t, holds[0].Release())
				} else {
					cur.Must(t, "release "+curNames[0])
				}
				if tc.waiter {
					require.NoError(t, <-waiting) // it held, and released
				} else {
					waitEvent(t, cur, curNames[2], "acquired")
				}
				require.Eventually(t, func() bool { return len(children(t, admin, path+"/locks")) == 0 },
					10*time.Second, 10*time.Millisecond)
				ps, err = zklock.Participants(ctxTimeout(t, 10*time.Second), s, path)
				require.NoError(t, err)
				for _, p := range ps {
					require.True(t, p.Holds, "%s, once no one waits", p.Node)
				}
				for _, h := range holds[min(1, len(holds)):] {
					require.NoError(t, h.Release())
				}
				for _, name := range curNames {
					_, _ = cur.Do("release " + name) // those that hold
				}
			})
		}
	})
}
