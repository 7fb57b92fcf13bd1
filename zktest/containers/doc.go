// Package containers runs zktest clusters as Docker containers through
// testcontainers-go: one container per ZooKeeper member, each with its own
// address on a private Docker network created for the cluster, so that
// tests can partition members from each other (Partition, Heal), which
// servers sharing 127.0.0.1 cannot do.
//
// It is its own Go module (github.com/zklock/zklock/zktest/containers), so
// that the zklock module keeps its short dependency list; only tests that
// want containers add this one:
//
//	go get github.com/zklock/zklock/zktest/containers
//
// # Image
//
// The members run the image ZKTEST_IMAGE names, pulled (once per Start,
// within PullTimeout) when the engine does not have it: any image with the
// official zookeeper image's layout and environment, "zookeeper:3.9"
// itself. Each member's /conf/zoo.cfg is copied in before it starts (the
// entrypoint keeps a zoo.cfg that exists), ZOO_MY_ID numbers it (the
// entrypoint writes /data/myid), ZOO_SERVERS lists the ensemble, and the
// image's command, zkServer.sh start-foreground, passes JVMFLAGS to java;
// the harness also runs bash and timeout inside the members, and
// Partition and RejectClients need iptables there, which the official
// image lacks.
//
// Unset, it is "zklock/zookeeper:3.9", or "zklock/zookeeper:3.8" with
// ZKTEST_ZK_VERSION=3.8 (as the local backend chooses its release), which
// zklock's scripts/zk-image.sh builds from Debian packages in the official
// image's layout, with mmdebstrap and docker import, without any registry;
// those are never pulled, and Start fails the test, saying so, when they
// are missing.
//
// # Reaper
//
// testcontainers-go's reaper (Ryuk) runs from an image that must be pulled,
// so this package sets TESTCONTAINERS_RYUK_DISABLED=true when the variable is
// unset. Instead, every container and network it creates is labelled with
// the test binary's pid and start time, removed by the test's t.Cleanup,
// and, if the binary was killed before its clean-up ran, removed by the
// next Start in any test binary. Users with a registry can turn Ryuk back
// on with TESTCONTAINERS_RYUK_DISABLED=false (it then also removes the
// containers of a killed binary within seconds).
//
// # Addresses and faults
//
// Cluster.Servers returns each member's address on the private network
// (container IP, port 2181); the test process reaches it through the
// network's bridge, and the address survives Kill/Stop/Start (no port is
// published on the host's other interfaces; 2181 is also published on a
// random 127.0.0.1 port, see Container(i).MappedPort). Kill is
// SIGKILL of the container, Stop a docker stop, Pause/Resume use the cgroup
// freezer (docker pause/unpause). Partition and Heal install packet filters
// (iptables) inside the members' network namespaces; the test process's
// own connections count as the member Host.
//
// Tests skip (t.Skip, with the reason in one line) only when no Docker
// engine answers: the one DOCKER_HOST names, if it is set (testcontainers-go
// alone would fall back to the default socket), else the default socket.
// Once no engine answered, later Starts in the same test binary skip at
// once with the same reason.
package containers
