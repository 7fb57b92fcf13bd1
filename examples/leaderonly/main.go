// Command leaderonly runs its jobs only while it leads: start it on every host.
package main

import (
	"cmp"
	"context"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/zklock/zklock"
)

func main() {
	// SIGTERM is how systemd, Docker and Kubernetes stop a process: a
	// graceful handover, as Ctrl-C is. Run then returns, deleting the node,
	// and the next leader starts at once instead of after the session.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers := strings.Split(cmp.Or(os.Getenv("ZKLOCK_SERVERS"), "127.0.0.1:2181"), ",")
	sess, err := zklock.Connect(servers, zklock.WithLossLimit(0)) // a term ends at the first suspension
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	host, _ := os.Hostname()
	e, err := zklock.NewLeaderElection(sess, "/elections/nightly-jobs", host, zklock.WithRequeue())
	if err != nil {
		log.Fatal(err)
	}
	err = e.Run(ctx, func(term context.Context, l *zklock.Leadership) error {
		return runJobs(term, l.Token()) // term is cancelled the moment leadership may be lost
	})
	log.Print("stopped: ", err)
}

// runJobs is the work: it stops when ctx ends, and every write it makes
// carries token, so that the resource can refuse a deposed leader's.
func runJobs(ctx context.Context, token int64) error {
	log.Printf("leading with fencing token %d", token)
	<-ctx.Done() // your jobs here
	return nil
}
