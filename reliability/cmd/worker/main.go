// Command worker is one contending process of the reliability suite: -clients
// goroutines, each with its own zklock Session, loop acquiring one of -locks
// locks, writing the hold's token to the fenced register (or to a PostgreSQL
// table through fence.Check, -pg) and to the ZooKeeper register (guarded
// multi), holding for a while and releasing. Every step is logged to -log as
// JSONL stamped with CLOCK_MONOTONIC. It stops on SIGTERM (or when stdin
// closes): waiters give up, holders release, sessions close.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/reliability"
)

func main() {
	var cfg reliability.WorkerConfig
	var servers, logPath string
	flag.StringVar(&cfg.Name, "name", "w1", "worker label")
	flag.StringVar(&servers, "servers", "127.0.0.1:2181", "ZooKeeper addresses, comma-separated")
	flag.IntVar(&cfg.Clients, "clients", 8, "sessions")
	flag.IntVar(&cfg.Share, "share", 1, "goroutines per session (holds then hand over within a session)")
	flag.StringVar(&cfg.Root, "root", "/reliability", "lock paths are <root>/lock-<i>")
	flag.IntVar(&cfg.Locks, "locks", 1, "number of locks")
	flag.StringVar(&cfg.ZKRegister, "zkreg", "", "ZooKeeper register parent (empty: none)")
	flag.StringVar(&cfg.Register, "register", "", "fenced register address (empty: none)")
	flag.StringVar(&cfg.PG, "pg", "", "PostgreSQL register: the DSN of its database (empty: none)")
	flag.StringVar(&cfg.Recipe, "recipe", "mutex", "lock recipe: mutex, semmutex (non-reentrant semaphore mutex), rw (read-write lock), multi (multi-lock over 2-3 mutexes) or leader (leader election)")
	flag.Float64Var(&cfg.Writers, "writers", 0.1, "rw: share of write acquisitions")
	flag.DurationVar(&cfg.SessionTimeout, "session", 4*time.Second, "session timeout")
	flag.DurationVar(&cfg.HoldMin, "hold-min", 5*time.Millisecond, "minimum hold")
	flag.DurationVar(&cfg.HoldMax, "hold-max", 50*time.Millisecond, "maximum hold")
	flag.DurationVar(&cfg.LockTimeout, "lock-timeout", time.Minute, "bound on one Lock call")
	flag.IntVar(&cfg.LongEvery, "long-every", 0, "one acquisition in N holds for -long-hold (0: none)")
	flag.DurationVar(&cfg.LongHold, "long-hold", 0, "duration of a long hold (ends early on loss)")
	flag.StringVar(&cfg.Negative, "negative", "", "negative control N1, N3 or N7 (needs -tags zklock_negative)")
	flag.StringVar(&cfg.Auth, "auth", "", "ZooKeeper credentials SCHEME:CRED (digest:user:password)")
	flag.StringVar(&cfg.ACL, "acl", "", "ACL of the lock nodes, as zklock.ParseACL reads it (empty: world)")
	flag.BoolVar(&cfg.Restat, "restat", false, "read the holder's node again before each release (C3 after faults)")
	flag.StringVar(&logPath, "log", "worker.jsonl", "event log (JSONL)")
	flag.Parse()
	cfg.Servers = strings.Split(servers, ",")

	log, err := reliability.CreateLog(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	go func() { // keep the log on disk current for a worker that gets SIGKILLed
		for range time.Tick(200 * time.Millisecond) {
			log.Flush()
		}
	}()
	fmt.Println("started")
	err = reliability.RunWorker(ctx, cfg, log)
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}
