// Command fencedstore is the resource of the leader-only job runner example
// (examples/jobrunner): a tiny HTTP store on 127.0.0.1 that accepts a write
// iff its fencing token is at least the highest token it has seen, checked
// and recorded atomically with the write. It logs every accepted and
// rejected write on stdout.
//
//	fencedstore -addr 127.0.0.1:0 -addr-file /tmp/store.addr
//
// API:
//
//	POST /write?writer=W&token=N&value=V   200 "accepted highest=N"
//	                                       409 "rejected highest=M" (N < M)
//	                                       400 on a missing or bad token
//	GET  /state                            200 the current value, writer and highest token
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	addrFile := flag.String("addr-file", "", "write the address listened on to this file")
	flag.Parse()
	log.SetFlags(0)
	if err := run(*addr, *addrFile); err != nil {
		log.Fatalf("[store] %v", err)
	}
}

func run(addr, addrFile string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if addrFile != "" {
		tmp := addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, addrFile); err != nil {
			return err
		}
	}
	fmt.Printf("[store] listening on http://%s (rule: accept iff token >= highest seen)\n", ln.Addr())
	srv := &http.Server{Handler: handler(&Store{}, os.Stdout), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
