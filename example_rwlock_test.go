package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zklock/zklock"
)

// Many processes read a shared configuration at once; a writer waits for
// the current readers and keeps later readers out until it is done. Curator
// clients using InterProcessReadWriteLock on the same path take part in the
// same queue.
func ExampleRWLock() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	rw, err := zklock.NewRWLock(s, "/locks/config")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	r, err := rw.ReadLock().Lock(ctx) // shared with other readers
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reading under token", r.Token())
	if err := r.Release(); err != nil {
		log.Print(err)
	}

	w, err := rw.WriteLock().Lock(ctx) // alone
	if err != nil {
		log.Fatal(err)
	}
	defer w.Release()
	fmt.Println("writing under token", w.Token())
}

// A writer publishes a new version, then downgrades to a read lock so that
// no other writer can change it while it is still being used, while other
// readers can come in.
func ExampleRWLock_downgrade() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	rw, err := zklock.NewRWLock(s, "/locks/config")
	if err != nil {
		log.Fatal(err)
	}

	w, err := rw.WriteLock().Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	// publish ...

	// The write hold's context downgrades: the read node keeps the write
	// node's place in the queue, so a writer queued behind cannot get in.
	r, err := rw.ReadLock().Lock(w.Context())
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Release(); err != nil { // other readers may now share
		log.Print(err)
	}
	defer r.Release()

	// An upgrade is refused at once rather than deadlocking.
	if _, err := rw.WriteLock().Lock(r.Context()); errors.Is(err, zklock.ErrUpgrade) {
		fmt.Println("still reading; release the read lock before writing")
	}
}

// A transfer needs both accounts. Every MultiLock takes its locks in the
// same canonical order (by path), so two transfers in opposite directions
// cannot deadlock, and one deadline covers the whole acquisition.
func ExampleMultiLock() {
	s, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	from, err := zklock.NewMutex(s, "/locks/accounts/42")
	if err != nil {
		log.Fatal(err)
	}
	to, err := zklock.NewMutex(s, "/locks/accounts/17")
	if err != nil {
		log.Fatal(err)
	}
	both, err := zklock.NewMultiLock(from, to)
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mh, err := both.Lock(ctx)
	if err != nil {
		log.Fatal(err) // nothing is held and no node is left behind
	}
	defer func() {
		if err := mh.Release(); err != nil {
			log.Print(err) // every member's failure, joined
		}
	}()

	select {
	case <-mh.Done(): // a member was lost
		log.Print(mh.Err())
	default:
		for _, h := range mh.Holds() {
			fmt.Println("holding", h.Path(), "token", h.Token())
		}
	}
}
