package containers

import (
	"bytes"
	"io"
	"sync"

	"github.com/testcontainers/testcontainers-go"
)

// logSink is a member's testcontainers log consumer: it keeps the tail for
// error messages and copies whole lines, prefixed, to an optional writer.
type logSink struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	tail   []byte
}

const logTail = 16 << 10

func newLogSink(prefix string, w io.Writer) *logSink { return &logSink{prefix: prefix, w: w} }

// Accept implements testcontainers.LogConsumer. The engine delivers whole
// lines; a user writer that fails is ignored.
func (s *logSink) Accept(l testcontainers.Log) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, l.Content...)
	if len(s.tail) > 2*logTail {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-logTail:]...)
	}
	if s.w != nil {
		line := append([]byte(s.prefix), l.Content...)
		if !bytes.HasSuffix(line, []byte("\n")) {
			line = append(line, '\n')
		}
		_, _ = s.w.Write(line)
	}
}

// Tail returns the last few KiB of the member's output.
func (s *logSink) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tail
	if len(t) > logTail {
		t = t[len(t)-logTail:]
	}
	return string(t)
}
