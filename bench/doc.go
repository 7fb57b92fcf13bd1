// Package bench measures zklock's locks against Apache Curator 5.4, kazoo
// 2.8 and go-zookeeper's zk.Lock, and against floors: the least ZooKeeper
// itself lets a workload cost. It times acquire+release cycles and handoffs
// across sessions and between goroutines of one session (directly, through
// a proxy adding round trips, and on a 3-member ensemble); counts the
// requests and watch notifications per operation; measures herds of
// waiters, the cost of holding many locks, and how long a leader-only job
// has no leader when its leader or a ZooKeeper server fails. Suite runs it.
//
// `make bench` runs TestBench with -bench.full (about thirteen minutes),
// `make bench-full` ten longer repetitions, and `make bench-ab OLD=<commit>`
// (bench/ab) this tree's locks against another revision's, interleaved on
// one server. docs/benchmarks.md explains the output: the tables, the RATIO
// and FAILOVER lines and the goals.
package bench
