import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;

/**
 * A Curator 5.4 test peer driven by a line protocol: one command per line on stdin, one line per reply or event
 * on stdout. Replies are "ok [TEXT]" or "err MESSAGE", one per command, in order. Asynchronous happenings are
 * "event NAME KIND [ARG]". The protocol is documented in internal/peers/peers.go.
 *
 * Every lock object runs its acquire/release on its own thread (Curator's mutex ownership is per thread), so the
 * command loop never blocks on a lock. Both halves of one read/write PATH share one thread, so a write holder can
 * take the read half (Curator's downgrade is keyed on the owning thread).
 */
public final class CuratorPeer {
    private static final Object OUT = new Object();
    private static volatile boolean closing;
    private static CuratorFramework client;

    private static final Map<String, Lock> locks = new HashMap<>();
    private static final Map<String, Leader> leaders = new HashMap<>();
    private static final Map<String, RW> rwByPath = new HashMap<>();
    private static final Map<String, Latch> latches = new HashMap<>();

    static void println(String line) {
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    static void event(String name, String what) {
        if (!closing) {
            println("event " + name + " " + what);
        }
    }

    static String describe(Throwable e) {
        while ((e instanceof ExecutionException || e instanceof java.lang.reflect.InvocationTargetException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        String msg = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        return msg.replaceAll("[\\r\\n]+", " ");
    }

    static ExecutorService newThread(String name) {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "peer-" + name);
            t.setDaemon(true);
            return t;
        });
    }

    /** A lock object. acquire and release are only ever called on its thread. */
    abstract static class Lock {
        final String name;
        final ExecutorService thread;
        /** True from "acquire" until just before its outcome event is printed. */
        volatile boolean acquiring;

        Lock(String name, ExecutorService thread) {
            this.name = name;
            this.thread = thread;
        }

        /** Blocks (ms < 0: forever). Returns the node path, "" if unknown, or null on timeout. */
        abstract String acquire(long ms) throws Exception;

        abstract void release() throws Exception;

        Collection<String> participants() throws Exception {
            throw new UnsupportedOperationException("participants not supported by " + getClass().getSimpleName());
        }

        InterProcessMutex revocable() {
            throw new UnsupportedOperationException("revocation not supported by " + getClass().getSimpleName());
        }
    }

    /** InterProcessMutex or one half of an InterProcessReadWriteLock. */
    static final class MutexLock extends Lock {
        private static Method getLockPath;
        final InterProcessMutex m;

        MutexLock(String name, ExecutorService thread, InterProcessMutex m) {
            super(name, thread);
            this.m = m;
        }

        String acquire(long ms) throws Exception {
            if (ms < 0) {
                m.acquire();
            } else if (!m.acquire(ms, TimeUnit.MILLISECONDS)) {
                return null;
            }
            return lockPath(m);
        }

        void release() throws Exception {
            m.release();
        }

        Collection<String> participants() throws Exception {
            return m.getParticipantNodes();
        }

        InterProcessMutex revocable() {
            return m;
        }

        /** InterProcessMutex.getLockPath() is protected in 5.4 and keyed on the calling thread. */
        static String lockPath(InterProcessMutex m) {
            try {
                if (getLockPath == null) {
                    Method g = InterProcessMutex.class.getDeclaredMethod("getLockPath");
                    g.setAccessible(true);
                    getLockPath = g;
                }
                Object p = getLockPath.invoke(m);
                return p == null ? "" : (String) p;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return "";
            }
        }
    }

    static final class SemMutexLock extends Lock {
        final InterProcessSemaphoreMutex m;
        final String path;

        SemMutexLock(String name, String path) {
            super(name, newThread(name));
            this.path = path;
            this.m = new InterProcessSemaphoreMutex(client, path);
        }

        String acquire(long ms) throws Exception {
            if (ms < 0) {
                m.acquire();
            } else if (!m.acquire(ms, TimeUnit.MILLISECONDS)) {
                return null;
            }
            try { // the Lease is a private field in 5.4
                Field f = InterProcessSemaphoreMutex.class.getDeclaredField("lease");
                f.setAccessible(true);
                Lease lease = (Lease) f.get(m);
                return lease == null ? "" : ZKPaths.makePath(path, "leases", lease.getNodeName());
            } catch (ReflectiveOperationException | RuntimeException e) {
                return "";
            }
        }

        void release() throws Exception {
            m.release();
        }
    }

    /** InterProcessSemaphoreV2; each object holds at most one lease. */
    static final class SemaphoreLock extends Lock {
        final InterProcessSemaphoreV2 s;
        final String path;
        Lease lease;

        SemaphoreLock(String name, String path, int leases) {
            super(name, newThread(name));
            this.path = path;
            this.s = new InterProcessSemaphoreV2(client, path, leases);
        }

        String acquire(long ms) throws Exception {
            if (lease != null) {
                throw new IllegalStateException("already holds a lease");
            }
            Lease l = ms < 0 ? s.acquire() : s.acquire(ms, TimeUnit.MILLISECONDS);
            if (l == null) {
                return null;
            }
            lease = l;
            return ZKPaths.makePath(path, "leases", l.getNodeName());
        }

        void release() throws Exception {
            Lease l = lease;
            if (l == null) {
                throw new IllegalStateException("no lease held");
            }
            lease = null;
            l.close();
        }

        Collection<String> participants() throws Exception {
            return s.getParticipantNodes();
        }
    }

    static final class MultiLock extends Lock {
        final InterProcessMultiLock m;

        MultiLock(String name, List<String> paths) {
            super(name, newThread(name));
            this.m = new InterProcessMultiLock(client, paths);
        }

        String acquire(long ms) throws Exception {
            if (ms < 0) {
                m.acquire();
                return "";
            }
            return m.acquire(ms, TimeUnit.MILLISECONDS) ? "" : null;
        }

        void release() throws Exception {
            m.release();
        }
    }

    /** One InterProcessReadWriteLock per PATH, with the thread both halves share. */
    static final class RW {
        final InterProcessReadWriteLock lock;
        final ExecutorService thread;

        RW(String path) {
            lock = new InterProcessReadWriteLock(client, path);
            thread = newThread("rw" + path);
        }
    }

    /** LeaderSelector without autoRequeue: leads once, until resign. */
    static final class Leader extends LeaderSelectorListenerAdapter {
        final String name;
        final LeaderSelector selector;
        final CountDownLatch resign = new CountDownLatch(1);

        Leader(String name, String path, String id) {
            this.name = name;
            selector = new LeaderSelector(client, path, this);
            selector.setId(id);
        }

        public void takeLeadership(CuratorFramework c) throws Exception {
            event(name, "leader");
            try {
                resign.await();
            } finally {
                event(name, "notleader");
            }
        }
    }

    /** LeaderLatch, started; reports isLeader/notLeader as events. */
    static final class Latch implements LeaderLatchListener {
        final String name;
        final LeaderLatch latch;

        Latch(String name, String path, String id) {
            this.name = name;
            latch = new LeaderLatch(client, path, id);
            latch.addListener(this);
        }

        public void isLeader() {
            event(name, "leader " + latch.getOurPath());
        }

        public void notLeader() {
            event(name, "notleader");
        }
    }

    static Latch latch(String name) {
        Latch l = latches.get(name);
        if (l == null) {
            throw new IllegalArgumentException("no leader latch named " + name);
        }
        return l;
    }

    static void need(String[] a, int n, String usage) {
        if (a.length != n) {
            throw new IllegalArgumentException("usage: " + usage);
        }
    }

    static void addLock(Lock l) {
        checkNew(l.name);
        locks.put(l.name, l);
    }

    static void checkNew(String name) {
        if (locks.containsKey(name) || leaders.containsKey(name) || latches.containsKey(name)) {
            throw new IllegalArgumentException("name " + name + " already in use");
        }
    }

    static Lock lock(String name) {
        Lock l = locks.get(name);
        if (l == null) {
            throw new IllegalArgumentException("no lock named " + name);
        }
        return l;
    }

    static Leader leader(String name) {
        Leader l = leaders.get(name);
        if (l == null) {
            throw new IllegalArgumentException("no leader selector named " + name);
        }
        return l;
    }

    /** Runs one command; returns the reply text after "ok", or null for quit. */
    static String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "mutex":
                need(a, 3, "mutex NAME PATH");
                addLock(new MutexLock(a[1], newThread(a[1]), new InterProcessMutex(client, a[2])));
                return "";
            case "rwread":
            case "rwwrite": {
                need(a, 3, a[0] + " NAME PATH");
                checkNew(a[1]);
                RW rw = rwByPath.computeIfAbsent(a[2], RW::new);
                InterProcessMutex half = a[0].equals("rwread") ? rw.lock.readLock() : rw.lock.writeLock();
                addLock(new MutexLock(a[1], rw.thread, half));
                return "";
            }
            case "semmutex":
                need(a, 3, "semmutex NAME PATH");
                checkNew(a[1]);
                addLock(new SemMutexLock(a[1], a[2]));
                return "";
            case "semaphore":
                need(a, 4, "semaphore NAME PATH N");
                checkNew(a[1]);
                addLock(new SemaphoreLock(a[1], a[2], Integer.parseInt(a[3])));
                return "";
            case "multi":
                need(a, 3, "multi NAME PATH1,PATH2,...");
                checkNew(a[1]);
                addLock(new MultiLock(a[1], Arrays.asList(a[2].split(","))));
                return "";
            case "acquire": {
                if (a.length != 2 && a.length != 3) {
                    throw new IllegalArgumentException("usage: acquire NAME [TIMEOUT_MS]");
                }
                Lock l = lock(a[1]);
                long ms = a.length == 3 ? Long.parseLong(a[2]) : -1;
                if (l.acquiring) {
                    throw new IllegalStateException("acquire already in progress");
                }
                l.acquiring = true;
                l.thread.execute(() -> {
                    try {
                        String node = l.acquire(ms);
                        l.acquiring = false; // before the event: the caller may release at once
                        if (node == null) {
                            event(l.name, "timeout");
                        } else {
                            event(l.name, node.isEmpty() ? "acquired" : "acquired " + node);
                        }
                    } catch (Throwable e) {
                        l.acquiring = false;
                        event(l.name, "error " + describe(e));
                    }
                });
                return "";
            }
            case "release": {
                need(a, 2, "release NAME");
                Lock l = lock(a[1]);
                for (Lock other : locks.values()) { // rw halves share a thread
                    if (other.thread == l.thread && other.acquiring) {
                        throw new IllegalStateException("acquire of " + other.name + " in progress on this thread");
                    }
                }
                l.thread.submit(() -> {
                    l.release();
                    return null;
                }).get(20, TimeUnit.SECONDS); // below the Go side's 30s reply timeout
                return "";
            }
            case "revocable": {
                need(a, 2, "revocable NAME");
                String name = a[1];
                lock(name).revocable().makeRevocable(m -> event(name, "revoke-requested"));
                return "";
            }
            case "revoke":
                need(a, 2, "revoke NODE_PATH");
                Revoker.attemptRevoke(client, a[1]);
                return "";
            case "participants": {
                need(a, 2, "participants NAME");
                if (leaders.containsKey(a[1]) || latches.containsKey(a[1])) {
                    List<String> ids = new ArrayList<>();
                    Collection<Participant> ps = leaders.containsKey(a[1])
                            ? leader(a[1]).selector.getParticipants()
                            : latch(a[1]).latch.getParticipants();
                    for (Participant p : ps) {
                        ids.add(p.getId());
                    }
                    return String.join(",", ids);
                }
                return String.join(",", lock(a[1]).participants());
            }
            case "leader": {
                need(a, 4, "leader NAME PATH ID");
                checkNew(a[1]);
                Leader l = new Leader(a[1], a[2], a[3]);
                leaders.put(a[1], l);
                l.selector.start();
                return "";
            }
            case "resign": {
                need(a, 2, "resign NAME");
                Leader l = leader(a[1]);
                if (!l.selector.hasLeadership()) {
                    throw new IllegalStateException(a[1] + " is not the leader");
                }
                l.resign.countDown();
                return "";
            }
            case "leaderid":
                need(a, 2, "leaderid NAME");
                if (latches.containsKey(a[1])) {
                    return latch(a[1]).latch.getLeader().getId();
                }
                return leader(a[1]).selector.getLeader().getId();
            case "latch": {
                need(a, 4, "latch NAME PATH ID");
                checkNew(a[1]);
                Latch l = new Latch(a[1], a[2], a[3]);
                latches.put(a[1], l);
                l.latch.start();
                return "";
            }
            case "haslatch":
                need(a, 2, "haslatch NAME");
                return Boolean.toString(latch(a[1]).latch.hasLeadership());
            case "closelatch": {
                need(a, 2, "closelatch NAME");
                Latch l = latch(a[1]);
                latches.remove(a[1]);
                l.latch.close();
                return "";
            }
            case "where":
                return "curator=" + jarOf(org.apache.curator.framework.CuratorFramework.class)
                        + " zookeeper=" + jarOf(org.apache.zookeeper.ZooKeeper.class)
                        + " zkversion=" + org.apache.zookeeper.Version.getFullVersion().split("[-,]")[0];
            case "quit":
                return null;
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    /** The jar a class was loaded from. */
    static String jarOf(Class<?> c) {
        return c.getProtectionDomain().getCodeSource().getLocation().getPath();
    }

    static void shutdown() {
        closing = true;
        for (Leader l : leaders.values()) {
            try {
                l.selector.close();
            } catch (RuntimeException e) {
                // closing anyway
            }
        }
        for (Latch l : latches.values()) {
            try {
                l.latch.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
        client.close();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: CuratorPeer CONNECT_STRING SESSION_TIMEOUT_MS [NAMESPACE]");
            System.exit(2);
        }
        client = CuratorFrameworkFactory.builder()
                .namespace(args.length == 3 ? args[2] : null)
                .connectString(args[0])
                .sessionTimeoutMs(Integer.parseInt(args[1]))
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 6))
                .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            System.err.println("CuratorPeer: could not connect to " + args[0]);
            System.exit(3);
        }
        println("ready");

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String reply;
            try {
                reply = handle(line.split("\\s+"));
            } catch (Throwable e) {
                println("err " + describe(e));
                continue;
            }
            if (reply == null) {
                shutdown();
                println("ok");
                System.exit(0);
            }
            println(reply.isEmpty() ? "ok" : "ok " + reply);
        }
        shutdown();
        System.exit(0);
    }
}
