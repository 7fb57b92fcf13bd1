"""A kazoo 2.8 test peer driven by a line protocol (see peers.go).

Usage: python3 kazoo_peer.py CONNECT_STRING SESSION_TIMEOUT_MS

One command per line on stdin; one reply per command on stdout ("ok [TEXT]" or
"err MESSAGE"), in order; asynchronous happenings are "event NAME KIND [ARG]".
Each acquire runs on its own thread so the command loop stays responsive.
The lock identifier (node data, what contenders() lists) is the object NAME.
"""

import json
import os
import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

_out = threading.Lock()
_closing = False


def emit(line):
    with _out:
        if _closing and line.startswith("event "):
            return
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def describe(exc):
    text = type(exc).__name__
    if str(exc):
        text += ": " + str(exc)
    return " ".join(text.split())


class Peer:
    def __init__(self, client):
        self.client = client
        self.locks = {}     # NAME -> kazoo lock
        self.acquiring = set()  # NAMEs with an acquire whose outcome is not reported yet

    def lock_of(self, name):
        if name not in self.locks:
            raise ValueError("no lock named " + name)
        return self.locks[name]

    def new_lock(self, factory, args, usage):
        if len(args) not in (2, 3):
            raise ValueError("usage: " + usage)
        name, path = args[0], args[1]
        if name in self.locks:
            raise ValueError("name %s already in use" % name)
        extra = ()
        if len(args) == 3 and args[2] != "-":
            extra = tuple(args[2].split(","))
        self.locks[name] = factory(path, name, extra_lock_patterns=extra)
        return ""

    def cmd_lock(self, args):
        return self.new_lock(self.client.Lock, args, "lock NAME PATH [EXTRA_PATTERNS]")

    def cmd_readlock(self, args):
        return self.new_lock(self.client.ReadLock, args, "readlock NAME PATH [EXTRA_PATTERNS]")

    def cmd_writelock(self, args):
        return self.new_lock(self.client.WriteLock, args, "writelock NAME PATH [EXTRA_PATTERNS]")

    def cmd_acquire(self, args):
        if len(args) not in (1, 2):
            raise ValueError("usage: acquire NAME [TIMEOUT_MS]")
        name = args[0]
        lock = self.lock_of(name)
        timeout = int(args[1]) / 1000.0 if len(args) == 2 else None
        if name in self.acquiring:
            raise RuntimeError("acquire already in progress")

        def run():
            try:
                got = lock.acquire(timeout=timeout)
            except LockTimeout:
                got = False
            except Exception as exc:  # reported, never raised
                self.acquiring.discard(name)
                emit("event %s error %s" % (name, describe(exc)))
                return
            self.acquiring.discard(name)  # before the event: the caller may release at once
            if not got:
                emit("event %s timeout" % name)
            elif lock.node:
                emit("event %s acquired %s/%s" % (name, lock.path, lock.node))
            else:
                emit("event %s acquired" % name)

        self.acquiring.add(name)
        threading.Thread(target=run, name="acquire-" + name, daemon=True).start()
        return ""

    def cmd_release(self, args):
        if len(args) != 1:
            raise ValueError("usage: release NAME")
        if args[0] in self.acquiring:
            raise RuntimeError("acquire in progress")
        if not self.lock_of(args[0]).release():
            raise RuntimeError("not acquired")
        return ""

    def cmd_contenders(self, args):
        if len(args) != 1:
            raise ValueError("usage: contenders NAME")
        # JSON, so that an empty identifier (Curator's node data when the
        # host name does not resolve) still counts as one contender.
        return json.dumps(self.lock_of(args[0]).contenders())

    # Plain znode commands, for an intruder or a locked-down directory.

    def cmd_addauth(self, args):
        if len(args) != 2:
            raise ValueError("usage: addauth SCHEME CRED")
        self.client.add_auth(args[0], args[1])
        return ""

    def cmd_create(self, args):
        if len(args) not in (2, 3):
            raise ValueError("usage: create PATH MODE [ACL]")
        path, mode = args[0], args[1]
        flags = {"persistent": (False, False), "ephemeral": (True, False),
                 "ephseq": (True, True), "seq": (False, True)}
        if mode not in flags:
            raise ValueError("MODE is one of " + ", ".join(sorted(flags)))
        acl = None
        if len(args) == 3:
            acl = [parse_acl(a) for a in args[2].split(",")]
        eph, seq = flags[mode]
        return self.client.create(path, b"intruder", acl=acl, ephemeral=eph, sequence=seq)

    def cmd_delete(self, args):
        if len(args) != 1:
            raise ValueError("usage: delete PATH")
        self.client.delete(args[0])
        return ""

    def cmd_get(self, args):
        if len(args) != 1:
            raise ValueError("usage: get PATH")
        data, _ = self.client.get(args[0])
        return data.decode("utf-8", "replace")

    def cmd_set(self, args):
        if len(args) != 2:
            raise ValueError("usage: set PATH DATA")
        self.client.set(args[0], args[1].encode())
        return ""

    def cmd_children(self, args):
        if len(args) != 1:
            raise ValueError("usage: children PATH")
        return json.dumps(sorted(self.client.get_children(args[0])))


def parse_acl(text):
    """world:anyone:PERMS, auth::PERMS or digest:USER:PASSWORD:PERMS; PERMS
    a string of the letters rwcda."""
    from kazoo.security import ACL, Id, make_digest_acl_credential, Permissions
    parts = text.split(":")
    perms = 0
    for letter, bit in zip("rwcda", (Permissions.READ, Permissions.WRITE, Permissions.CREATE,
                                    Permissions.DELETE, Permissions.ADMIN)):
        if letter in parts[-1]:
            perms |= bit
    if parts[0] == "digest" and len(parts) == 4:
        return ACL(perms, Id("digest", make_digest_acl_credential(parts[1], parts[2])))
    if len(parts) == 3:
        return ACL(perms, Id(parts[0], parts[1]))
    raise ValueError("bad ACL " + text)


def shutdown(client):
    global _closing
    _closing = True
    try:
        client.stop()
        client.close()
    except Exception:  # closing anyway
        pass


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: kazoo_peer.py CONNECT_STRING SESSION_TIMEOUT_MS\n")
        sys.exit(2)
    client = KazooClient(hosts=sys.argv[1], timeout=int(sys.argv[2]) / 1000.0)
    try:
        client.start(timeout=30)
    except Exception as exc:
        sys.stderr.write("kazoo_peer: could not connect to %s: %s\n" % (sys.argv[1], describe(exc)))
        sys.exit(3)
    peer = Peer(client)
    emit("ready")

    while True:
        line = sys.stdin.readline()
        if not line:
            break
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            shutdown(client)
            emit("ok")
            os._exit(0)
        handler = getattr(peer, "cmd_" + words[0], None)
        if handler is None:
            emit("err unknown command " + words[0])
            continue
        try:
            reply = handler(words[1:])
        except Exception as exc:
            emit("err " + describe(exc))
            continue
        emit("ok " + reply if reply else "ok")
    shutdown(client)
    os._exit(0)


if __name__ == "__main__":
    main()
