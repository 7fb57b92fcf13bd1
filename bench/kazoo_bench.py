"""Benchmark driver for kazoo 2 locks, run by zklock's bench package.

Usage: kazoo_bench.py CONNECT SESSION_TIMEOUT_MS. Prints "ready VERSION"
(the kazoo release it imported), then reads
one command per line and answers each with one JSON line, exactly like
java/CuratorBench.java:

  uncontended RECIPE CONNECT PATH WARM_MS DUR_MS
  contended RECIPE CONNECT PATH SESSIONS THREADS DUR_MS   (client i on the
      i-th, mod n, server of the comma-separated CONNECT)
  herd_prepare RECIPE CONNECT PATH N
  herd_go
  herd_close

RECIPE is lock (kazoo's Lock). Timed answers are
{"ops":N,"elapsed_ns":E,"lat_ns":[...]}; failures are {"error":"..."}.
"""

import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.version import __version__ as kazoo_version

TIMEOUT = float(sys.argv[2]) / 1000.0 if len(sys.argv) > 2 else 10.0
now = time.monotonic_ns


def open_client(hosts):
    c = KazooClient(hosts=hosts, timeout=TIMEOUT)
    c.start(timeout=30)
    return c


def make(recipe, client, path):
    if recipe != "lock":
        raise ValueError("unknown recipe " + recipe)
    return client.Lock(path, "bench")


def timed(ops, elapsed, lat):
    return {"ops": ops, "elapsed_ns": elapsed, "lat_ns": lat}


def uncontended(main, recipe, path, warm_ms, dur_ms):
    lock = make(recipe, main, path)
    warm_end = now() + warm_ms * 1000000
    while now() < warm_end:
        lock.acquire()
        lock.release()
    lat = []
    start = now()
    end = start + dur_ms * 1000000
    while True:
        t0 = now()
        lock.acquire()
        lock.release()
        t1 = now()
        lat.append(t1 - t0)
        if t1 >= end:
            break
    return timed(len(lat), t1 - start, lat)


def contended(hosts, recipe, path, sessions, threads, dur_ms):
    servers = hosts.split(",")
    clients = [open_client(servers[i % len(servers)]) for i in range(sessions)]
    try:
        first = make(recipe, clients[0], path)
        first.acquire()
        first.release()
        go = threading.Event()
        lats, errors = [], []
        mu = threading.Lock()
        end = [0]

        def work(lock):
            mine = []
            try:
                go.wait()
                while True:
                    t0 = now()
                    lock.acquire()
                    t1 = now()
                    lock.release()
                    if t1 > end[0]:
                        break
                    mine.append(t1 - t0)
            except Exception as e:  # reported to the Go side
                with mu:
                    errors.append(repr(e))
            with mu:
                lats.extend(mine)

        ts = [threading.Thread(target=work, args=(make(recipe, clients[i % sessions], path),))
              for i in range(threads)]
        for t in ts:
            t.start()
        end[0] = now() + dur_ms * 1000000
        go.set()
        for t in ts:
            t.join()
        if errors:
            raise RuntimeError(errors[0])
        return timed(len(lats), dur_ms * 1000000, lats)
    finally:
        for c in clients:
            c.stop()
            c.close()


class Herd:
    def __init__(self):
        self.client = None
        self.holder = None
        self.threads = []
        self.errors = []

    def prepare(self, recipe, hosts, path, n):
        self.errors = []
        self.client = open_client(hosts)
        self.holder = make(recipe, self.client, path)
        self.holder.acquire()
        self.threads = []

        def wait(lock):
            try:
                lock.acquire()
                lock.release()
            except Exception as e:  # reported to the Go side
                self.errors.append(repr(e))

        for _ in range(n):
            t = threading.Thread(target=wait, args=(make(recipe, self.client, path),))
            t.start()
            self.threads.append(t)
        return {"ok": True}

    def go(self):
        start = now()
        self.holder.release()
        for t in self.threads:
            t.join()
        elapsed = now() - start
        if self.errors:
            raise RuntimeError(self.errors[0])
        return {"elapsed_ns": elapsed}

    def close(self):
        if self.client is not None:
            self.client.stop()
            self.client.close()
            self.client = None
        for t in self.threads:
            t.join(10)
        self.threads = []
        return {"ok": True}


def main():
    hosts = sys.argv[1]
    main_client = open_client(hosts)
    herd = Herd()
    print("ready", kazoo_version, flush=True)
    for line in sys.stdin:
        a = line.split()
        if not a:
            continue
        if a[0] == "quit":
            break
        try:
            if a[0] == "uncontended":
                if a[2] == hosts:
                    reply = uncontended(main_client, a[1], a[3], int(a[4]), int(a[5]))
                else:
                    other = open_client(a[2])
                    try:
                        reply = uncontended(other, a[1], a[3], int(a[4]), int(a[5]))
                    finally:
                        other.stop()
                        other.close()
            elif a[0] == "contended":
                reply = contended(a[2], a[1], a[3], int(a[4]), int(a[5]), int(a[6]))
            elif a[0] == "herd_prepare":
                reply = herd.prepare(a[1], a[2], a[3], int(a[4]))
            elif a[0] == "herd_go":
                reply = herd.go()
            elif a[0] == "herd_close":
                reply = herd.close()
            else:
                raise ValueError("unknown command " + a[0])
        except Exception as e:  # one JSON error line per failed command
            reply = {"error": repr(e)}
        print(json.dumps(reply), flush=True)
    herd.close()
    main_client.stop()
    main_client.close()


if __name__ == "__main__":
    main()
