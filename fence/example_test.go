package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/zklock/zklock/fence"
)

// writeReport is the README's example: the report is written only if token
// is still the greatest this database has accepted for "reports".
func writeReport(ctx context.Context, db *sql.DB, token int64, body string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	if err := fence.Check(ctx, tx, "reports", token); err != nil {
		return err // errors.Is(err, fence.ErrStale): a later holder wrote; nothing of ours commits
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO reports (body) VALUES ($1)", body); err != nil {
		return err
	}
	return tx.Commit()
}

// A holder paused past its lock (token 5) wakes after the next holder
// (token 7) has written: the database refuses its write, and its row is
// not there.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fence-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := fence.Setup(ctx, db); err != nil {
		panic(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE reports (body TEXT)"); err != nil {
		panic(err)
	}

	fmt.Println(writeReport(ctx, db, 7, "by the current holder"))
	err = writeReport(ctx, db, 5, "by a holder paused past its lock")
	fmt.Println(err)
	fmt.Println(errors.Is(err, fence.ErrStale))

	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM reports").Scan(&n); err != nil {
		panic(err)
	}
	fmt.Println("reports:", n)
	// Output:
	// <nil>
	// fence: resource "reports": stale token 5: token 7 already accepted
	// true
	// reports: 1
}

// A StaleError carries both tokens.
func ExampleStaleError() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fence-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := fence.Setup(ctx, db); err != nil {
		panic(err)
	}
	for _, token := range []int64{12, 9} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			panic(err)
		}
		err = fence.Check(ctx, tx, "ledger", token)
		var stale *fence.StaleError
		if errors.As(err, &stale) {
			fmt.Printf("refused token %d: %d was accepted\n", stale.Token, stale.Accepted)
			tx.Rollback()
			continue
		}
		if err != nil {
			panic(err)
		}
		if err := tx.Commit(); err != nil {
			panic(err)
		}
		fmt.Printf("accepted token %d\n", token)
	}
	// Output:
	// accepted token 12
	// refused token 9: 12 was accepted
}

// A Fence on a table of its own name.
func ExampleNew() {
	f, err := fence.New(fence.WithTable("billing.fence"))
	fmt.Println(f.Table(), err)
	_, err = fence.New(fence.WithTable("fence; DROP TABLE users"))
	fmt.Println(errors.Is(err, fence.ErrInvalidArgument))
	// Output:
	// billing.fence <nil>
	// true
}
