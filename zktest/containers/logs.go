package containers

import (
	"bytes"
	"io"
	"sync"

	"github.com/testcontainers/testcontainers-go"

	"github.com/zklock/zklock/internal/proc"
)

// logSink is a member's testcontainers log consumer: it keeps the tail for
// error messages and copies whole lines, prefixed, to an optional writer.
type logSink struct {
	tail   *proc.Tail
	mu     sync.Mutex // serialises the writes to w
	prefix string
	w      io.Writer
}

const logTail = 16 << 10

func newLogSink(prefix string, w io.Writer) *logSink {
	return &logSink{tail: proc.NewTail(logTail), prefix: prefix, w: w}
}

// Accept implements testcontainers.LogConsumer. The engine delivers whole
// lines; a user writer that fails is ignored.
func (s *logSink) Accept(l testcontainers.Log) {
	_, _ = s.tail.Write(l.Content)
	if s.w != nil {
		line := append([]byte(s.prefix), l.Content...)
		if !bytes.HasSuffix(line, []byte("\n")) {
			line = append(line, '\n')
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		_, _ = s.w.Write(line)
	}
}

// Tail returns the last few KiB of the member's output.
func (s *logSink) Tail() string { return s.tail.String() }
