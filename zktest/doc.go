// Package zktest starts real ZooKeeper servers for Go tests and injects
// the faults that lock code must survive, in the spirit of Apache
// Curator's curator-test (TestingServer, TestingCluster, KillSession).
//
// A test asks for a standalone server or an ensemble, connects through the
// harness, and breaks things on purpose:
//
//	func TestIntegration_LockSurvivesLeaderLoss(t *testing.T) {
//		c := zktest.StartEnsemble(t)          // 3 JVMs on 127.0.0.1, fresh data dirs
//		c.RequireFaults(t)                    // skip against ZK_SERVERS
//		conn := c.Connect(t, 4*time.Second)   // closed at cleanup
//		// ... take a lock with conn ...
//		leader, err := c.Leader()
//		require.NoError(t, err)
//		require.NoError(t, c.Kill(leader))    // SIGKILL
//		require.NoError(t, c.Start(leader))   // same port and data, waits until serving
//		require.NoError(t, c.Expire(conn.SessionID())) // server-side expiry
//
//		p := c.Proxy(t)                       // client-side faults
//		other := p.Connect(t, 4*time.Second)
//		p.Blackhole()                         // partition `other`
//		p.Heal()
//		p.DropNextCreateReply()               // applied, but the client never hears
//		_ = other
//	}
//
// # Backends
//
// By default servers are local java processes on 127.0.0.1. Start runs the
// ZooKeeper server it finds first, looking in this order (EnvSearch names
// fewer places, or another order):
//
//   - ZOOKEEPER_HOME: an unpacked Apache binary release
//     (apache-zookeeper-X.Y.Z-bin, its lib/*.jar), a Homebrew prefix or a
//     directory of Debian's jars (see EnvHome);
//   - zklock's development cache, $ZKLOCK_CACHE/zookeeper-3.9 (default
//     /var/cache/zklock): Debian's newest 3.9 beside the system's jars;
//   - zkServer.sh on PATH: a release's bin/ (tarball under /opt, say) or
//     Homebrew's (brew install zookeeper), symbolic links followed;
//   - Debian's and Ubuntu's packages (apt install zookeeper):
//     /usr/share/java/zookeeper.jar, zookeeper-jute.jar first when present.
//
// WithServerHome names one installation for a cluster, and
// ZKTEST_CLASSPATH a class path that overrides everything. ZKTEST_ZK_VERSION
// ("3.9", "3.8"; see EnvVersion) or WithVersion skips installations of
// other releases. java is $JAVA_HOME/bin/java, java on PATH, or
// Homebrew's openjdk. Each server runs in its own process group, with free
// ports on 127.0.0.1, tickTime 100ms, a 256 MiB serial-GC client-compiler
// JVM, all four-letter words enabled and TTL nodes allowed. A standalone
// server starts in about half a second and a 3-server ensemble in about
// one. If java or ZooKeeper is missing, Start fails the test with an error
// (ErrNoServer) that lists each place it looked at and why it did not fit,
// and how to install a server; it does not skip, so a CI machine without
// ZooKeeper cannot pass by running nothing.
//
// ZK_SERVERS=host:port,... runs the same tests against an existing
// ensemble: Connect, Dialer, Expire, FourLetter, WaitServing and Proxy
// work; Kill, Stop, Start, Restart, Pause, Resume and Leader return
// ErrUnsupported, and RequireFaults skips the test.
//
// Ensembles in containers, with partitions between members, are in the
// separate module github.com/zklock/zklock/zktest/containers (on
// testcontainers-go): containers.Start returns a Cluster that embeds this
// package's, built with NewCluster over a Controller.
//
// # TLS
//
// WithTLS (or WithTLSClientAuth, which also requires client certificates)
// starts servers that speak only TLS on their client port (ZooKeeper's
// secureClientPort with the Netty connection factory and PEM stores), with
// a CA, server and client certificates made in the test; Cluster.TLS
// returns a client tls.Config and the PEM files for other clients. The
// harness's own dialer, four-letter words and Expire speak TLS too; a
// Proxy cannot be used.
//
// # Cleanup and leaks
//
// Every server and connection is stopped by t.Cleanup, also when the test
// fails or panics. Servers also get SIGKILL when the test binary dies
// (Pdeathsig, on Linux), and each is recorded in a pid file under
// os.TempDir()/zktest-pids so that the next Start kills servers whose test
// binary was itself killed. RunningServers lists the servers of this
// binary that are still alive; call it from TestMain after m.Run.
//
// # Faults
//
// Server faults (local backend): Kill (SIGKILL), Stop (SIGTERM), Start,
// Restart, Pause (SIGSTOP) and Resume (SIGCONT). Data directories survive
// restarts, so zxids (and fencing tokens derived from them) never regress.
//
// Session faults: Expire ends a session on the server exactly as a
// timeout would, by taking it over with its recorded id and password and
// closing it. Credentials are recorded by Dialer, WrapDialer, Connect and
// every Proxy.
//
// Network faults: a Proxy puts a listener in front of every member and can
// Blackhole (partition), Isolate some members, Refuse new connections to
// some, Heal, Cut connections, and drop the reply to the next create while
// the server applies it; SetDelay adds latency in either direction.
//
// Lag: an ensemble started WithQuorumRelay has its members reach each
// other's quorum ports through relays of the harness, and SetLag holds back
// what the leader sends one follower, which then serves an old state while
// it stays in the quorum (the lagging follower of ZooKeeper's consistency
// guarantees, which only a sync brings up to date). Requests counts the requests that went through it, by
// opcode, and Exchanges logs requests and replies in the order it forwarded
// them, so that a test can show what a client sent before it could have
// read a reply (pipelining) without a hook in the code under test.
package zktest
