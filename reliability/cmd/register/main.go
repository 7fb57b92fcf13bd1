// Command register is the fenced resource of the reliability suite, in its
// own process: it listens on 127.0.0.1, prints "listening <addr>" on stdout,
// accepts a write iff its token is at least the highest seen for the
// resource, and appends every decision to the acceptance log (-log). It
// stops on SIGTERM or when stdin closes, flushing the log.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/zklock/zklock/reliability"
)

func main() {
	logPath := flag.String("log", "register.jsonl", "acceptance log (JSONL)")
	flag.Parse()
	log, err := reliability.CreateLog(*logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "register:", err)
		os.Exit(1)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "register:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", l.Addr())
	r := reliability.NewRegister(log)
	go r.Serve(l)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(eof) }()
	select {
	case <-stop:
	case <-eof:
	}
	l.Close()
	if err := r.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "register:", err)
		os.Exit(1)
	}
}
