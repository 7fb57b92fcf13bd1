package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// handler serves the store's HTTP API and logs each write to out.
func handler(s *Store, out io.Writer) http.Handler {
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(out, "[store] "+format+"\n", args...)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		writer, value := q.Get("writer"), q.Get("value")
		token, err := strconv.ParseInt(q.Get("token"), 10, 64)
		if err != nil || writer == "" {
			http.Error(w, "want writer=W&token=N&value=V", http.StatusBadRequest)
			return
		}
		res := s.Write(writer, token, value)
		if !res.Accepted {
			logf("REJECT %s token=%d value=%q: stale, highest seen is %d", writer, token, value, res.Highest)
			w.WriteHeader(http.StatusConflict)
			fmt.Fprintf(w, "rejected highest=%d\n", res.Highest)
			return
		}
		logf("ACCEPT %s token=%d value=%q (write #%d)", writer, token, value, res.Writes)
		fmt.Fprintf(w, "accepted highest=%d\n", res.Highest)
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, s.String())
	})
	return mux
}
