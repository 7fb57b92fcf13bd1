package bench

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// goTarget runs the measurement loops in this process for a Go library.
type goTarget struct {
	lib    goLib
	server string

	// herd state between HerdPrepare and HerdClose
	herdClient goClient
	holder     goLocker
	waiters    sync.WaitGroup
	herdErrs   chan error
	heapBefore uint64
}

func (g *goTarget) Name() string { return g.lib.name }

func (g *goTarget) clientPID() string { return "self" }

// Uncontended times acquire+release cycles of one lock by one client, after
// warm cycles for warm.
func (g *goTarget) Uncontended(server, path string, warm, dur time.Duration) (Run, error) {
	c, err := g.lib.open(server)
	if err != nil {
		return Run{}, err
	}
	defer c.close()
	l, err := c.locker(path)
	if err != nil {
		return Run{}, err
	}
	cycle := func() error {
		if err := l.lock(); err != nil {
			return err
		}
		return l.unlock()
	}
	for end := time.Now().Add(warm); time.Now().Before(end); {
		if err := cycle(); err != nil {
			return Run{}, err
		}
	}
	var r Run
	start := time.Now()
	for end := start.Add(dur); ; {
		t0 := time.Now()
		if err := cycle(); err != nil {
			return Run{}, err
		}
		t1 := time.Now()
		r.Lat = append(r.Lat, t1.Sub(t0))
		if t1.After(end) {
			r.Elapsed = t1.Sub(start)
			break
		}
	}
	r.Ops = len(r.Lat)
	r.finish()
	return r, nil
}

// Contended runs workers goroutines spread over sessions sessions (session
// i on servers[i%len(servers)]), all on one lock, each acquiring and releasing at once, for dur. Ops counts the
// acquisitions completed by the deadline; Lat holds their waits.
func (g *goTarget) Contended(servers []string, path string, sessions, workers int, dur time.Duration) (Run, error) {
	return g.contended(servers, path, sessions, workers, dur, 0)
}

// holdMarker is the node the census's held runs read (without waiting) the
// moment each acquire returns: the relay takes the request as the moment
// of the hold. It does not exist.
const holdMarker = "/zklock-bench-hold-marker"

// ContendedHeld is Contended with one goroutine per session, each holding
// the lock for hold before it releases, and marking the moment it holds
// with an exists request on holdMarker (which the census discounts).
func (g *goTarget) ContendedHeld(servers []string, path string, sessions int, hold, dur time.Duration) (Run, error) {
	return g.contended(servers, path, sessions, sessions, dur, hold)
}

func (g *goTarget) contended(servers []string, path string, sessions, workers int, dur, hold time.Duration) (Run, error) {
	clients := make([]goClient, 0, sessions)
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	for i := range sessions {
		c, err := g.lib.open(servers[i%len(servers)])
		if err != nil {
			return Run{}, err
		}
		clients = append(clients, c)
	}
	lockers := make([]goLocker, workers)
	marks := make([]func(), workers)
	for i := range lockers {
		conn := clients[i%sessions].zkConn()
		marks[i] = func() { go func() { _, _, _ = conn.Exists(holdMarker) }() }
		l, err := clients[i%sessions].locker(path)
		if err != nil {
			return Run{}, err
		}
		lockers[i] = l
	}
	// One cycle first, so that the lock's parents exist.
	if err := lockers[0].lock(); err != nil {
		return Run{}, err
	}
	if err := lockers[0].unlock(); err != nil {
		return Run{}, err
	}
	var (
		mu    sync.Mutex
		waits []time.Duration
		errs  []error
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	var end time.Time
	for i, l := range lockers {
		wg.Go(func() {
			<-start
			var mine []time.Duration
			var err error
			for {
				t0 := time.Now()
				if err = l.lock(); err != nil {
					break
				}
				t1 := time.Now()
				if hold > 0 {
					marks[i]()
					time.Sleep(hold)
				}
				if err = l.unlock(); err != nil || t1.After(end) {
					break
				}
				mine = append(mine, t1.Sub(t0))
			}
			mu.Lock()
			waits = append(waits, mine...)
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	end = time.Now().Add(dur)
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Run{}, err
	}
	r := Run{Ops: len(waits), Elapsed: dur, Lat: waits}
	r.finish()
	return r, nil
}

// AllocsPerCycle is the mean number of heap allocations in this process per
// uncontended acquire+release (go-zookeeper's connection goroutines
// included).
func (g *goTarget) AllocsPerCycle(path string, runs int) (float64, error) {
	c, err := g.lib.open(g.server)
	if err != nil {
		return 0, err
	}
	defer c.close()
	l, err := c.locker(path)
	if err != nil {
		return 0, err
	}
	var first error
	allocs := testing.AllocsPerRun(runs, func() {
		if err := l.lock(); err != nil {
			first = cmpErr(first, err)
			return
		}
		first = cmpErr(first, l.unlock())
	})
	return allocs, first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// HerdPrepare takes the lock at path through server and queues n waiting
// goroutines behind it on the same session.
func (g *goTarget) HerdPrepare(server, path string, n int) error {
	c, err := g.lib.open(server)
	if err != nil {
		return err
	}
	g.herdClient = c
	if g.holder, err = c.locker(path); err != nil {
		return err
	}
	if err := g.holder.lock(); err != nil {
		return err
	}
	lockers := make([]goLocker, n)
	for i := range lockers {
		if lockers[i], err = c.locker(path); err != nil {
			return err
		}
	}
	g.herdErrs = make(chan error, n)
	g.heapBefore = heapNow()
	for _, l := range lockers {
		g.waiters.Go(func() {
			err := l.lock()
			if err == nil {
				err = l.unlock()
			}
			g.herdErrs <- err
		})
	}
	return nil
}

// HeapPerWaiter is the heap and stack growth per waiting goroutine since
// HerdPrepare queued them; call it once they all wait.
func (g *goTarget) HeapPerWaiter(n int) float64 {
	return float64(int64(heapNow())-int64(g.heapBefore)) / float64(n)
}

// HerdGo releases the lock and waits until every waiter has had it.
func (g *goTarget) HerdGo() (time.Duration, error) {
	start := time.Now()
	if err := g.holder.unlock(); err != nil {
		return 0, err
	}
	g.waiters.Wait()
	elapsed := time.Since(start)
	close(g.herdErrs)
	var errs []error
	for err := range g.herdErrs {
		errs = append(errs, err)
	}
	return elapsed, errors.Join(errs...)
}

// HerdClose ends the herd session.
func (g *goTarget) HerdClose() {
	if g.herdClient != nil {
		g.herdClient.close()
		g.herdClient = nil
	}
	g.waiters.Wait() // closing the session ends any waiter left
}
