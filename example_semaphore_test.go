package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zklock/zklock"
)

// At most three workers in the whole fleet talk to a rate-limited API at
// once. Curator clients using InterProcessSemaphoreV2 with 3 leases on the
// same path share the same three leases.
func ExampleSemaphore() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	sem, err := zklock.NewSemaphore(s, "/semaphores/partner-api", 3)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err) // context.DeadlineExceeded after a minute; nothing is left behind
	}
	defer lease.Release()

	select {
	case <-lease.Done(): // the session expired or stayed suspended too long
		log.Print(lease.Err())
	default:
		fmt.Println("calling the API with token", lease.Token())
	}
}

// AcquireN takes several leases all or nothing, for a job that needs a
// bigger share of the resource.
func ExampleSemaphore_AcquireN() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	sem, err := zklock.NewSemaphore(s, "/semaphores/build-slots", 4)
	if err != nil {
		log.Fatal(err)
	}
	leases, err := sem.AcquireN(context.Background(), 2)
	if err != nil {
		log.Fatal(err) // no lease is held
	}
	defer func() {
		for _, l := range leases {
			_ = l.Release()
		}
	}()
	fmt.Println("running a double-size build")
}

// A SemaphoreMutex is a lock that one goroutine takes and another releases,
// excluding Curator's InterProcessSemaphoreMutex on the same path.
func ExampleSemaphoreMutex() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := zklock.NewSemaphoreMutex(s, "/locks/deploy")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.TryLock(context.Background())
	if errors.Is(err, zklock.ErrLocked) {
		fmt.Println("a deploy is already running")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println("deploying")
		if err := h.Release(); err != nil { // released by the worker, not the locker
			log.Print(err)
		}
	}()
	<-done
}

// A revocable holder is asked to step aside by anyone who knows its node
// (for example from Participants or `zklock status`), including Curator's
// Revoker.attemptRevoke; `zklock revoke NODE` does the same from a shell.
func ExampleRevoke() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := zklock.NewMutex(s, "/locks/report", zklock.WithRevocable())
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		// Elsewhere, an operator asks for the lock back.
		_ = zklock.Revoke(context.Background(), s, h.Node())
	}()
	select {
	case <-h.Revoked():
		fmt.Println("asked to release: finishing up")
	case <-h.Done():
		log.Print(h.Err())
	}
	_ = h.Release()
}
