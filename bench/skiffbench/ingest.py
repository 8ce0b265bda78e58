# SPDX-License-Identifier: Apache-2.0
"""L1's data from a round's console log into the results JSON: unpack
each configuration's tar.gz (base64 between SKIFF-BENCH-DATA markers),
turn every run's outputs into a sample (bench/collect.py), mark positions
and contaminated runs (see rounds.py for the protocol)."""

import base64
import hashlib
import io
import json
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from skiffbench import hostload  # noqa: E402

import collect  # noqa: E402  (bench/collect.py)

TOOL_FILES = (("iperf3", "iperf3.json"), ("sockperf", "sockperf.txt"),
              ("ping", "ping.txt"), ("fio", "fio.json"),
              ("vsock", "vsock.txt"), ("balloon", "balloon.txt"),
              ("cpu", "cpu.txt"), ("dirty", "dirty.txt"))

_BEGIN = re.compile(r"SKIFF-BENCH-DATA-BEGIN rep=(\d+) config=(\S+)")
_B64 = re.compile(r"SKIFF-BENCH-B64 ([A-Za-z0-9+/=]+)\s*$")
_END = re.compile(r"SKIFF-BENCH-DATA-END rep=(\d+) config=(\S+) "
                  r"sha256=([0-9a-f]{64})")


def is_blk_workload(workload):
    """The block workloads (fio in L2 on the test disk) are named blk-*."""
    return workload.startswith("blk-")


def is_nvme_workload(workload):
    """The passed-through NVMe's workloads (fio in L2 on its namespace)
    are named nvme-*."""
    return workload.startswith("nvme-")


def is_vsock_workload(workload):
    """The vsock workloads (bench/bench-vsock.sh) are named vsock-*."""
    return workload.startswith("vsock-")


# Workloads that need a VM: a native configuration has no boot and no VMM
# to watch idling.
VM_ONLY = ("boot", "idle", "snap", "migrate", "migrate-busy", "balloon",
           "cpu")


def workloads_for(config, workloads, native, disks=(), vsocks=(),
                  blk_only=(), nvmes=()):
    """Workloads a configuration runs: no VM_ONLY one without a VM, no
    block workload without a test disk, no vsock workload without a vsock,
    no nvme workload without the passed-through NVMe (disks, vsocks,
    nvmes: the configurations that have one), nothing but block
    workloads for a blk_only one (bench-round.sh's word blk-only). A pair
    that does not apply has no sample at all, not a failed one: it was
    never planned."""
    return [w for w in workloads
            if not (w in VM_ONLY and config in native)
            and not (is_blk_workload(w) and config not in disks)
            and not (is_nvme_workload(w) and config not in nvmes)
            and not (is_vsock_workload(w) and config not in vsocks)
            and not (config in blk_only and not is_blk_workload(w))]


# ---- the console log ----

def clean_lines(text):
    return [line.rstrip("\r") for line in text.splitlines()]


def extract_blobs(text):
    """{(rep, config): (tar.gz bytes or None, problem or None)} from a
    console log. A blob whose sha256 does not match (a kernel message
    interleaved with the base64, say) is reported, not used."""
    out = {}
    cur, chunks = None, []
    for line in clean_lines(text):
        m = _BEGIN.search(line)
        if m:
            cur, chunks = (int(m.group(1)), m.group(2)), []
            continue
        if cur is None:
            continue
        m = _B64.search(line)
        if m:
            chunks.append(m.group(1))
            continue
        m = _END.search(line)
        if m and (int(m.group(1)), m.group(2)) == cur:
            try:
                data = base64.b64decode("".join(chunks), validate=True)
            except ValueError as e:
                out[cur] = (None, f"bad base64 in the console log ({e})")
            else:
                if hashlib.sha256(data).hexdigest() == m.group(3):
                    out[cur] = (data, None)
                else:
                    out[cur] = (None, "data garbled on the console "
                                "(sha256 mismatch)")
            cur = None
    if cur is not None:
        out.setdefault(cur, (None, "data cut off (L1 stopped while "
                                   "sending it)"))
    return out


def safe_extract(data, dest, config):
    """Unpack a tar.gz from L1 into dest; only regular files and
    directories under config/ are accepted."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            if (name.startswith("..") or os.path.isabs(name)
                    or not (name == config or name.startswith(config + "/"))
                    or not (member.isfile() or member.isdir())):
                raise ValueError(f"unexpected member {member.name!r}")
            target = os.path.join(dest, name)
            if member.isdir():
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            src = tar.extractfile(member)
            with open(target, "wb") as f:
                f.write(src.read())


def round_problem(text, l0_rc, stalled=False):
    """One line on why a round's data may be missing."""
    lines = clean_lines(text)
    if stalled:
        why = "L1 hung (no console output; round stopped)"
        if not any("SKIFF-L1: ready" in line for line in lines):
            why = "L1 hung while booting (no console output; round stopped)"
        for line in lines:
            if "soft lockup" in line or "Kernel panic" in line:
                return f"{why}: {line.split('] ', 1)[-1].strip()[:200]}"
        return why
    if not any("SKIFF-L1: ready" in line for line in lines):
        return f"L1 never became ready (L0 exit {l0_rc})"
    if l0_rc in (124, 137):
        return "the round hit its time bound (L0 killed)"
    for line in lines:
        if "SKIFF-RESULT: FAIL" in line:
            return line.split("SKIFF-RESULT: FAIL", 1)[1].strip()[:300]
    return f"L1 stopped early (L0 exit {l0_rc})"


# ---- results ----

def append_samples(results, samples, meta=None):
    if os.path.exists(results):
        with open(results) as f:
            doc = json.load(f)
    else:
        doc = {"schema": 1, "meta": {}, "samples": []}
    for key, value in (meta or {}).items():
        doc["meta"].setdefault(key, value)
    doc["samples"].extend(samples)
    tmp = results + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, results)


def read_kv(path):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            key, sep, value = line.strip().partition("=")
            if sep and key:
                out.append((key, value))
    return out


def ingest_run(results, out_dir, rel_dir, config, workload, rep):
    """Add one run's sample from out_dir/rel_dir (relative paths end up in
    the results' raw fields). Returns None or the reason it failed."""
    run_dir = os.path.join(out_dir, rel_dir)
    err = os.path.join(run_dir, "error")
    if os.path.exists(err):
        with open(err, errors="replace") as f:
            why = f.read().strip() or "failed"
        append_samples(results, [{"config": config, "workload": workload,
                                  "rep": rep, "metrics": {}, "error": why}])
        return why
    if not os.path.exists(os.path.join(run_dir, "metrics")):
        why = "no output from L1 for this run"
        append_samples(results, [{"config": config, "workload": workload,
                                  "rep": rep, "metrics": {}, "error": why}])
        return why
    argv = [os.path.abspath(results), "--config", config, "--workload",
            workload, "--rep", str(rep), "--raw-dir", rel_dir]
    for opt, name in TOOL_FILES:
        if os.path.exists(os.path.join(run_dir, name)):
            argv += [f"--{opt}", os.path.join(rel_dir, name)]
    for key, value in read_kv(os.path.join(run_dir, "metrics")):
        argv += ["--metric", f"{key}={value}"]
    dur = os.path.join(run_dir, "duration_ms")
    if os.path.exists(dur):
        with open(dur) as f:
            text = f.read().strip()
        if text.isdigit():
            argv += ["--duration", str(int(text) / 1000)]
    cwd = os.getcwd()
    os.chdir(out_dir)  # tool paths relative to the output directory
    try:
        status = collect.main(argv)
    finally:
        os.chdir(cwd)
    return None if status == 0 else "tool output did not parse"


def raw_rel_dir(rep, makeup=0):
    """A round's raw directory, relative to the output directory:
    raw/r<rep>/, and raw/r<rep>-m<k>/ for the k-th extra round making up
    for some of rep's runs. An extra round runs a configuration's every
    workload again, so unpacking it into raw/r<rep>/ would replace the
    raw files of the runs counted from the original round."""
    return os.path.join("raw", f"r{rep}" + (f"-m{makeup}" if makeup else ""))


def ingest_round(log, out_dir, results, rep, configs, workloads, native=(),
                 l0_rc=0, say=print, stalled=False, lost=None, keep=None,
                 loads=None, contam_pct=hostload.CONTAM_PCT, redo=None,
                 disks=(), makeup=0, vsocks=(), blk_only=(), nvmes=()):
    """Unpack a round's data under out_dir/raw_rel_dir(rep, makeup) and
    add its samples (makeup: k > 0 for the k-th extra round).
    Runs without data become failed samples. Returns (ok, failed); the
    configurations that sent no data at all (the round died before them)
    are appended to the list `lost`.

    Each sample gets its position in the round (configs is the round's
    order) and, from `loads` ({(config, workload): others' %}), the share
    of the host others used during it: above contam_pct the run counts
    as failed ("contaminated") and (config, workload) goes to `redo`.
    keep: a set of (config, workload) to ingest (a round that makes up
    for some runs only); None: all. disks, vsocks: the configurations with
    a test disk, with a vsock; blk_only: those that run only the blk-*
    workloads; nvmes: those with the NVMe (workloads_for)."""
    start = _n_samples(results)
    ok, failed = _ingest_round(log, out_dir, results, rep, configs,
                               workloads, native, l0_rc, say, stalled, lost,
                               keep, disks, makeup, vsocks, blk_only, nvmes)
    bad = _annotate(results, start, configs, loads or {}, contam_pct)
    for config, workload, pct in bad:
        say(f"bench: {config} {workload} rep {rep}: contaminated (others "
            f"used {pct:.0f}% of the host's CPUs): not counted, to redo")
        if redo is not None:
            redo.append((config, workload))
    return ok - len(bad), failed + len(bad)


def _n_samples(results):
    if not os.path.exists(results):
        return 0
    with open(results) as f:
        return len(json.load(f)["samples"])


def _annotate(results, start, configs, loads, contam_pct):
    """Position and host load on the samples from index `start` on;
    returns the contaminated ones as (config, workload, pct)."""
    if not os.path.exists(results):
        return []
    with open(results) as f:
        doc = json.load(f)
    bad = []
    for s in doc["samples"][start:]:
        if s["config"] in configs:
            s["position"] = configs.index(s["config"]) + 1
        pct = loads.get((s["config"], s["workload"]))
        if pct is None:
            continue
        s["host_others_pct"] = pct
        if pct > contam_pct and not s.get("error"):
            s["error"] = (f"contaminated: other processes used {pct:.0f}% "
                          f"of the host's CPUs during the run (limit "
                          f"{contam_pct:g}%)")
            s["contaminated"] = True
            bad.append((s["config"], s["workload"], pct))
    tmp = results + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, results)
    return bad


def _ingest_round(log, out_dir, results, rep, configs, workloads, native,
                  l0_rc, say, stalled, lost, keep, disks=(), makeup=0,
                  vsocks=(), blk_only=(), nvmes=()):
    with open(log, errors="replace") as f:
        text = f.read()
    blobs = extract_blobs(text)
    raw_rel = raw_rel_dir(rep, makeup)
    raw = os.path.join(out_dir, raw_rel)
    os.makedirs(raw, exist_ok=True)
    ok = failed = 0
    problem = None
    for config in configs:
        data, why = blobs.get((rep, config), (None, None))
        if data is not None:
            try:
                safe_extract(data, raw, config)
            except (ValueError, tarfile.TarError, OSError) as e:
                why = f"could not unpack L1's data: {e}"
        elif why is None:
            problem = problem or round_problem(text, l0_rc, stalled)
            why = f"no data from L1: {problem}"
            if lost is not None:
                lost.append(config)
        for workload in workloads_for(config, workloads, native, disks,
                                      vsocks, blk_only, nvmes):
            if keep is not None and (config, workload) not in keep:
                continue
            if why is not None:
                append_samples(results, [{
                    "config": config, "workload": workload, "rep": rep,
                    "metrics": {}, "error": why}])
                failed += 1
                say(f"bench: {config} {workload} rep {rep}: failed: {why}")
                continue
            bad = ingest_run(results, out_dir,
                             os.path.join(raw_rel, config, workload),
                             config, workload, rep)
            if bad:
                failed += 1
                say(f"bench: {config} {workload} rep {rep}: failed: {bad}")
            else:
                ok += 1
    return ok, failed


def record_cmdlines(results, out_dir, rep, configs, makeup=0):
    """meta["cmdline <config>"]: the exact VMM command line L1 ran."""
    meta = {}
    for config in configs:
        path = os.path.join(out_dir, raw_rel_dir(rep, makeup), config,
                            "cmdline")
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                meta[f"cmdline {config}"] = f.read().strip()
    if meta:
        append_samples(results, [], meta)
