# SPDX-License-Identifier: Apache-2.0
"""Metric names, their direction, and the mapping from tool output to them.

This is the one place that says whether a bigger number is better. The
report, the verdicts and the plots all ask direction(); a metric missing
here still gets its medians printed, but verdict "n/a" and a warning,
rather than a guessed direction.

Costs come per unit of work (CPU seconds per GB, per million packets or
transactions; KVM exits per MB, packet or transaction). A cost per run or
per second is judged only where every configuration does the same work
(boot, ping): in a stream that runs for a fixed time, the configuration
that moves more data spends more, so direction(name, work_varies=True)
gives those no direction.

UDP at an offered rate (iperf3 -b): loss says something about the path
only when the sender was held to a rate (at -b 0 a slow sender loses
less: loss would reward it), and delivered packets per second compare
only between runs offered the same rate. direction(..., offered=...)
takes the workload's offered rate (offered_rate()) and withholds those
directions otherwise.
"""

from . import stats

# name -> (higher_is_better, human description). None = informational only.
DIRECTIONS = {
    # boot: skiff start -> first KVM_RUN -> guest init marker
    "boot_first_kvm_run_ms": (False, "start to first KVM_RUN"),
    "boot_init_ms": (False, "start to guest init marker"),
    # TCP / UDP streams (iperf3 -J)
    "throughput_gbps": (True, "receiver goodput, Gbit/s"),
    "retransmits": (False, "TCP retransmits (sender)"),
    "udp_pps": (True, "UDP packets delivered per second"),
    "udp_loss_pct": (False, "UDP packet loss, %"),
    "udp_jitter_ms": (False, "UDP jitter, ms"),
    "udp_offered_mbps": (None, "UDP offered rate (iperf3 -b), Mbit/s; 0 = unbounded"),
    "iperf_cpu_local_pct": (False, "iperf3 client CPU, %"),
    "iperf_cpu_remote_pct": (False, "iperf3 server CPU, %"),
    "mb_moved": (None, "payload received, MB (10^6 bytes)"),
    # request/response (sockperf ping-pong), one-way (RTT/2); a --full-rtt
    # run gives rtt_p50_us etc. instead (prefix rule below)
    "latency_p50_us": (False, "sockperf p50, us"),
    "latency_p99_us": (False, "sockperf p99, us"),
    "latency_p99_9_us": (False, "sockperf p99.9, us"),
    "latency_avg_us": (False, "sockperf average, us"),
    "latency_max_us": (False, "sockperf max, us"),
    # ping
    "ping_min_ms": (False, "ping min RTT, ms"),
    "ping_avg_ms": (False, "ping avg RTT, ms"),
    "ping_max_ms": (False, "ping max RTT, ms"),
    "ping_loss_pct": (False, "ping loss, %"),
    # VMM cost, every workload
    "kvm_exits": (False, "KVM exits in the measured window"),
    # a rate, not a cost: the faster configuration has the higher one
    "exits_per_s": (None, "KVM exits per second"),
    "exits_per_mb": (False, "KVM exits per MB moved"),
    "cpu_s_total": (False, "CPU seconds, all VMM processes/threads"),
    "mem_overhead_kib": (False, "VMM memory beyond guest RAM, KiB"),
    "window_s": (None, "measured window, s"),
    # work done in the window, and the costs per unit of it
    "udp_packets": (None, "UDP packets sent by the sender"),
    "rr_transactions": (None, "request/response transactions (replies)"),
    "cpu_s_per_gb": (False, "VMM CPU seconds per GB moved"),
    "cpu_s_per_mpkt": (False, "VMM CPU seconds per million packets"),
    "cpu_s_per_mtrans": (False, "VMM CPU seconds per million transactions"),
    "exits_per_pkt": (False, "KVM exits per packet"),
    "exits_per_trans": (False, "KVM exits per transaction"),
    # the VM left alone (idle): what waiting costs, per second of it
    "idle_cpu_pct": (False, "VMM CPU while the VM idles, % of one CPU"),
    "idle_exits_per_s": (False, "KVM exits per second while the VM idles"),
    "idle_s": (None, "requested idle time, s"),
    # memory split (/proc/PID/status at the end of the window)
    "mem_rss_anon_kib": (False, "VMM resident anonymous memory, KiB"),
    "mem_rss_file_kib": (False, "VMM resident file-backed memory, KiB"),
    "mem_anon_overhead_kib": (False, "VMM anonymous memory beyond guest RAM, KiB"),
    # boot: where the time goes
    "boot_first_exit_ms": (False, "start to the VM's first KVM exit (L1 polls debugfs)"),
    "boot_guest_uptime_ms": (False, "guest's own uptime at init"),
    "boot_pre_kernel_ms": (False, "start to init minus the guest's uptime"),
    # block I/O (fio in L2 on the test disk; bench-round.sh's blk-* workloads)
    "blk_iops": (True, "fio I/Os completed per second"),
    "blk_mb_s": (True, "fio MB/s (10^6 bytes)"),
    "blk_clat_p50_us": (False, "fio completion latency p50, us"),
    "blk_clat_p99_us": (False, "fio completion latency p99, us"),
    "blk_clat_p99_9_us": (False, "fio completion latency p99.9, us"),
    "blk_ios": (None, "I/Os fio completed (work unit)"),
    "blk_runtime_s": (None, "fio's own runtime, s"),
    "blk_guest_cpu_pct": (None, "fio's CPU in the guest (usr+sys), %"),
    "cpu_s_per_mio": (False, "VMM CPU seconds per million I/Os"),
    "exits_per_io": (False, "KVM exits per I/O"),
    # snapshot and restore (bench-snapmig.sh's snap): skiff's clock from
    # the load request, QEMU's from its process start with -incoming
    "snap_create_ms": (False, "pause + save a Full snapshot, ms"),
    # what a snapshot costs is its disk: skiff's memory file is sparse
    # (zero pages are holes), QEMU's stream leaves zero pages out
    "snap_bytes": (None, "snapshot apparent size (state + memory), bytes"),
    "snap_disk_kib": (False, "snapshot on disk (state + memory), KiB"),
    "snap_restore_running_ms": (False, "restore to the VMM's running, ms"),
    "snap_restore_ping_ms": (False, "restore to L2's first ping reply, ms"),
    # live migration (migrate), each VMM's own numbers
    "mig_total_ms": (False, "live migration total time, ms"),
    "mig_downtime_ms": (False, "live migration downtime, each VMM's own, ms"),
    # QEMU's downtime ends when its source sent the last byte (its target's
    # load and start are not in it): skiff's counted the same way
    "mig_downtime_sent_ms": (False, "migration downtime to the last byte sent, ms"),
    "mig_request_ms": (False, "migration request to completion seen by L1, ms"),
    # why the downtime is what it is (skiff's send reply and log; QEMU's
    # query-migrate "normal" pages and dirty-sync-count less its last)
    "mig_pages": (None, "migration: pages sent (zero pages not counted)"),
    "mig_precopy_rounds": (None, "migration: pre-copy rounds before the switch"),
    # migrate-busy's load in L2 (bench-migbusy.sh, dirtyjob.py): the same
    # for every VMM by design, so informational
    "mig_load_mib_per_s": (None, "guest's dirtying rate during the migration, MiB/s"),
    "mig_load_passes_per_s": (None, "guest's passes over its working set during the migration, /s"),
    "mig_load_free_mib_per_s": (None, "guest's dirtying rate before the migration, MiB/s"),
    "mig_load_set_mib": (None, "guest's working set rewritten each pass, MiB"),
    # vsock between L1 and L2 (bench-vsock.sh: vsock-io, L1's side)
    "vsock_mb_s": (True, "vsock stream, MB/s (10^6 bytes)"),
    "vsock_rtt_p50_us": (False, "vsock request/response round trip p50, us"),
    "vsock_rtt_p99_us": (False, "vsock request/response round trip p99, us"),
    "vsock_rtt_avg_us": (False, "vsock request/response round trip average, us"),
    "vsock_rtt_max_us": (False, "vsock request/response round trip max, us"),
    # the balloon (bench-vsock.sh): the VMM's VmRSS around an inflate
    "balloon_rss_drop_mib": (True, "VMM RSS given back by the balloon, MiB"),
    "balloon_recover_ms": (False, "balloon request to the VMM's RSS settled, ms"),
    "balloon_mib_per_s": (True, "VMM RSS recovered per second of inflating, MiB/s"),
    # each VMM's own API, polled: not the same probe for both
    "balloon_actual_ms": (None, "balloon request to the VMM saying it is at target, ms"),
    "balloon_rss_before_mib": (None, "VMM RSS before the balloon, MiB"),
    "balloon_rss_after_mib": (None, "VMM RSS after the balloon, MiB"),
    "balloon_target_mib": (None, "balloon asked for, MiB"),
    # the cpu workload (bench-cpu.sh): a fixed CPU-bound job in L2, no I/O
    "cpu_job_ms": (False, "guest wall time of the fixed CPU-bound job, ms"),
    "cpu_job_mib": (None, "the job's amount of work: MiB hashed (sha256)"),
}

# Work units: a workload whose samples carry one of these does an amount
# of work that depends on the configuration.
WORK_UNITS = ("mb_moved", "udp_packets", "rr_transactions", "blk_ios")

# Costs per run or per second (see the module docstring).
PER_TIME = ("kvm_exits", "exits_per_s", "cpu_s_total", "iperf_cpu_local_pct",
            "iperf_cpu_remote_pct")

# Offered-rate rules (module docstring): comparable only at one offered
# rate, and meaningful only at a bounded one.
AT_EQUAL_RATE = ("udp_pps", "udp_loss_pct", "throughput_gbps")
AT_BOUNDED_RATE = ("udp_loss_pct",)
UNBOUNDED, MIXED = "unbounded", "mixed"


def offered_rate(values):
    """A workload's offered rate from its samples' udp_offered_mbps:
    None (no UDP rate known), UNBOUNDED (all -b 0), MIXED (runs offered
    different rates) or the one rate in Mbit/s."""
    rates = set(values)
    if not rates:
        return None
    if len(rates) > 1:
        return MIXED
    rate = rates.pop()
    return UNBOUNDED if rate == 0 else rate


# Families whose members are named at run time, e.g. cpu_s.vcpu0,
# cpu_s.vhost-1234, mem_rss_kib. Checked after the exact names above.
PREFIX_DIRECTIONS = (
    ("cpu_s.", False),
    ("cpu_s_", False),
    ("mem_", False),
    ("exits_", False),
    ("latency_", False),
    ("rtt_", False),
    ("boot_", False),
    ("ping_", False),
    ("throughput_", True),
)


def is_per_time(name):
    """A cost per run or per second rather than per unit of work."""
    if name in PER_TIME or name.startswith("cpu_s."):
        return True
    return name.startswith("exits_") and not name.startswith("exits_per_")


def direction(name, work_varies=False, offered=None):
    """True: higher is better; False: lower is better; None: not compared
    (informational, unknown -- see is_known --, a per-time cost in a
    workload whose work differs between configurations, or a UDP rate or
    loss the offered rate makes meaningless: see offered_rate). KVM's raw
    counters (kvm.NAME) are informational."""
    if name.startswith("kvm."):
        return None
    if work_varies and is_per_time(name):
        return None
    if offered == MIXED and name in AT_EQUAL_RATE:
        return None
    if offered == UNBOUNDED and name in AT_BOUNDED_RATE:
        return None
    if name in DIRECTIONS:
        return DIRECTIONS[name][0]
    for prefix, higher in PREFIX_DIRECTIONS:
        if name.startswith(prefix):
            return higher
    return None


def is_known(name):
    return name.startswith("kvm.") or name in DIRECTIONS or any(name.startswith(p)
                                     for p, _ in PREFIX_DIRECTIONS)


def sort_key(name):
    """Table order: the order of DIRECTIONS, then the rest alphabetically."""
    order = list(DIRECTIONS)
    return (order.index(name), "") if name in DIRECTIONS else (len(order), name)


def from_iperf3(parsed):
    """Metrics from parsers.parse_iperf3_json()."""
    out = {
        "throughput_gbps": parsed["bits_per_second"] / 1e9,
        "mb_moved": parsed.get("bytes", 0) / 1e6,
        "iperf_cpu_local_pct": parsed.get("cpu_host"),
        "iperf_cpu_remote_pct": parsed.get("cpu_remote"),
    }
    if parsed.get("protocol") == "UDP":
        out.update(udp_pps=parsed.get("packets_per_second"),
                   udp_packets=parsed.get("packets"),
                   udp_loss_pct=parsed.get("lost_percent"),
                   udp_jitter_ms=parsed.get("jitter_ms"))
        if parsed.get("target_bitrate") is not None:
            out["udp_offered_mbps"] = parsed["target_bitrate"] / 1e6
    else:
        out["retransmits"] = parsed.get("retransmits")
    if parsed.get("seconds"):
        out["window_s"] = parsed["seconds"]
    return {k: v for k, v in out.items() if v is not None}


def from_sockperf(parsed):
    """One-way latency (sockperf's default) as latency_*, a --full-rtt run
    as rtt_*: a different name, so runs made with different flags are
    never compared with each other."""
    prefix = "rtt_" if parsed.get("full_rtt") else "latency_"
    out = {prefix + "p50_us": parsed["p50_us"],
           prefix + "p99_us": parsed["p99_us"],
           prefix + "avg_us": parsed["avg_us"]}
    if "p99_9_us" in parsed:
        out[prefix + "p99_9_us"] = parsed["p99_9_us"]
    if "max_us" in parsed:
        out[prefix + "max_us"] = parsed["max_us"]
    if parsed.get("total_received"):
        out["rr_transactions"] = parsed["total_received"]
    return out


def from_ping(parsed):
    out = {"ping_loss_pct": parsed["loss_pct"]}
    for key in ("min_ms", "avg_ms", "max_ms"):
        if parsed.get(key) is not None:
            out["ping_" + key] = parsed[key]
    return out


def from_fio(parsed):
    """Metrics from parsers.parse_fio_json(). blk_ios is the work unit:
    fio runs for a fixed time, so the per-run CPU and exits depend on how
    many I/Os a configuration completed; cpu_s_per_mio and exits_per_io
    (derive) are the comparable costs."""
    out = {"blk_iops": parsed["iops"],
           "blk_mb_s": parsed["bw_bytes"] / 1e6,
           "blk_clat_p50_us": parsed["clat_p50_us"],
           "blk_clat_p99_us": parsed["clat_p99_us"],
           "blk_clat_p99_9_us": parsed["clat_p99_9_us"],
           "blk_ios": parsed["total_ios"],
           "blk_runtime_s": parsed["runtime_s"],
           # also bytes moved: CPU per GB for the 1 MiB sequential runs
           "mb_moved": parsed["io_bytes"] / 1e6}
    cpu = [parsed.get(k) for k in ("usr_cpu", "sys_cpu")]
    if all(isinstance(c, (int, float)) for c in cpu):
        out["blk_guest_cpu_pct"] = cpu[0] + cpu[1]
    return out


def from_vsock(parsed):
    """Metrics from parsers.parse_vsock_io(): a stream's MB/s (mb_moved
    its work unit), or rr's round trips (each run's own percentiles,
    type 7 as stats.quantile; rr_transactions its work unit)."""
    if parsed["kind"] != "rr":
        return {"vsock_mb_s": parsed["bytes"] / parsed["us"],
                "mb_moved": parsed["bytes"] / 1e6}
    rtts = parsed["rtt_us"]
    return {"vsock_rtt_p50_us": stats.quantile(rtts, 0.5),
            "vsock_rtt_p99_us": stats.quantile(rtts, 0.99),
            "vsock_rtt_avg_us": sum(rtts) / len(rtts),
            "vsock_rtt_max_us": max(rtts),
            "rr_transactions": parsed["count"]}


def from_balloon(parsed):
    """Metrics from parsers.parse_balloon(), in MiB (VmRSS is in KiB)."""
    out = {"balloon_target_mib": parsed["target_mib"],
           "balloon_rss_before_mib": parsed["rss_before_kib"] / 1024.0,
           "balloon_rss_after_mib": parsed["rss_after_kib"] / 1024.0,
           "balloon_rss_drop_mib": parsed["drop_kib"] / 1024.0,
           "balloon_mib_per_s": parsed["mib_per_s"],
           "balloon_actual_ms": parsed["actual_ms"]}
    if parsed["recover_ms"] is not None:
        out["balloon_recover_ms"] = parsed["recover_ms"]
    return out


def _per(out, name, num, den, scale=1.0):
    a, b = out.get(num), out.get(den)
    if (name not in out and isinstance(a, (int, float))
            and isinstance(b, (int, float)) and b > 0):
        out[name] = a / (b * scale)


def derive(metrics):
    """Add exits_per_s, cpu_s_total and the costs per unit of work from
    the raw counters when the sample has them and does not already carry
    the derived value (a testbed may compute them more precisely
    itself)."""
    out = dict(metrics)
    exits = out.get("kvm_exits")
    if isinstance(exits, (int, float)):
        if "exits_per_s" not in out and out.get("window_s"):
            out["exits_per_s"] = exits / out["window_s"]
    per_thread = [v for k, v in out.items()
                  if k.startswith("cpu_s.") and isinstance(v, (int, float))]
    if per_thread and "cpu_s_total" not in out:
        out["cpu_s_total"] = sum(per_thread)
    _per(out, "exits_per_mb", "kvm_exits", "mb_moved")
    _per(out, "cpu_s_per_gb", "cpu_s_total", "mb_moved", 1e-3)
    _per(out, "exits_per_pkt", "kvm_exits", "udp_packets")
    _per(out, "cpu_s_per_mpkt", "cpu_s_total", "udp_packets", 1e-6)
    _per(out, "exits_per_trans", "kvm_exits", "rr_transactions")
    _per(out, "cpu_s_per_mtrans", "cpu_s_total", "rr_transactions", 1e-6)
    _per(out, "exits_per_io", "kvm_exits", "blk_ios")
    _per(out, "cpu_s_per_mio", "cpu_s_total", "blk_ios", 1e-6)
    if "idle_s" in out:
        _idle_rates(out)
    return out


def _idle_rates(out):
    """The idle workload's costs per second of waiting, from the window
    L1 measured (not the requested idle_s: the snapshots bracket it)."""
    window = out.get("window_s")
    if not isinstance(window, (int, float)) or window <= 0:
        return
    if isinstance(out.get("cpu_s_total"), (int, float)):
        out.setdefault("idle_cpu_pct", 100.0 * out["cpu_s_total"] / window)
    if isinstance(out.get("kvm_exits"), (int, float)):
        out.setdefault("idle_exits_per_s", out["kvm_exits"] / window)
