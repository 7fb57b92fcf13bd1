// Package bench measures zklock's locks against Apache Curator and kazoo
// (internal/peers' Newest generation: Debian's newest Curator 5 on the
// ZooKeeper 3.9 client, and kazoo 2) and go-zookeeper's zk.Lock, and
// against floors: the least ZooKeeper itself lets a workload cost, on
// servers of the release ZKTEST_ZK_VERSION selects (zktest; 3.9 by
// default). It also times zklock's mutex on a 3.9 and a 3.8 server side by
// side (the release comparison). It times acquire+release cycles and handoffs
// across sessions and between goroutines of one session (directly, through
// a proxy adding round trips, and on a 3-member ensemble); counts the
// requests and watch notifications per operation; measures herds of
// waiters, the cost of holding many locks, and how long a leader-only job
// has no leader when its leader or a ZooKeeper server fails. Suite runs it.
//
// `make bench` runs TestBench with -bench.full (about fourteen minutes),
// `make bench-full` ten longer repetitions, and `make bench-ab OLD=<commit>`
// (bench/ab) this tree's locks against another revision's, interleaved on
// one server. docs/benchmarks.md explains the output: the tables, the RATIO
// and FAILOVER lines and the goals.
package bench
