package fence_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zklock/zklock/internal/pgtest"
)

// TestMain runs the tests with one PostgreSQL server for the whole binary
// (pgtest.Shared starts it on first use; each test gets a database of its
// own), then checks that no goroutine is left.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
