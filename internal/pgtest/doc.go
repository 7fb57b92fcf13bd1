// Package pgtest starts real PostgreSQL servers for tests: Debian's
// postgresql package (initdb and postgres from /usr/lib/postgresql/<ver>/bin,
// the newest version found; PGTEST_BINDIR names another directory), in a
// temporary directory, as an unprivileged user, on a free port of 127.0.0.1.
//
// A test starts its own server with Start, which stops it and removes its
// directory in t.Cleanup. A package that wants one server for all its tests
// calls Shared from them and Run from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
//	func TestX(t *testing.T) {
//		dsn := pgtest.Shared(t).NewDatabase(t) // a fresh database, dropped at the end of the test
//		db, err := sql.Open("pgx", dsn)
//		...
//	}
//
// Code outside tests (a demo, a soak) uses Launch and Close.
//
// With PG_DSN set (a postgres:// URL), no server is started: every Server is
// that existing one, Close leaves it alone, and NewDatabase creates (and
// drops) databases on it, so its user needs the CREATEDB privilege.
//
// When the test binary runs as root, initdb and postgres run as user nobody
// (PostgreSQL refuses to run as root), in a directory owned by it. The
// server gets SIGKILL if the test binary dies (Pdeathsig, Linux), and the
// next Launch removes what a killed test binary left behind. The server keeps
// PostgreSQL's durability settings (fsync on); WithSetting changes any.
package pgtest
