# SPDX-License-Identifier: Apache-2.0
"""Parsers for the raw outputs of the benchmark tools.

Each parser takes the tool's text exactly as captured (possibly with
surrounding console noise, since guest-side output arrives over the serial
console) and returns a flat dict of numbers. Anything that means the run did
not measure what it claims raises ValueError with the reason, so a broken
run is never silently averaged into the results.
"""

import json
import math
import re

# sockperf colours some lines even when writing to a file.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _load_json_lenient(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    # Console capture: keep only the outermost {...}.
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("iperf3: no JSON object in output")
    try:
        return json.loads(text[start:end + 1])
    except json.JSONDecodeError as e:
        raise ValueError(f"iperf3: output is not valid JSON ({e})") from None


def parse_iperf3_json(text):
    """Summary of one `iperf3 -J` client run (TCP or UDP).

    TCP: bits_per_second is the receiver's (end.sum_received), i.e. what
    actually arrived, not what the sender pushed into its socket buffer.
    retransmits comes from the sender's sum. UDP: iperf3 >= 3.x reports the
    receiver's view (loss, jitter) in end.sum_received (newer) or end.sum
    (older); packets_per_second counts delivered packets, so loss lowers it.
    cpu_host/cpu_remote are iperf3's own total CPU percentages of the client
    and server process. target_bitrate is the offered rate (-b), bits/s;
    0 means unbounded (-b 0, or TCP's default).
    """
    doc = _load_json_lenient(text)
    if not isinstance(doc, dict):
        raise ValueError("iperf3: JSON top level is not an object")
    if doc.get("error"):
        raise ValueError(f"iperf3 reported an error: {doc['error']}")
    end = doc.get("end") or {}
    test = (doc.get("start") or {}).get("test_start") or {}
    protocol = str(test.get("protocol", "TCP")).upper()
    cpu = end.get("cpu_utilization_percent") or {}
    out = {
        "protocol": protocol,
        "reverse": bool(test.get("reverse", 0)),
        "streams": test.get("num_streams"),
        "cpu_host": cpu.get("host_total"),
        "cpu_remote": cpu.get("remote_total"),
        "target_bitrate": test.get("target_bitrate"),
    }
    if protocol == "UDP":
        recv = end.get("sum_received") or end.get("sum")
        if not recv:
            raise ValueError("iperf3: UDP result has no end.sum/sum_received")
        seconds = float(recv.get("seconds") or 0)
        packets = int(recv.get("packets", 0))
        lost = int(recv.get("lost_packets", 0))
        out.update(
            bits_per_second=float(recv["bits_per_second"]),
            bytes=int(recv.get("bytes", 0)),
            seconds=seconds,
            packets=packets,
            lost_packets=lost,
            lost_percent=float(recv.get("lost_percent", 0.0)),
            jitter_ms=float(recv.get("jitter_ms", 0.0)),
            packets_per_second=(packets - lost) / seconds if seconds else None,
        )
        return out
    recv = end.get("sum_received")
    sent = end.get("sum_sent") or {}
    if not recv:
        raise ValueError("iperf3: TCP result has no end.sum_received "
                         "(run interrupted before the summary?)")
    out.update(
        bits_per_second=float(recv["bits_per_second"]),
        bytes=int(recv.get("bytes", 0)),
        seconds=float(recv.get("seconds") or 0),
        retransmits=sent.get("retransmits"),
        sender_bits_per_second=sent.get("bits_per_second"),
    )
    return out


def parse_sockperf(text):
    """Latency summary of a `sockperf ping-pong` run, in microseconds.

    sockperf reports one-way latency (RTT/2) by default and the full round
    trip with --full-rtt; `full_rtt` says which. The summary line is
    "avg-latency=" (3.7), "avg-lat=" (older) or "avg-rtt=" (--full-rtt).
    Percentile lines look like "sockperf: ---> percentile 99.000 =   62.227".
    """
    clean = _ANSI.sub("", text)
    out = {}
    m = re.search(r"avg-(latency|lat|rtt)\s*=\s*(" + _NUM + r")"
                  r"(?:\s*\(std-dev\s*=\s*(" + _NUM + r")\))?", clean)
    if not m:
        raise ValueError("sockperf: no avg-latency/avg-lat/avg-rtt line "
                         "(client failed or not a ping-pong run?)")
    out["full_rtt"] = m.group(1) == "rtt"
    out["avg_us"] = float(m.group(2))
    if m.group(3) is not None:
        out["std_dev_us"] = float(m.group(3))
    for pct, val in re.findall(
            r"--->\s*percentile\s+(" + _NUM + r")\s*=\s*(" + _NUM + r")",
            clean):
        # "99.000" -> p99, "99.900" -> p99.9 (key p99_9_us)
        label = f"{float(pct):g}".replace(".", "_")
        out[f"p{label}_us"] = float(val)
    for which, val in re.findall(
            r"--->\s*<(MAX|MIN)>\s*observation\s*=\s*(" + _NUM + r")", clean):
        out[f"{which.lower()}_us"] = float(val)
    m = re.search(r"\[Total Run\].*?ReceivedMessages=(\d+)", clean)
    if m:
        out["total_received"] = int(m.group(1))
    m = re.search(r"Total\s+(\d+)\s+observations", clean)
    if m:
        out["observations"] = int(m.group(1))
    m = re.search(r"#\s*dropped messages\s*=\s*(\d+)", clean)
    if m:
        out["dropped"] = int(m.group(1))
    if "p50_us" not in out or "p99_us" not in out:
        raise ValueError("sockperf: percentile 50/99 lines missing")
    return out


def parse_ping(text):
    """Summary of busybox or iputils ping, times in milliseconds.

    busybox: "3 packets transmitted, 3 packets received, 0% packet loss"
             "round-trip min/avg/max = 0.057/0.149/0.322 ms"
    iputils: "3 packets transmitted, 3 received, 0% packet loss, time 408ms"
             "rtt min/avg/max/mdev = 0.046/0.059/0.067/0.009 ms"
    With no reply there is no round-trip line: min/avg/max are None.
    """
    m = re.search(r"(\d+)\s+packets transmitted,\s*(\d+)\s+(?:packets\s+)?"
                  r"received.*?(" + _NUM + r")%\s+packet loss", text)
    if not m:
        raise ValueError("ping: no 'packets transmitted' summary line")
    out = {"transmitted": int(m.group(1)), "received": int(m.group(2)),
           "loss_pct": float(m.group(3)),
           "min_ms": None, "avg_ms": None, "max_ms": None}
    m = re.search(r"(?:round-trip|rtt)\s+min/avg/max(/mdev)?\s*=\s*"
                  r"(" + _NUM + r")/(" + _NUM + r")/(" + _NUM + r")"
                  r"(?:/(" + _NUM + r"))?\s*ms", text)
    if m:
        out.update(min_ms=float(m.group(2)), avg_ms=float(m.group(3)),
                   max_ms=float(m.group(4)))
        if m.group(5) is not None:
            out["mdev_ms"] = float(m.group(5))
    elif out["received"] > 0:
        raise ValueError("ping: replies received but no min/avg/max line")
    return out


_METRIC_LINE = re.compile(r"SKIFF-METRIC:\s*([A-Za-z0-9_.:/-]+)\s*=\s*(\S*)")


def number_or_text(value):
    """int, else finite float, else the text unchanged."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        num = float(value)
    except ValueError:
        return value
    # "nan"/"inf" would poison the statistics; keep them visible as text.
    return num if math.isfinite(num) else value


def parse_metrics(text):
    """Collect `SKIFF-METRIC: key=value` markers from console output.

    Markers may be preceded by a kernel timestamp or other prefix on the
    same line; values become int or float when they parse as one. A key
    seen twice keeps the last value (a re-emitted final figure wins).
    """
    out = {}
    for line in _ANSI.sub("", text).splitlines():
        m = _METRIC_LINE.search(line)
        if m:
            out[m.group(1)] = number_or_text(m.group(2).rstrip("\r"))
    return out


# ---- fio (block workloads: bench-round.sh runs it in L2) ----

def _fio_doc(text):
    """The JSON object of `fio --output-format=json`. fio may print notes
    before it and L2's relay may add lines after it, so decode from the
    first "{" and ignore what follows."""
    start = text.find("{")
    if start < 0:
        raise ValueError("fio: no JSON object in output: "
                         + (text.strip().splitlines() or ["(empty)"])[-1][:200])
    try:
        doc, _end = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise ValueError(f"fio: output is not valid JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list) \
            or not doc["jobs"]:
        raise ValueError("fio: JSON has no jobs")
    return doc


def _fio_percentile(clat, pct):
    """clat_ns.percentile["99.900000"] in microseconds."""
    table = clat.get("percentile") or {}
    for key, value in table.items():
        try:
            if abs(float(key) - pct) < 1e-6:
                return float(value) / 1000.0
        except ValueError:
            continue
    raise ValueError(f"fio: no completion-latency percentile {pct:g}")


def parse_fio_json(text):
    """Summary of one fio job (`--output-format=json`, one job, one
    direction: randread, randwrite, read or write).

    The direction is the one that did I/O (a read job's "write" section is
    all zeros). iops and bw_bytes (bytes/s) are fio's, over the job's
    runtime; total_ios counts completed I/Os; clat_* are completion
    latencies (submission to completion, what the device path costs) in
    microseconds. usr_cpu/sys_cpu are fio's own CPU % inside the guest. A
    job error, or a job that completed no I/O, raises."""
    doc = _fio_doc(text)
    job = doc["jobs"][0]
    if job.get("error"):
        raise ValueError(f"fio: job {job.get('jobname')!r} failed with "
                         f"error {job['error']}")
    done = [(d, job[d]) for d in ("read", "write")
            if (job.get(d) or {}).get("total_ios")]
    if len(done) != 1:
        raise ValueError("fio: expected I/O in exactly one direction, got "
                         f"{len(done)} (no I/O completed, or a mixed job)")
    rw, side = done[0]
    clat = side.get("clat_ns") or {}
    return {
        "version": doc.get("fio version"),
        "job": job.get("jobname"),
        "direction": rw,
        "iops": float(side["iops"]),
        "bw_bytes": float(side["bw_bytes"]),
        "total_ios": int(side["total_ios"]),
        "io_bytes": int(side.get("io_bytes", 0)),
        "runtime_s": float(side.get("runtime", 0)) / 1000.0,
        "clat_p50_us": _fio_percentile(clat, 50),
        "clat_p99_us": _fio_percentile(clat, 99),
        "clat_p99_9_us": _fio_percentile(clat, 99.9),
        "usr_cpu": job.get("usr_cpu"),
        "sys_cpu": job.get("sys_cpu"),
    }


# ---- vsock-io and the balloon's trace (bench/bench-vsock.sh) ----

_VSOCK_STREAM = re.compile(r"vsock-io: (sent|received) (\d+) bytes in (\d+) us")
_VSOCK_RR_HEAD = re.compile(r"vsock-io: rr (\d+) x (\d+) bytes")
_VSOCK_RR_END = re.compile(r"vsock-io: rr (\d+) round trips in (\d+) us")
_VSOCK_RTT = re.compile(r"^rtt_ns (\d+)$")


def _vsock_failure(lines, why):
    """vsock-io's own last word (its one line on a failure), else why."""
    said = [line for line in lines if line.startswith("vsock-io: ")
            and not line.startswith("vsock-io: OK ")]
    return ValueError(said[-1] if said else why)


def parse_vsock_io(text):
    """One run of tests/testbed/guest/vsock-bench.c's send, recv or rr.

    A stream ("sent|received N bytes in U us") gives kind, bytes and us: a
    sender's time runs to the sink's close, a receiver's over its own
    window. rr ("rr COUNT x SIZE bytes", COUNT "rtt_ns N" lines, "rr COUNT
    round trips in U us") gives count, size, us and the round trips in
    microseconds, all of them: a run cut short, or one that moved nothing,
    raises with vsock-io's own line when it printed one."""
    lines = [line.rstrip("\r") for line in text.splitlines()]
    for line in lines:
        m = _VSOCK_STREAM.search(line)
        if m:
            n, us = int(m.group(2)), int(m.group(3))
            if n <= 0 or us <= 0:
                raise ValueError(f"vsock-io: {m.group(1)} {n} bytes in "
                                 f"{us} us: nothing measured")
            return {"kind": m.group(1), "bytes": n, "us": us}
    head = next((m for m in map(_VSOCK_RR_HEAD.search, lines) if m), None)
    if not head:
        raise _vsock_failure(lines, "vsock-io: no result line")
    count, size = int(head.group(1)), int(head.group(2))
    rtts = [int(m.group(1)) / 1000.0
            for m in map(_VSOCK_RTT.match, lines) if m]
    end = next((m for m in map(_VSOCK_RR_END.search, lines) if m), None)
    if not end or len(rtts) != count or int(end.group(1)) != count:
        raise ValueError(f"vsock-io: rr cut short: {len(rtts)} of {count} "
                         "round trips")
    return {"kind": "rr", "count": count, "size": size,
            "us": int(end.group(2)), "rtt_us": rtts}


# The RSS a balloon recovered is reached once the VmRSS is within this of
# the last sample (KiB): the run's end, not its last page.
BALLOON_SETTLED_KIB = 1024


def _balloon_lines(text):
    """(target MiB, [(ns, KiB)] before t0, t0, [(ns, KiB)] after it,
    "actual" ns); an "error" line raises with it."""
    target = t0 = actual = None
    before, after = [], []
    for line in text.splitlines():
        f = line.strip().split()
        if not f:
            continue
        if f[0] == "error":
            raise ValueError("balloon: " + " ".join(f[1:]))
        try:
            if f[0] == "target_mib" and len(f) == 2:
                target = int(f[1])
            elif f[0] == "t0" and len(f) == 2:
                t0 = int(f[1])
            elif f[0] == "actual" and len(f) == 2:
                actual = int(f[1])
            elif f[0] == "rss" and len(f) == 3:
                (before if t0 is None else after).append((int(f[1]),
                                                          int(f[2])))
        except ValueError:
            raise ValueError(f"balloon: bad line {line.strip()!r}") from None
    if target is None or t0 is None or not before or not after:
        raise ValueError("balloon: trace without target_mib, t0 or VmRSS "
                         "samples on both sides of it")
    if actual is None:
        raise ValueError("balloon: the VMM never said the balloon reached "
                         "its target")
    return target, before, t0, after, actual


def parse_balloon(text):
    """The balloon workload's trace (bench_balloon_run): the VMM's VmRSS
    before the request and every ~50 ms after it, until the VMM said the
    guest's balloon was at its target (actual) and 5 samples more.

    rss_before_kib is the last sample before the request, rss_after_kib
    the last of all; recover_ms runs from the request to the first sample
    within BALLOON_SETTLED_KIB of rss_after_kib, and mib_per_s is the drop
    over that time (0 when the RSS did not drop by more than that margin:
    then recover_ms is None). actual_ms: the request to the moment L1 saw
    the VMM report the target (its API, polled)."""
    target, before, t0, after, actual = _balloon_lines(text)
    rss_before, rss_after = before[-1][1], after[-1][1]
    drop = rss_before - rss_after
    out = {"target_mib": target, "rss_before_kib": rss_before,
           "rss_after_kib": rss_after, "drop_kib": drop,
           "actual_ms": (actual - t0) / 1e6, "samples": len(after),
           "recover_ms": None, "mib_per_s": 0.0}
    if drop > BALLOON_SETTLED_KIB:
        t = next(ns for ns, kib in after
                 if kib <= rss_after + BALLOON_SETTLED_KIB)
        if t > t0:
            out["recover_ms"] = (t - t0) / 1e6
            out["mib_per_s"] = (drop / 1024.0) / ((t - t0) / 1e9)
    return out
