package zklock_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

// A job every five minutes, at 30 s past each fifth minute, on exactly one
// of the processes that run this: each tick is claimed once, by the
// leader, before it runs. SIGINT or SIGTERM ends the job's context and Run
// (the node goes, and another process takes over). A tick missed while no
// one led runs late, once (zklock.RunLatest; zklock.Skip waits for the next).
func ExampleSchedule_Run() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"},
		zklock.WithLossLimit(0)) // a term never outlives a disconnection
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	host, _ := os.Hostname()
	sc, err := zklock.NewSchedule(sess, "/schedules/report", 5*time.Minute,
		zklock.WithOffset(30*time.Second), zklock.WithScheduleID(host))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = sc.Run(ctx, func(ctx context.Context, t zklock.Tick) error {
		// ctx ends if leadership may be lost: stop, and fence every write
		// with t.Token (or guard ZooKeeper writes with t.Hold.Guard()).
		log.Printf("tick %s (token %d, late %v, missed before it %d)", t.Time, t.Token, t.Late, t.Missed)
		return nil // an error is recorded as the tick's outcome
	})
	log.Print("stopped: ", err)
}

// The latest runs of a schedule, their outcomes, and the next tick.
func ExampleScheduleHistory() {
	sess, err := zklock.Connect([]string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := zklock.ScheduleHistory(ctx, sess, "/schedules/report")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range h.Claims {
		log.Printf("%s %s by %s (token %d)", c.Tick, c.Outcome, c.ID, c.Token)
	}
	log.Printf("missed %d, next %s", h.MissedTotal, h.Next)
}
