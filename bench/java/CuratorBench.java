import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Benchmark driver for Curator 5 locks, run by zklock's bench package.
 *
 * Usage: CuratorBench CONNECT SESSION_TIMEOUT_MS. Prints "ready", then reads
 * one command per line and answers each with one JSON line:
 *
 *   uncontended RECIPE CONNECT PATH WARM_MS DUR_MS   one client, acquire+release cycles
 *   contended RECIPE CONNECT PATH SESSIONS THREADS DUR_MS  THREADS threads over SESSIONS clients,
 *                                                client i connected to the i-th (mod n) server of CONNECT
 *   herd_prepare RECIPE CONNECT PATH N           a holder and N waiting threads on one client
 *   herd_go                                      release; answer when every waiter had the lock
 *   herd_close                                   close the herd client
 *
 * RECIPE is mutex (InterProcessMutex), rwwrite (the write half of an
 * InterProcessReadWriteLock) or semmutex (InterProcessSemaphoreMutex). Timed
 * answers are {"ops":N,"elapsed_ns":E,"lat_ns":[...]}; failures are
 * {"error":"..."}.
 */
public final class CuratorBench {
    private static String connect;
    private static int sessionTimeoutMs;
    private static CuratorFramework main;

    private static CuratorFramework herdClient;
    private static InterProcessLock herdHolder;
    private static List<Thread> herdThreads;
    private static final AtomicReference<Throwable> herdError = new AtomicReference<>();

    static CuratorFramework open(String where) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(where)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 6))
                .build();
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("cannot connect to " + where);
        }
        return c;
    }

    static InterProcessLock make(String recipe, CuratorFramework c, String path) {
        switch (recipe) {
            case "mutex":
                return new InterProcessMutex(c, path);
            case "rwwrite":
                return new InterProcessReadWriteLock(c, path).writeLock();
            case "semmutex":
                return new InterProcessSemaphoreMutex(c, path);
            default:
                throw new IllegalArgumentException("unknown recipe " + recipe);
        }
    }

    static String timed(long ops, long elapsedNs, long[] lat, int n) {
        StringBuilder b = new StringBuilder(32 + n * 9);
        b.append("{\"ops\":").append(ops).append(",\"elapsed_ns\":").append(elapsedNs).append(",\"lat_ns\":[");
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(lat[i]);
        }
        return b.append("]}").toString();
    }

    static String uncontended(String recipe, String where, String path, long warmMs, long durMs) throws Exception {
        if (!where.equals(connect)) {
            CuratorFramework c = open(where);
            try {
                return uncontended(recipe, c, path, warmMs, durMs);
            } finally {
                c.close();
            }
        }
        return uncontended(recipe, main, path, warmMs, durMs);
    }

    static String uncontended(String recipe, CuratorFramework client, String path, long warmMs, long durMs)
            throws Exception {
        InterProcessLock l = make(recipe, client, path);
        long warmEnd = System.nanoTime() + warmMs * 1_000_000L;
        while (System.nanoTime() < warmEnd) {
            l.acquire();
            l.release();
        }
        long[] lat = new long[1 << 16];
        int n = 0;
        long start = System.nanoTime();
        long end = start + durMs * 1_000_000L;
        long t1;
        do {
            long t0 = System.nanoTime();
            l.acquire();
            l.release();
            t1 = System.nanoTime();
            if (n == lat.length) {
                lat = java.util.Arrays.copyOf(lat, n * 2);
            }
            lat[n++] = t1 - t0;
        } while (t1 < end);
        return timed(n, t1 - start, lat, n);
    }

    static String contended(String recipe, String where, String path, int sessions, int threads, long durMs)
            throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            String[] servers = where.split(",");
            for (int i = 0; i < sessions; i++) {
                clients.add(open(servers[i % servers.length]));
            }
            InterProcessLock first = make(recipe, clients.get(0), path);
            first.acquire();
            first.release();
            CountDownLatch go = new CountDownLatch(1);
            long[][] lats = new long[threads][];
            int[] counts = new int[threads];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] endHolder = new long[1];
            List<Thread> ts = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                final int me = i;
                final InterProcessLock l = make(recipe, clients.get(i % sessions), path);
                Thread t = new Thread(() -> {
                    long[] lat = new long[1024];
                    int n = 0;
                    try {
                        go.await();
                        long end = endHolder[0];
                        while (true) {
                            long t0 = System.nanoTime();
                            l.acquire();
                            long t1 = System.nanoTime();
                            l.release();
                            if (t1 > end) {
                                break;
                            }
                            if (n == lat.length) {
                                lat = java.util.Arrays.copyOf(lat, n * 2);
                            }
                            lat[n++] = t1 - t0;
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                    lats[me] = lat;
                    counts[me] = n;
                });
                ts.add(t);
                t.start();
            }
            endHolder[0] = System.nanoTime() + durMs * 1_000_000L;
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
            if (failure.get() != null) {
                throw new RuntimeException(failure.get());
            }
            int total = 0;
            for (int c : counts) {
                total += c;
            }
            long[] all = new long[total];
            int k = 0;
            for (int i = 0; i < threads; i++) {
                System.arraycopy(lats[i], 0, all, k, counts[i]);
                k += counts[i];
            }
            return timed(total, durMs * 1_000_000L, all, total);
        } finally {
            for (CuratorFramework c : clients) {
                c.close();
            }
        }
    }

    static String herdPrepare(String recipe, String where, String path, int n) throws Exception {
        herdError.set(null);
        herdClient = open(where);
        herdHolder = make(recipe, herdClient, path);
        herdHolder.acquire();
        herdThreads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final InterProcessLock l = make(recipe, herdClient, path);
            Thread t = new Thread(null, () -> {
                try {
                    l.acquire();
                    l.release();
                } catch (Throwable e) {
                    herdError.compareAndSet(null, e);
                }
            }, "waiter-" + i, 256 << 10);
            herdThreads.add(t);
            t.start();
        }
        return "{\"ok\":true}";
    }

    static String herdGo() throws Exception {
        long start = System.nanoTime();
        herdHolder.release();
        for (Thread t : herdThreads) {
            t.join();
        }
        long elapsed = System.nanoTime() - start;
        if (herdError.get() != null) {
            throw new RuntimeException(herdError.get());
        }
        return "{\"elapsed_ns\":" + elapsed + "}";
    }

    static String herdClose() throws Exception {
        if (herdClient != null) {
            herdClient.close();
            herdClient = null;
        }
        if (herdThreads != null) {
            for (Thread t : herdThreads) {
                t.join(10000);
            }
            herdThreads = null;
        }
        return "{\"ok\":true}";
    }

    static String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "uncontended":
                return uncontended(a[1], a[2], a[3], Long.parseLong(a[4]), Long.parseLong(a[5]));
            case "contended":
                return contended(a[1], a[2], a[3], Integer.parseInt(a[4]), Integer.parseInt(a[5]),
                        Long.parseLong(a[6]));
            case "herd_prepare":
                return herdPrepare(a[1], a[2], a[3], Integer.parseInt(a[4]));
            case "herd_go":
                return herdGo();
            case "herd_close":
                return herdClose();
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(' ');
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: CuratorBench CONNECT SESSION_TIMEOUT_MS");
            System.exit(2);
        }
        connect = args[0];
        sessionTimeoutMs = Integer.parseInt(args[1]);
        main = open(connect);
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            if (line.equals("quit")) {
                break;
            }
            String reply;
            try {
                reply = handle(line.split("\\s+"));
            } catch (Throwable e) {
                Throwable c = e;
                while (c.getCause() != null && c.getMessage() == null) {
                    c = c.getCause();
                }
                reply = "{\"error\":" + quote(c.toString()) + "}";
            }
            System.out.println(reply);
            System.out.flush();
        }
        herdClose();
        main.close();
    }
}
