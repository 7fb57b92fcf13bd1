package zklock_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/zklock/zklock"
)

// A leader latch: the process stays a candidate until it stops, leading
// whenever its node is first. Each term is a Hold: work while it lasts,
// fence every write with its token, and wait for the next term after a
// loss (the latch joins the queue again by itself).
func ExampleLeaderLatch() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"},
		zklock.WithLossLimit(0)) // a term never outlives a disconnection
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	host, _ := os.Hostname()
	latch, err := zklock.NewLeaderLatch(sess, "/latch/compactor", host)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := latch.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer latch.Close() // leave the queue, deleting our node
	for {
		term, err := latch.Await(ctx)
		if err != nil {
			log.Print("stopped: ", err) // ctx ended, latch or session closed
			return
		}
		log.Printf("leading with token %d", term.Token())
		<-term.Done() // work here, fenced with term.Token(), until the term ends
		log.Printf("term over: %v", term.Err())
	}
}

// Follow who leads an election or a latch (ours or Curator's) without
// taking part, as `zklock elect --listen` does.
func ExampleObserveLeader() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	leaders, err := zklock.ObserveLeader(ctx, sess, "/latch/compactor")
	if err != nil {
		log.Fatal(err)
	}
	for p := range leaders { // closed when ctx ends or the session closes
		if p.Node == "" {
			fmt.Println("no leader")
			continue
		}
		fmt.Println("leader:", p.ID(), "token", p.Token)
	}
}

// The same, from a LeaderElection value.
func ExampleLeaderElection_Observe() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	e, _ := zklock.NewLeaderElection(sess, "/election/nightly-report", "observer")
	for p := range e.Observe(context.Background()) {
		fmt.Println("leader:", p.ID())
	}
}

// A session whose recipes all live under /app, as a Curator client built
// with namespace("app"): this mutex is the znode /app/locks/orders, and it
// excludes a Curator InterProcessMutex at /locks/orders in that namespace.
func ExampleWithNamespace() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"}, zklock.WithNamespace("app"))
	if err != nil {
		log.Fatal(err) // an invalid namespace is refused here
	}
	defer sess.Close()
	m, _ := zklock.NewMutex(sess, "/locks/orders")
	h, err := m.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release()
	fmt.Println(h.Node())       // /locks/orders/_c_...-lock-0000000000
	fmt.Println(h.Guard().Path) // /app/locks/orders/_c_...-lock-0000000000
}

func ExampleValidateNamespace() {
	for _, ns := range []string{"app", "app/sub", "", "/app", "app/"} {
		fmt.Printf("%q: %v\n", ns, zklock.ValidateNamespace(ns) == nil)
	}
	// Output:
	// "app": true
	// "app/sub": true
	// "": true
	// "/app": false
	// "app/": false
}

// Connect does no I/O, so a session's paths can be shown without a server.
func ExampleSession_FullPath() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"}, zklock.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	fmt.Println(sess.Namespace(), sess.FullPath("/locks/orders"))
	// Output: app /app/locks/orders
}
