package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// The examples need a ZooKeeper server on 127.0.0.1:2181 (`make zk-start`),
// so they are compiled but not run by `go test`.

func ExampleMutex_Lock() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := zklock.NewMutex(sess, "/locks/example")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hold, err := m.Lock(ctx) // the deadline bounds the wait, not the hold
	if err != nil {
		log.Fatal(err)
	}
	defer hold.Release()

	select {
	case <-hold.Done(): // lost: stop acting on the lock's behalf
		log.Print(hold.Err())
	case <-time.After(time.Second): // the work, fenced with hold.Token()
		fmt.Println("worked under token", hold.Token())
	}
}

func ExampleMutex_TryLock() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, _ := zklock.NewMutex(sess, "/locks/example")
	hold, err := m.TryLock(context.Background())
	switch {
	case errors.Is(err, zklock.ErrLocked):
		fmt.Println("busy: someone else holds it")
		return
	case err != nil:
		log.Fatal(err)
	}
	defer hold.Release()
	fmt.Println("held", hold.Node())
}

// Reentrancy: the hold's context is the owner.
func ExampleMutex_Lock_reentrant() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	m, _ := zklock.NewMutex(sess, "/locks/example")

	outer, err := m.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer outer.Release()
	inner, err := m.Lock(outer.Context()) // re-enters at once: same node, same token
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inner.Token() == outer.Token())
	_ = inner.Release() // the node stays until outer is released too
}

// A write to ZooKeeper that applies only while the lock is held.
func ExampleHold_Guard() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	m, _ := zklock.NewMutex(sess, "/locks/config")
	hold, err := m.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer hold.Release()
	_, err = sess.Conn().Multi(hold.Guard(), &zk.SetDataRequest{Path: "/app/config", Data: []byte("v2"), Version: -1})
	if errors.Is(err, zk.ErrNoNode) {
		log.Print("the lock was lost: the write was refused")
	}
}

// An efficiency lock that runs its job even when ZooKeeper is down.
func ExampleWithFailOpen() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	m, _ := zklock.NewMutex(sess, "/locks/cache-warmup", zklock.WithFailOpen(10*time.Second))
	hold, err := m.Lock(context.Background())
	switch {
	case errors.Is(err, zklock.ErrUnlocked):
		log.Printf("warming the cache WITHOUT the lock: %v", err)
	case err != nil:
		log.Fatal(err)
	}
	defer hold.Release()
	fmt.Println("exclusive:", hold.Exclusive())
}
