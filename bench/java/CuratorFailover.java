import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.HostProvider;

/**
 * The failover phase's Curator 5.4 leader process, run by zklock's bench
 * package (the same protocol as its bench/leaderworker for zklock).
 *
 * Reads one command per line, writes JSON lines:
 *
 *   clock                                       {"ev":"clock","t":NS}
 *   join ID RECIPE PATH SERVERS TIMEOUT_MS LOSS  RECIPE selector (LeaderSelector, autoRequeue,
 *                                               LeaderSelectorListenerAdapter) or latch (LeaderLatch);
 *                                               SERVERS tried in order; LOSS ignored (Curator's
 *                                               default connection-state error policy, "standard")
 *   leave ID                                    end the term (if leading), then close
 *   close ID                                    close without reporting an end
 *   quit
 *
 * Events: session, conn (SUSPENDED, RECONNECTED, LOST), start, end, left,
 * closed, error, as the Go worker's. Every t is System.nanoTime(), which
 * HotSpot reads from CLOCK_MONOTONIC on Linux: the driver checks it against
 * its own clock at start ("clock").
 */
public final class CuratorFailover {
    private static final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    static synchronized void emit(String ev, String id, long t, String... kv) {
        StringBuilder b = new StringBuilder(96);
        b.append("{\"ev\":\"").append(ev).append("\",\"id\":\"").append(id).append("\",\"t\":").append(t);
        for (int i = 0; i + 1 < kv.length; i += 2) {
            b.append(",\"").append(kv[i]).append("\":\"").append(kv[i + 1].replace("\\", "\\\\").replace("\"", "'")).append('"');
        }
        out.println(b.append('}'));
        out.flush();
    }

    /** Tries the servers in the given order, moving to the next when a connection ends. */
    static final class Ordered implements HostProvider {
        private final List<InetSocketAddress> servers = new ArrayList<>();
        private int curr = -1;
        private int last = -1;

        Ordered(String list) {
            for (String s : list.split(",")) {
                int i = s.lastIndexOf(':');
                servers.add(InetSocketAddress.createUnresolved(s.substring(0, i), Integer.parseInt(s.substring(i + 1))));
            }
        }

        public synchronized int size() {
            return servers.size();
        }

        public InetSocketAddress next(long spinDelay) {
            boolean wrapped;
            InetSocketAddress a;
            synchronized (this) {
                curr = (curr + 1) % servers.size();
                wrapped = curr == last;
                if (last == -1) {
                    last = 0;
                }
                a = servers.get(curr);
            }
            if (wrapped && spinDelay > 0) {
                try {
                    Thread.sleep(spinDelay);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return new InetSocketAddress(a.getHostString(), a.getPort());
        }

        public synchronized void onConnected() {
            last = curr;
        }

        public boolean updateServerList(Collection<InetSocketAddress> s, InetSocketAddress current) {
            return false;
        }
    }

    /** One participant: its own client and recipe. */
    static final class Part {
        final String id;
        CuratorFramework client;
        LeaderSelector selector;
        LeaderLatch latch;
        final AtomicBoolean leading = new AtomicBoolean();
        final AtomicBoolean leaving = new AtomicBoolean();
        final CountDownLatch leave = new CountDownLatch(1);
        final CountDownLatch joined = new CountDownLatch(1);

        Part(String id) {
            this.id = id;
        }

        void start() {
            if (leading.compareAndSet(false, true)) { // isLeader may be called again while leading
                emit("start", id, System.nanoTime());
            }
        }

        void end(String why) {
            if (leading.compareAndSet(true, false)) {
                emit("end", id, System.nanoTime(), "why", why);
            }
        }

        void close() {
            leaving.set(true);
            try {
                joined.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (client == null) {
                return; // the join failed
            }
            try {
                if (selector != null) {
                    selector.close();
                }
                if (latch != null) {
                    latch.close();
                }
            } catch (Exception e) {
                emit("error", id, System.nanoTime(), "msg", String.valueOf(e));
            }
            client.close();
        }
    }

    static void join(Part p, String recipe, String path, String servers, int timeoutMs) throws Exception {
        try {
            build(p, recipe, path, servers, timeoutMs);
        } catch (Exception e) {
            if (p.client != null) {
                p.client.close();
                p.client = null;
            }
            throw e;
        } finally {
            p.joined.countDown();
        }
    }

    static void build(Part p, String recipe, String path, String servers, int timeoutMs) throws Exception {
        final String id = p.id;
        Ordered hosts = new Ordered(servers);
        p.client = CuratorFrameworkFactory.builder()
                .connectString(servers)
                .sessionTimeoutMs(timeoutMs)
                .connectionTimeoutMs(15000)
                .ensembleTracker(false)
                .zookeeperFactory((cs, st, w, ro) -> new ZooKeeper(cs, st, w, ro, hosts))
                .retryPolicy(new ExponentialBackoffRetry(100, 6))
                .build();
        p.client.getConnectionStateListenable().addListener((c, s) -> emit("conn", id, System.nanoTime(), "state", s.name()));
        p.client.start();
        if (!p.client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to " + servers);
        }
        ZooKeeper zk = p.client.getZookeeperClient().getZooKeeper();
        emit("session", id, System.nanoTime(), "sid", "0x" + Long.toHexString(zk.getSessionId()));
        switch (recipe) {
            case "selector":
                p.selector = new LeaderSelector(p.client, path, new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        p.start();
                        try {
                            p.leave.await();
                        } catch (InterruptedException e) {
                            p.end("interrupted");
                            throw e;
                        }
                    }
                });
                p.selector.setId(id);
                p.selector.autoRequeue();
                p.selector.start();
                break;
            case "latch":
                p.latch = new LeaderLatch(p.client, path, id);
                p.latch.addListener(new LeaderLatchListener() {
                    public void isLeader() {
                        p.start();
                    }

                    public void notLeader() {
                        p.end("notLeader");
                    }
                });
                p.latch.start();
                break;
            default:
                throw new IllegalArgumentException("unknown recipe " + recipe);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, Part> parts = new ConcurrentHashMap<>();
        List<Thread> closers = new ArrayList<>();
        emit("ready", "", System.nanoTime(), "pid", String.valueOf(ProcessHandle.current().pid()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            try {
                switch (f[0]) {
                    case "clock":
                        emit("clock", "", System.nanoTime());
                        break;
                    case "join": {
                        final Part p = new Part(f[1]);
                        final String[] a = f;
                        parts.put(p.id, p);
                        Thread t = new Thread(() -> { // joins run side by side
                            try {
                                join(p, a[2], a[3], a[4], Integer.parseInt(a[5]));
                            } catch (Exception e) {
                                emit("error", p.id, System.nanoTime(), "msg", String.valueOf(e));
                            }
                        });
                        t.start();
                        closers.add(t);
                        break;
                    }
                    case "leave":
                    case "close": {
                        final Part p = parts.remove(f[1]);
                        if (p == null) {
                            emit("error", f[1], System.nanoTime(), "msg", "unknown participant");
                            break;
                        }
                        final boolean leave = f[0].equals("leave");
                        Thread t = new Thread(() -> {
                            if (leave) {
                                p.end("leave");
                            } else {
                                p.leading.set(false);
                            }
                            p.close();
                            emit(leave ? "left" : "closed", p.id, System.nanoTime());
                        });
                        t.start();
                        closers.add(t);
                        break;
                    }
                    case "quit":
                        for (Thread t : closers) {
                            t.join();
                        }
                        for (Part p : parts.values()) {
                            p.close();
                        }
                        return;
                    default:
                        emit("error", "", System.nanoTime(), "msg", "unknown command " + f[0]);
                }
            } catch (RuntimeException e) {
                emit("error", "", System.nanoTime(), "msg", String.valueOf(e));
            }
        }
        for (Part p : parts.values()) {
            p.close();
        }
    }
}
