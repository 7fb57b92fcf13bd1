package zklock_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// A leader-only job: every process runs this; one at a time leads. The
// job's context ends the moment leadership may be lost, and every write
// carries the term's fencing token, so a leader that learns of its loss too
// late is still refused by the resource (see examples/jobrunner).
func ExampleLeaderElection_Run() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"},
		zklock.WithLossLimit(0)) // a term never outlives a disconnection
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	host, _ := os.Hostname()
	e, err := zklock.NewLeaderElection(sess, "/election/nightly-report", host, zklock.WithRequeue())
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		log.Printf("leading with token %d", l.Token())
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done(): // lost, resigned, or stopping: return to release
				log.Printf("term over: %v", context.Cause(ctx))
				return nil
			case <-tick.C:
				// Fence each write with l.Token() (the resource keeps the
				// highest token seen and refuses lower ones).
			}
		}
	})
	log.Print("stopped: ", err)
}

// Who leads, and the queue behind the leader. Curator LeaderSelectors on
// the same path show up with their ids too.
func ExampleLeaderElection_Leader() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	e, _ := zklock.NewLeaderElection(sess, "/election/nightly-report", "observer")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leader, err := e.Leader(ctx)
	if err != nil {
		log.Fatal(err) // zklock.ErrNoLeader if nobody campaigns
	}
	fmt.Println("leader:", leader.ID(), "token", leader.Token)
	ps, _ := e.Participants(ctx)
	for _, p := range ps[1:] {
		fmt.Println("waiting:", p.ID())
	}
}

// A write to ZooKeeper made as leader, applied only while the leader's node
// exists: a fenced write with no resource-side token check needed.
func ExampleLeadership_Hold() {
	sess, _ := zklock.Connect([]string{"127.0.0.1:2181"})
	defer sess.Close()
	e, _ := zklock.NewLeaderElection(sess, "/election/config-writer", "writer-1")
	_ = e.Run(context.Background(), func(ctx context.Context, l *zklock.Leadership) error {
		_, err := sess.Conn().Multi(l.Hold().Guard(),
			&zk.SetDataRequest{Path: "/config/current", Data: []byte("v2"), Version: -1})
		return err // with the hold gone, the multi fails and nothing is written
	})
}
