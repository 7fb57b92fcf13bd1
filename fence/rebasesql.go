package fence

import (
	"fmt"
	"strings"
)

// RebaseSQL returns Rebase as SQL, for an operator to run with the
// database's own client (psql, sqlite3) where no Go program can: one
// UPDATE that moves every named row from era from to era to, followed by
// a SELECT of those rows to read what it did. The UPDATE is one statement,
// so it changes all the rows or none: a row in any other era makes it fail
// on the table's own constraints (era NOT NULL, token > 0). Unlike Rebase,
// it cannot tell a resource without a row: the SELECT shows what is there.
// Arguments are checked as Rebase checks them; the text is quoted as
// standard SQL (PostgreSQL, SQLite).
func (f *Fence) RebaseSQL(from, to string, resources ...string) (string, error) {
	if err := validEra(to); err != nil {
		return "", err
	}
	if from != "" {
		if err := validEra(from); err != nil {
			return "", err
		}
	}
	if from == to {
		return "", fmt.Errorf("%w: the old and the new era are both %s", ErrRebase, to)
	}
	if len(resources) == 0 {
		return "", invalid("Rebase needs at least one resource")
	}
	list := make([]string, len(resources))
	for i, r := range resources {
		if err := validResource(r); err != nil {
			return "", err
		}
		list[i] = quote(r)
	}
	t, in := f.Table(), strings.Join(list, ", ")
	return fmt.Sprintf("UPDATE %s SET era = CASE WHEN era = %s THEN %s END,"+
		" token = CASE WHEN era = %s THEN 1 ELSE 0 END WHERE resource IN (%s);\n"+
		"SELECT resource, token, era FROM %s WHERE resource IN (%s) ORDER BY resource;\n",
		t, quote(from), quote(to), quote(from), in, t, in), nil
}

// RebaseSQL is Fence.RebaseSQL for DefaultTable.
func RebaseSQL(from, to string, resources ...string) (string, error) {
	return defaultFence.RebaseSQL(from, to, resources...)
}

// quote is s as a standard SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
