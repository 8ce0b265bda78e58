# SPDX-License-Identifier: Apache-2.0
"""Issue 32's API findings, each against a fresh `skiff run --api-sock`
(no KVM needed, no guest booted): run(skiff, check) runs them all and
reports each with check(ok, what)."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time


class Skiff:
    """A skiff waiting unconfigured on its API socket, in its own directory."""

    def __init__(self, skiff, extra=(), sock=None):
        self.tmp = tempfile.mkdtemp(prefix="skiff-i32-")
        self.sock = sock or os.path.join(self.tmp, "api.sock")
        self.errpath = os.path.join(self.tmp, "stderr")
        self.err = open(self.errpath, "w+")
        self.proc = subprocess.Popen([skiff, "run", "--api-sock", self.sock, *extra],
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(200):
            if self.proc.poll() is not None:
                break
            try:
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(self.sock)
                break
            except OSError:
                time.sleep(0.02)

    def path(self, name, size=None):
        p = os.path.join(self.tmp, name)
        if size is not None:
            with open(p, "wb") as f:
                f.truncate(size)
        return p

    def request(self, method, path, body=None, raw=None, timeout=5.0):
        """One request on a fresh connection: (status, headers, json or None)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if data or method in ("PUT", "PATCH"):
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.sock)
        s.sendall(head.encode() + b"\r\n" + data)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        s.close()
        hdr, _, text = out.partition(b"\r\n\r\n")
        lines = hdr.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.strip().lower(): v.strip()
                   for k, _, v in (l.partition(":") for l in lines[1:])}
        return status, headers, (json.loads(text) if text else None)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def fault(resp):
    return resp.get("fault_message", "") if isinstance(resp, dict) else ""


def refused(sk, method, path, raw, words):
    status, _, resp = sk.request(method, path, raw=raw)
    return status == 400 and words in fault(resp), f"{status} {fault(resp)}"


def test_json_strict(sk, check):
    """Issue 32.3: duplicate keys, NUL, invalid UTF-8 and lone surrogates
    are refused with 400 and a fault_message (serde refuses them)."""
    k = sk.path("k", 4096)
    cases = (
        (b'{"vcpu_count": 1, "mem_size_mib": 128, "vcpu_count": 2}',
         "/machine-config", "duplicate field `vcpu_count`"),
        (b'{"kernel_image_path": "%s", "boot_args": "a", "boot_args": "b"}' % k.encode(),
         "/boot-source", "duplicate field `boot_args`"),
        (b'{"kernel_image_path": "%s\\u0000x"}' % k.encode(), "/boot-source",
         "string contains NUL"),
        (b'{"kernel_image_path": "%s", "boot_args": "\xff"}' % k.encode(), "/boot-source",
         "invalid unicode code point"),
        (b'{"kernel_image_path": "%s", "boot_args": "\\ud83d"}' % k.encode(), "/boot-source",
         "lone leading surrogate"),
        (b'{"kernel_image_path": "%s", "boot_args": "\\ude00"}' % k.encode(), "/boot-source",
         "lone trailing surrogate"),
    )
    for raw, path, words in cases:
        ok, got = refused(sk, "PUT", path, raw, words)
        check(ok, f"issue 32 JSON: {raw[:60]!r} -> 400 {words!r} ({got})")
    status, _, cfg = sk.request("GET", "/vm/config")
    check(status == 200 and "boot-source" not in cfg, "issue 32 JSON: nothing refused was stored")


def test_second_skiff(sk, check, skiff):
    """Issue 32.3: a second skiff given a live API socket refuses to start
    (one line, exit 2) and leaves the first one's socket alone; a stale
    socket file is replaced."""
    r = subprocess.run([skiff, "run", "--api-sock", sk.sock], capture_output=True, text=True,
                       timeout=20)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and "in use" in r.stderr,
          f"issue 32 socket: a second skiff exits 2 with one line ({r.returncode}: {r.stderr!r})")
    status, _, info = sk.request("GET", "/")
    check(os.path.exists(sk.sock) and status == 200 and info.get("state") == "Not started",
          "issue 32 socket: the first skiff still answers on its socket")
    sk.proc.kill()  # dies without removing its socket file: stale
    sk.proc.wait()
    check(os.path.exists(sk.sock), "issue 32 socket: a killed skiff leaves a stale socket file")
    with Skiff(skiff, sock=sk.sock) as third:
        status, _, _ = third.request("GET", "/")
        check(third.proc.poll() is None and status == 200,
              "issue 32 socket: a stale socket file is replaced")


def test_slow_clients(sk, check):
    """Issue 32.3: 16 clients that send a byte at a time cannot hold every
    connection slot: a client that sends its request at once is still
    answered, within a second; one that never reads its replies is let go
    and does not hold the others up."""
    import threading
    stop = threading.Event()
    req = b"PUT /machine-config HTTP/1.1\r\nContent-Length: 40\r\n\r\n" + b"x" * 40

    def trickle():
        c = None
        for b in req:
            if stop.is_set():
                break
            try:
                if c is None:  # (again when evicted, as an attacker would)
                    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    c.connect(sk.sock)
                c.send(bytes([b]))
            except OSError:
                c.close()
                c = None
            stop.wait(0.05)
        if c:
            c.close()

    threads = [threading.Thread(target=trickle) for _ in range(16)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # every slot is held mid-request now
    answered = 0
    for _ in range(5):
        t0 = time.monotonic()
        try:
            status, _, _ = sk.request("GET", "/", timeout=3)
        except (OSError, IndexError, ValueError):
            status = None
        answered += status == 200 and time.monotonic() - t0 < 1
    # A client that pipelines requests and never reads what comes back.
    deaf = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deaf.connect(sk.sock)
    deaf.setblocking(False)
    try:
        for _ in range(4000):
            deaf.send(b"GET /vm/config HTTP/1.1\r\nHost: x\r\n\r\n")
    except OSError:
        pass
    t0 = time.monotonic()
    try:
        status, _, _ = sk.request("GET", "/", timeout=3)
    except (OSError, IndexError, ValueError):
        status = None
    check(status == 200 and time.monotonic() - t0 < 1,
          "issue 32 slots: a client that never reads does not hold the API up")
    deaf.close()
    stop.set()
    for t in threads:
        t.join()
    check(answered == 5, f"issue 32 slots: answered {answered}/5 times within a second while "
          "16 clients send a byte at a time")


def test_typed_values(sk, check):
    """Issue 32.3: a path or tap name with a comma in it is taken
    literally, never pasted into a key=value option string."""
    disk = sk.path("disk,colour=blue,direct", 1 << 20)
    status, _, resp = sk.request("PUT", "/drives/rootfs", {
        "drive_id": "rootfs", "path_on_host": disk, "is_root_device": True,
        "is_read_only": True})
    check(status == 204, f"issue 32 typed: a path with commas is one path ({status} {fault(resp)})")
    status, _, resp = sk.request("PUT", "/network-interfaces/eth0", {
        "iface_id": "eth0", "host_dev_name": "t,vhost=on"})
    check(status == 204, f"issue 32 typed: a tap name with a comma is one name "
          f"({status} {fault(resp)})")
    status, _, cfg = sk.request("GET", "/vm/config")
    check(cfg["drives"][0]["path_on_host"] == disk
          and cfg["network-interfaces"][0]["host_dev_name"] == "t,vhost=on",
          "issue 32 typed: GET /vm/config shows them as given")
    # skiff_options stay key=value: a path in them is still refused.
    status, _, resp = sk.request("PUT", "/drives/data", {
        "drive_id": "data", "path_on_host": disk, "is_root_device": False,
        "is_read_only": True, "skiff_options": "path=/etc/passwd"})
    check(status == 400, f"issue 32 typed: skiff_options cannot name the path ({fault(resp)})")


TESTS = [test_json_strict, test_second_skiff, test_slow_clients, test_typed_values]


def run(skiff, check):
    for t in TESTS:
        with Skiff(skiff) as sk:
            try:
                if "skiff" in t.__code__.co_varnames[:t.__code__.co_argcount]:
                    t(sk, check, skiff)
                else:
                    t(sk, check)
            except Exception as e:  # a test that breaks is a failure
                check(False, f"{t.__name__} stopped: {e!r}")
