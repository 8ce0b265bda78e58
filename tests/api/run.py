#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The API tests (no KVM needed): start `skiff run --api-sock` unconfigured,
exercise every endpoint and the bad requests, and check every request and
response against Firecracker's OpenAPI description (validate.py). skiff
must stay up and unharmed throughout. Prints one line per check and
"api: N passed, N failed"."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from validate import Spec, body_json
import fc_test_api
import issue32
import snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "firecracker-v1.16.1.yaml")
# Endpoints of skiff's own, not in Firecracker's description.
SKIFF_ONLY = ("/stats", "/skiff/vfio/")

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=10)
        self.sock_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.sock_path)


class Api:
    def __init__(self, sock, spec):
        self.sock, self.spec = sock, spec
        self.conn = UnixConnection(sock)
        self.exchanges = 0

    def call(self, method, path, body=None, raw=None, valid_request=True):
        """One request on the kept-alive connection; validated. (status, json)"""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        text = r.read()
        try:
            resp = body_json(text) if not path.startswith("/stats") else None
        except ValueError:
            check(False, f"{method} {path}: response is not JSON: {text[:80]!r}")
            return r.status, None
        self.exchanges += 1
        if not path.startswith(SKIFF_ONLY):
            errs = []
            if valid_request:
                errs += self.spec.request_errors(method, path, body)
            errs += self.spec.response_errors(method, path, r.status, resp)
            for e in errs:
                check(False, f"conformance: {e}")
        return r.status, (text.decode() if path.startswith("/stats") else resp)


def expect(api, method, path, body, status, fault=None, valid=True, raw=None):
    got, resp = api.call(method, path, body, raw=raw, valid_request=valid)
    msg = resp.get("fault_message", "") if isinstance(resp, dict) else ""
    ok = got == status and (fault is None or fault in msg)
    check(ok, f"{method} {path} -> {got} (want {status}{', ' + repr(fault) if fault else ''})"
          + (f": {msg}" if msg and not ok else ""))
    return resp


def raw_exchange(sock_path, data, timeout=5.0):
    """Sends bytes on a fresh connection, returns what came back before close."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


def status_of(reply):
    try:
        return int(reply.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def main():
    skiff = sys.argv[1] if len(sys.argv) > 1 else "build/skiff"
    spec = Spec(SPEC)
    tmp = tempfile.mkdtemp(prefix="skiff-api-")
    sock = os.path.join(tmp, "api.sock")
    kernel = os.path.join(tmp, "vmlinux")  # not a bzImage: InstanceStart fails cleanly
    with open(kernel, "wb") as f:
        f.write(b"\0" * 4096)
    disk = os.path.join(tmp, "disk.img")
    with open(disk, "wb") as f:
        f.truncate(1 << 20)
    metrics = os.path.join(tmp, "metrics.json")
    log = os.path.join(tmp, "skiff.log")
    errlog = open(os.path.join(tmp, "stderr"), "w+")
    # stdout too: a skiff left behind must not hold the caller's pipe open.
    proc = subprocess.Popen([skiff, "run", "--api-sock", sock], stdout=subprocess.DEVNULL,
                            stderr=errlog)
    try:
        issue32.run(skiff, check)
        fc_test_api.run(skiff, check)
        snapshot.run(skiff, check)
        return exercise(skiff, spec, tmp, sock, kernel, disk, metrics, log, errlog, proc)
    except Exception as e:  # a test that breaks is a failure, and skiff goes
        check(False, f"the tests stopped: {e!r}")
        print(f"api: {passed} passed, {failed} failed")
        return 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def exercise(skiff, spec, tmp, sock, kernel, disk, metrics, log, errlog, proc):
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    check(os.path.exists(sock), "skiff run --api-sock waits unconfigured")
    api = Api(sock, spec)

    # The getting-started sequence, up to InstanceStart.
    info = expect(api, "GET", "/", None, 200)
    check(info and info.get("state") == "Not started", "GET / says Not started")
    expect(api, "GET", "/version", None, 200)
    expect(api, "PUT", "/actions", {"action_type": "InstanceStart"}, 400,
           "Start microvm error: Cannot start microvm without kernel configuration.")
    expect(api, "PUT", "/logger", {"log_path": log, "level": "Info", "show_level": True}, 204)
    expect(api, "PUT", "/metrics", {"metrics_path": metrics}, 204)
    expect(api, "PUT", "/metrics", {"metrics_path": metrics}, 400, "Reinitialization")
    expect(api, "PUT", "/boot-source",
           {"kernel_image_path": kernel, "boot_args": "console=ttyS0 reboot=k panic=1 pci=off"}, 204)
    expect(api, "PUT", "/drives/rootfs", {"drive_id": "rootfs", "path_on_host": disk,
                                          "is_root_device": True, "is_read_only": False}, 204)
    limiter = {"bandwidth": {"size": 1048576, "one_time_burst": 4096, "refill_time": 100},
               "ops": {"size": 100, "refill_time": 1000}}
    expect(api, "PUT", "/drives/data", {"drive_id": "data", "path_on_host": disk,
                                        "is_root_device": False, "is_read_only": True,
                                        "io_engine": "Async", "rate_limiter": limiter,
                                        "skiff_options": "poll=adaptive"}, 204)
    expect(api, "PUT", "/drives/second_root", {"drive_id": "second_root", "path_on_host": disk,
                                               "is_root_device": True, "is_read_only": True},
           400, "A root block device already exists!")
    expect(api, "PUT", "/network-interfaces/eth0", {"iface_id": "eth0", "host_dev_name": "tap0",
                                                    "guest_mac": "06:00:AC:10:00:02",
                                                    "tx_rate_limiter": {"ops": {"size": 10,
                                                                                "refill_time": 1}}},
           204)
    expect(api, "PUT", "/network-interfaces/eth1", {"iface_id": "eth1", "host_dev_name": "tap1",
                                                    "guest_mac": "06:00:ac:10:00:02"},
           400, "The MAC address is already in use")
    # The entropy device: Firecracker's body, the rate limiter optional; a
    # second PUT replaces the first. (After the start it is refused: the
    # unit test test_api's test_entropy, since no VM starts here.)
    expect(api, "PUT", "/entropy", {}, 204)
    rng_limiter = {"bandwidth": {"size": 1000, "one_time_burst": 0, "refill_time": 100}}
    expect(api, "PUT", "/entropy", {"rate_limiter": rng_limiter}, 204)
    expect(api, "PUT", "/entropy", {"rate_limiter": rng_limiter, "frob": 1}, 400,
           "unknown field `frob`, expected `rate_limiter`", valid=False)
    expect(api, "PUT", "/entropy", {"rate_limiter": {"bandwidth": {"size": 1}}}, 400,
           "missing field `refill_time`", valid=False)
    expect(api, "GET", "/entropy", None, 400, "Invalid request method and/or path", valid=False)
    # The balloon (issue 33.3): Firecracker's Balloon body; more than the
    # guest's memory refused; PATCH and statistics only after the start (the
    # running device: the testbed's balloon scenario).
    expect(api, "GET", "/balloon", None, 400, "No balloon device found")
    expect(api, "PUT", "/balloon", {"amount_mib": 4096, "deflate_on_oom": False}, 400,
           "Amount of pages requested is too large.")
    expect(api, "PUT", "/balloon", {"amount_mib": 16}, 400, "missing field `deflate_on_oom`",
           valid=False)
    expect(api, "PUT", "/balloon", {"amount_mib": 16, "deflate_on_oom": True, "frob": 1}, 400,
           "unknown field `frob`", valid=False)
    balloon = {"amount_mib": 16, "deflate_on_oom": True, "stats_polling_interval_s": 1}
    expect(api, "PUT", "/balloon", balloon, 204)
    got = expect(api, "GET", "/balloon", None, 200)
    check(got and got["amount_mib"] == 16 and got["deflate_on_oom"] is True
          and got["stats_polling_interval_s"] == 1, "GET /balloon shows the PUT")
    expect(api, "PATCH", "/balloon", {"amount_mib": 8}, 400, "not supported before starting")
    expect(api, "GET", "/balloon/statistics", None, 400, "not supported before starting")
    expect(api, "PATCH", "/balloon/statistics", {"stats_polling_interval_s": 2}, 400,
           "not supported before starting")
    # The vsock (issue 33.1): Firecracker's Vsock body (vsock_id taken and
    # dropped), the CID and the path checked by --vsock's table before any
    # VM; a second PUT replaces the first.
    vsock = {"guest_cid": 3, "uds_path": os.path.join(tmp, "v.sock")}
    expect(api, "PUT", "/vsock", {"guest_cid": 3}, 400, "missing field `uds_path`", valid=False)
    expect(api, "PUT", "/vsock", {**vsock, "guest_cid": "3"}, 400,
           "invalid type: string, expected u32", valid=False)
    expect(api, "PUT", "/vsock", {**vsock, "frob": 1}, 400, "unknown field `frob`", valid=False)
    expect(api, "PUT", "/vsock", {**vsock, "guest_cid": 2}, 400,
           "Cannot create backend for vsock device: ", valid=False)
    expect(api, "PUT", "/vsock", {**vsock, "uds_path": ""}, 400, "empty uds path")
    expect(api, "PUT", "/vsock", {**vsock, "uds_path": "/" + "u" * 120}, 400,
           "uds path longer than 96 bytes")
    expect(api, "PUT", "/vsock", {**vsock, "vsock_id": "v0", "guest_cid": 9}, 204)
    # skiff's own skiff_options, --vsock's keys (backend=vhost, issue
    # 33.1): uds_path may then be left out; the hybrid backend still needs
    # it, vhost refuses it, and 2^32 - 1 is no guest's CID.
    expect(api, "PUT", "/vsock", {"guest_cid": 3, "skiff_options": "backend=hybrid"}, 400,
           "uds=PATH is required", valid=False)
    expect(api, "PUT", "/vsock", {**vsock, "skiff_options": "backend=vhost"}, 400,
           "uds= is for backend=hybrid", valid=False)
    expect(api, "PUT", "/vsock", {"guest_cid": 4294967295, "skiff_options": "backend=vhost"},
           400, "invalid cid=4294967295", valid=False)
    expect(api, "PUT", "/vsock", {"guest_cid": 3, "skiff_options": "backend=vhost"}, 204,
           valid=False)
    expect(api, "PUT", "/vsock", vsock, 204)
    expect(api, "GET", "/vsock", None, 400, "Invalid request method and/or path", valid=False)
    expect(api, "PATCH", "/vsock", vsock, 400, "Invalid request method and/or path", valid=False)
    expect(api, "PUT", "/entropy", {"rate_limiter": []}, 400,
           "invalid type: sequence, expected struct RateLimiterConfig", valid=False)
    expect(api, "PUT", "/entropy", None, 400, "Empty PUT request.", valid=False)
    expect(api, "PUT", "/machine-config", {"vcpu_count": 2, "mem_size_mib": 256}, 204)
    # The description requires both fields even in a PATCH; Firecracker's
    # server (and skiff) take any subset.
    expect(api, "PATCH", "/machine-config", {"vcpu_count": 2, "mem_size_mib": 256}, 204)
    expect(api, "PATCH", "/machine-config", {"vcpu_count": 1}, 204, valid=False)
    mc = expect(api, "GET", "/machine-config", None, 200)
    check(mc and mc["vcpu_count"] == 1 and mc["mem_size_mib"] == 256,
          "PATCH /machine-config changed vcpu_count only")
    cfg = expect(api, "GET", "/vm/config", None, 200)
    check(cfg and [d["drive_id"] for d in cfg["drives"]] == ["rootfs", "data"]
          and cfg["boot-source"]["kernel_image_path"] == kernel
          and cfg["network-interfaces"][0]["host_dev_name"] == "tap0",
          "GET /vm/config shows what was configured")
    # As Firecracker's serde: what was not given is null (issue 32.3).
    check(cfg and cfg["drives"][1].get("rate_limiter")
          == {"bandwidth": limiter["bandwidth"], "ops": {**limiter["ops"], "one_time_burst": None}}
          and cfg["drives"][1].get("io_engine") == "Async"
          and cfg["network-interfaces"][0].get("tx_rate_limiter")
          == {"bandwidth": None, "ops": {"size": 10, "one_time_burst": None, "refill_time": 1}}
          and "rx_rate_limiter" in cfg["network-interfaces"][0]
          and cfg["network-interfaces"][0]["rx_rate_limiter"] is None,
          "GET /vm/config shows the rate limiters and io_engine as given")
    check(cfg and cfg.get("entropy") == {"rate_limiter": {**rng_limiter, "ops": None}},
          "GET /vm/config shows the entropy device as the last PUT gave it")
    check(cfg and (cfg.get("balloon") or {}).get("amount_mib") == 16,
          "GET /vm/config shows the balloon")
    check(cfg and cfg.get("vsock") == vsock, "GET /vm/config shows the vsock as the last PUT gave it")
    stats = expect(api, "GET", "/stats", None, 200)
    check(isinstance(stats, str) and stats.startswith("wall_s\t"), "GET /stats: name<TAB>value lines")

    # Pre-boot refusals, Firecracker's words.
    expect(api, "PATCH", "/vm", {"state": "Paused"}, 400, "not supported before starting")
    expect(api, "PATCH", "/drives/rootfs", {"drive_id": "rootfs", "path_on_host": disk}, 400,
           "not supported before starting")
    expect(api, "PATCH", "/network-interfaces/eth0", {"iface_id": "eth0"}, 400,
           "not supported before starting")
    expect(api, "PUT", "/actions", {"action_type": "SendCtrlAltDel"}, 400,
           "not supported before starting")
    expect(api, "PUT", "/actions", {"action_type": "FlushMetrics"}, 204)

    # Bad requests: each a 400 with a fault_message, skiff unharmed.
    expect(api, "PUT", "/machine-config", None, 400, "deserializing", valid=False,
           raw=b'{"vcpu_count": 2,')
    expect(api, "PUT", "/machine-config", None, 400, "deserializing", valid=False, raw=b"[1,2")
    expect(api, "PUT", "/machine-config", {"vcpu_count": "2", "mem_size_mib": 128}, 400,
           "invalid type", valid=False)
    expect(api, "PUT", "/machine-config", {"vcpu_count": 2, "mem_size_mib": 128, "frob": 1},
           400, "unknown field `frob`")
    expect(api, "PUT", "/machine-config", {"vcpu_count": 64, "mem_size_mib": 128}, 400,
           "number of vCPUs", valid=False)
    expect(api, "PUT", "/machine-config", {"vcpu_count": 1}, 400, "missing field `mem_size_mib`",
           valid=False)
    expect(api, "PUT", "/boot-source", {"kernel_image_path": kernel, "initrd": "x"}, 400,
           "unknown field `initrd`")
    expect(api, "PUT", "/boot-source", {"kernel_image_path": 7}, 400, "invalid type",
           valid=False)
    expect(api, "PUT", "/boot-source", None, 400, "Empty PUT request", valid=False, raw=b"")
    expect(api, "PUT", "/drives/missing", {"drive_id": "missing",
                                           "path_on_host": os.path.join(tmp, "nope.img"),
                                           "is_root_device": False, "is_read_only": True},
           400, "No such file or directory")
    expect(api, "PUT", "/drives/rootfs", {"drive_id": "other", "path_on_host": disk,
                                          "is_root_device": False, "is_read_only": True},
           400, "does not match")
    expect(api, "PUT", "/drives/bad-id", {"drive_id": "bad-id", "path_on_host": disk,
                                          "is_root_device": False, "is_read_only": True},
           400, "alphanumeric")
    # TokenBucket: types, required and unknown fields refused as serde does.
    for bucket, words in (({"size": "1", "refill_time": 1}, "invalid type: string, expected u64"),
                          ({"size": -1, "refill_time": 1}, "invalid value: integer `-1`"),
                          ({"size": 1}, "missing field `refill_time`"),
                          ({"size": 1, "refill_time": 1, "burst": 1}, "unknown field `burst`")):
        expect(api, "PUT", "/drives/x", {"drive_id": "x", "path_on_host": disk,
                                         "is_root_device": False, "is_read_only": True,
                                         "rate_limiter": {"bandwidth": bucket}}, 400,
               "An error occurred when deserializing the json body of a request: " + words,
               valid=False)
    expect(api, "PUT", "/drives/x", {"drive_id": "x", "path_on_host": disk, "is_root_device": False,
                                     "is_read_only": True, "rate_limiter": {"bps": {}}}, 400,
           "unknown field `bps`, expected one of `bandwidth`, `ops`", valid=False)
    expect(api, "PUT", "/drives/x", {"drive_id": "x", "path_on_host": disk, "is_root_device": False,
                                     "is_read_only": True, "io_engine": "Turbo"}, 400,
           "unknown variant `Turbo`", valid=False)
    expect(api, "PUT", "/network-interfaces/eth4", {"iface_id": "eth4", "host_dev_name": "tap4",
                                                    "skiff_options": "vhost=on",
                                                    "rx_rate_limiter": {"ops": {"size": 1,
                                                                                "refill_time": 1}}},
           400, "rate limiters need vhost=off")
    expect(api, "PUT", "/network-interfaces/eth5", {"iface_id": "eth5", "host_dev_name": "tap5",
                                                    "skiff_options": "model=e1000",
                                                    "tx_rate_limiter": {"ops": {"size": 1,
                                                                                "refill_time": 1}}},
           400, "a rate limiter is for model=virtio")
    expect(api, "PUT", "/drives/opts", {"drive_id": "opts", "path_on_host": disk,
                                        "is_root_device": False, "is_read_only": True,
                                        "skiff_options": "poll=sometimes"}, 400,
           "invalid poll=sometimes")
    expect(api, "PUT", "/network-interfaces/eth3", {"iface_id": "eth3", "host_dev_name": "tap3",
                                                    "skiff_options": "model=rtl8139"}, 400,
           "model=rtl8139")
    expect(api, "PUT", "/network-interfaces/eth2", {"iface_id": "eth2", "host_dev_name": "tap2",
                                                    "guest_mac": "zz"}, 400, "MAC address")
    expect(api, "PUT", "/actions", {"action_type": "Reboot"}, 400, "unknown variant", valid=False)
    expect(api, "PATCH", "/vm", {"state": "Sleeping"}, 400, "unknown variant", valid=False)
    expect(api, "GET", "/no/such/path", None, 400, "Invalid request method and/or path",
           valid=False)
    expect(api, "DELETE", "/", None, 400, "Invalid request method and/or path", valid=False)
    expect(api, "PUT", "/logger", {"level": "Loud"}, 400, "Invalid level", valid=False)

    # A 1 MiB body: refused at its Content-Length, the connection closed.
    big = b"PUT /boot-source HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" + b" " * (1 << 20)
    reply = raw_exchange(sock, big)
    check(status_of(reply) == 400 and b"larger than the limit" in reply, "1 MiB body -> 400")
    reply = raw_exchange(sock, b"PUT /boot-source HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + (b"8000\r\n" + b"x" * 0x8000 + b"\r\n") * 4 + b"0\r\n\r\n")
    check(status_of(reply) == 400 and b"larger than the limit" in reply, "chunked 128 KiB body -> 400")
    reply = raw_exchange(sock, b"\x16\x03\x01 not http at all\r\n\r\n")
    check(status_of(reply) == 400, "not HTTP -> 400 and close")

    # A slow client does not hold others up, and loses its connection.
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(sock)
    slow.sendall(b"PUT /machine-config HTTP/1.1\r\nContent-Length: 40\r\n\r\n{\"vcpu")
    t0 = time.monotonic()
    got, _ = api.call("GET", "/", None)
    check(got == 200 and time.monotonic() - t0 < 2, "other clients are served while one is slow")
    slow.settimeout(15)
    try:
        closed = slow.recv(100) == b""
    except (socket.timeout, ConnectionResetError):
        closed = False
    check(closed, "the slow client's connection is closed after the read timeout")
    slow.close()

    # "Expect: 100-continue" (curl sends it for large bodies): the 100
    # comes once the headers are in, before the body is sent.
    body = json.dumps({"kernel_image_path": kernel}).encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock)
    s.sendall(b"PUT /boot-source HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    try:
        first = s.recv(100)
    except socket.timeout:
        first = b""
    try:
        s.sendall(body)
        second = s.recv(1000)
    except OSError:
        second = b""
    s.close()
    check(first.startswith(b"HTTP/1.1 100 Continue") and status_of(second) == 204,
          "Expect: 100-continue -> 100, then 204")

    # Pipelined requests on one connection are answered in order.
    reply = raw_exchange(sock, b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /machine-config HTTP/1.1\r\n"
                         b"Host: x\r\nConnection: close\r\n\r\n")
    check(reply.count(b"HTTP/1.1 200") == 2 and b"vcpu_count" in reply, "pipelined requests")

    # InstanceStart: the kernel is not a bzImage, so the start fails with a
    # 400 and the API stays up, unconfigured (no KVM needed).
    expect(api, "PUT", "/actions", {"action_type": "InstanceStart"}, 400, "Start microvm error")
    info = expect(api, "GET", "/", None, 200)
    check(info and info["state"] == "Not started", "after a failed start: still Not started")

    check(proc.poll() is None, "skiff still running after the bad requests")
    # `skiff stat` reads the same socket.
    st = subprocess.run([skiff, "stat", sock, "--once"], capture_output=True, text=True,
                        timeout=20)
    check(st.returncode == 0 and "since start" in st.stdout, "skiff stat --once works on the API socket")
    with open(log) as f:
        lines = f.read().splitlines()
    check(any(l.endswith('[anonymous-instance:main:INFO] The API server received a Put '
                         'request on "/boot-source".') for l in lines
              ), "the log has Firecracker's line format")
    with open(metrics) as f:
        m = [json.loads(l) for l in f.read().splitlines()]
    check(len(m) == 1 and "utc_timestamp_ms" in m[0], "FlushMetrics wrote one JSON line")
    # Before a start there are no devices, but the aggregates are there.
    check(len(m) == 1 and m[0].get("block", {}).get("read_bytes") == 0
          and m[0].get("net", {}).get("tx_bytes_count") == 0
          and m[0].get("vcpu", {}).get("exit_mmio_write") == 0 and "skiff" in m[0]
          and m[0].get("entropy", {}).get("entropy_bytes") == 0,
          "the metrics line has Firecracker's block, net, entropy and vcpu groups")

    api.conn.close()
    # Clients that connect and say nothing fill every slot: a new client
    # is still answered (the longest-idle connection makes room).
    idle = []
    for _ in range(20):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sock)
        idle.append(c)
        time.sleep(0.01)
    reply = raw_exchange(sock, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(status_of(reply) == 200, "answered with every slot held by idle clients")
    for c in idle:
        c.close()
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=10)
    check(rc == 0, f"SIGTERM while unconfigured: exit 0 (got {rc})")
    check(not os.path.exists(sock), "the socket file is removed")
    errlog.seek(0)
    err = errlog.read()
    check("Sanitizer" not in err and "runtime error" not in err, "no sanitizer reports")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"api: {api.exchanges} exchanges validated against {os.path.basename(SPEC)}")
    print(f"api: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
