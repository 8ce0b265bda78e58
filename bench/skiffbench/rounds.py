# SPDX-License-Identifier: Apache-2.0
"""Host side of bench/run.sh's rounds in the nested testbed.

One round is one L0+L1 boot that runs every configuration once, in a
shuffled order, each with every workload (see
bench/bench-round.sh for the L1 side). This module plans
the rounds, follows a round's console log to print progress, and turns the
data L1 sends over the console into samples of the results JSON.

  rounds.py plan --configs a,b --workloads boot,tcp-g2h --reps 5 \
      [--seed 1] [--native c] [--disks c] [--vsocks c] [--blk-only c]
      [--nvmes c]
      -> "total\tN" then one "round\tREP\tCONFIGS\tRUNS" line per round
  rounds.py init RESULTS --meta KEY=VALUE...
  rounds.py follow --log LOG --pid PID --total N --done K \
      [--active-before S] [--state FILE] [--stall S]   (3: L1 hung)
  rounds.py ingest --log LOG --out DIR --results RESULTS --rep R \
      --configs a,b --workloads w,x [--native c] [--disks c] [--vsocks c]
      [--blk-only c] [--nvmes c]
      [--l0-rc RC]
      [--stalled] [--keep c/w,...] [--makeup K]
      [--lost FILE]

The console protocol (L1 writes it, the L0 log has it, lines may end in \r):
  SKIFF-BENCH: run rep=R config=C workload=W           a run starts
  SKIFF-BENCH: done rep=R config=C workload=W rc=N     it ended
  SKIFF-BENCH-DATA-BEGIN rep=R config=C
  SKIFF-BENCH-B64 <base64 of a tar.gz of C/>           (many lines)
  SKIFF-BENCH-DATA-END rep=R config=C sha256=HEX
In the tar, C/W/ holds one run: the tool's output (iperf3.json,
sockperf.txt, ping.txt, fio.json, vsock.txt or balloon.txt), "metrics" (key=value lines: KVM exits, window,
CPU per thread, memory), "duration_ms", or "error" (why it did not run).
"""

import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from skiffbench import design, hostload, parsers, schedule  # noqa: E402
# The ingest side, also under these names for callers and tests.
from skiffbench.ingest import (append_samples, clean_lines,  # noqa: E402,F401
                               extract_blobs, ingest_round, ingest_run,
                               record_cmdlines, round_problem, safe_extract,
                               workloads_for)

import collect  # noqa: E402  (bench/collect.py)

# A kernel's log line ("[   81.944367] rcu: INFO: ..."). It is not
# progress: an L1 that lost a CPU (2026-12-06: halted in L2's HLT under
# -overcommit cpu-pm=on, its wake-ups lost by L0) prints RCU stall reports
# every minute while its bench script waits on that CPU for ever.
_KLOG = re.compile(r"^\[\s*\d+\.\d+\]")
_RUN = re.compile(r"SKIFF-BENCH: run rep=(\d+) config=(\S+) workload=(\S+)")
_DONE = re.compile(r"SKIFF-BENCH: done rep=(\d+) config=(\S+) workload=(\S+)"
                   r" rc=(\d+)")
def _split(text):
    return [x for x in (text or "").split(",") if x]


def plan_rounds(configs, workloads, reps, seed=None, native=(), disks=(),
                vsocks=(), blk_only=(), nvmes=()):
    """[(rep, [configs in run order], runs in the round)].

    Each round's order is a row of a randomised Williams square
    (design.balanced_orders, seeded): every configuration takes every
    position equally often and follows every other equally often after
    each complete block of rounds, and the order is new every round.
    Without a seed the order is as given, every round (for tests).
    native, disks, vsocks: the configurations without a VM, those with a
    test disk and those with a vsock, blk_only those that run only the
    blk-* workloads, nvmes those with the passed-through NVMe (which
    workloads apply: ingest.workloads_for)."""
    configs = list(configs)
    if not configs or not workloads:
        raise ValueError("need at least one config and one workload")
    if reps < 1:
        raise ValueError("reps must be >= 1")
    if seed is None:
        if len(set(configs)) != len(configs):
            raise ValueError("duplicate config names")
        orders = [configs[:] for _ in range(reps)]
    else:
        orders = design.balanced_orders(configs, reps, seed)
    rounds = []
    for rep, order in enumerate(orders, 1):
        n = sum(len(workloads_for(c, workloads, native, disks, vsocks,
                                  blk_only, nvmes))
                for c in order)
        rounds.append((rep, order, n))
    return rounds


def balance_note(configs, reps):
    """One line on how balanced `reps` rounds of the design are."""
    n = len(configs)
    k = design.block_size(n)
    full, rem = divmod(reps, k)
    if rem == 0:
        return (f"Williams design: {full} complete block(s) of {k} rounds; "
                f"every configuration in every position {reps // n} "
                f"time(s) and after every other equally often")
    if n % 2 and rem == n:
        return (f"Williams design: {reps} rounds; every configuration in "
                f"every position {reps // n} time(s); carry-over balanced "
                f"only with a multiple of {k} rounds")
    return (f"Williams design: {full} complete block(s) of {k} rounds and "
            f"{rem} round(s) of another: positions balanced only "
            f"approximately (use --reps a multiple of {k})")


# ---- progress ----

STALLED = -1


def follow(log, pid, total, done, active_before=0.0, out=sys.stdout,
           poll=0.25, alive=None, state=None, clock=time.monotonic,
           stall=None, monitor=None):
    """Print a progress line for each run L1 starts, until process pid
    (the round's L0) is gone. Returns the number of runs started, or
    STALLED when the log has had no line but kernel log lines (_KLOG) for
    `stall` seconds after its first byte (L1 hung: the caller stops L0).

    "elapsed" is the suite's active time: active_before (earlier rounds)
    plus the time since this round's console log got its first byte, so
    a wait for the testbed's L0 lock (other users) does not inflate the
    time-left estimate. The round's active seconds go to the file state.
    monitor: a hostload.Monitor fed every line (the per-run load check)."""
    def default_alive():
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    alive = alive or default_alive
    pos, buf, started, ready = 0, "", 0, False
    round_start = last_growth = None

    def elapsed():
        if round_start is None:
            return active_before
        return active_before + clock() - round_start

    def scan(chunk):
        nonlocal started, ready
        for line in chunk:
            line = line.rstrip("\r")
            if monitor is not None:
                monitor.line(line)
            if not ready and "SKIFF-L1: ready" in line:
                ready = True
            m = _RUN.search(line)
            if m:
                started += 1
                run = schedule.Run(m.group(2), m.group(3), int(m.group(1)))
                n = done + started
                print(schedule.progress_line(n, total, run, elapsed(),
                                             done=n - 1),
                      file=out, flush=True)
            m = _DONE.search(line)
            if m and m.group(4) != "0":
                print(f"    {m.group(2)} {m.group(3)}: exit status "
                      f"{m.group(4)}", file=out, flush=True)

    while True:
        running = alive()
        try:
            with open(log, errors="replace") as f:
                f.seek(pos)
                data = f.read()
                pos = f.tell()
        except FileNotFoundError:
            data = ""
        if data:
            if round_start is None:
                round_start = clock()
                last_growth = clock()
            buf += data
            *lines, buf = buf.split("\n")
            if any(not _KLOG.match(x.lstrip("\r")) for x in lines):
                last_growth = clock()
            scan(lines)
        stalled = (running and stall is not None and last_growth is not None
                   and clock() - last_growth > stall)
        if not running or stalled:
            if buf:
                scan([buf])
            if state:
                with open(state, "w") as f:
                    f.write(f"{elapsed() - active_before:.1f}\n")
            if stalled:
                print(f"    no console output for {stall:.0f}s: L1 hung, "
                      f"stopping this round", file=out, flush=True)
                return STALLED
            return started
        time.sleep(poll)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--configs", required=True)
    p.add_argument("--workloads", required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seed", type=int)
    p.add_argument("--native", default="")
    p.add_argument("--disks", default="", help="configurations with a "
                   "test disk (the only ones that run blk-* workloads)")
    p.add_argument("--vsocks", default="", help="configurations with a "
                   "vsock (the only ones that run vsock-* workloads)")
    p.add_argument("--blk-only", default="", help="configurations that "
                   "run only the blk-* workloads")
    p.add_argument("--nvmes", default="", help="configurations with the "
                   "passed-through NVMe (the only ones that run nvme-*)")
    p = sub.add_parser("init")
    p.add_argument("results")
    p.add_argument("--meta", action="append", default=[], type=collect._kv)
    p = sub.add_parser("follow")
    p.add_argument("--log", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--total", type=int, required=True)
    p.add_argument("--done", type=int, default=0)
    p.add_argument("--active-before", type=float, default=0.0,
                   help="active seconds of the rounds before")
    p.add_argument("--state", help="file for this round's active seconds")
    p.add_argument("--stall", type=float,
                   help="seconds without console output that mean L1 hung "
                        "(exit status 3)")
    p.add_argument("--host-load", help="append each run's load by others "
                   "to this file")
    p = sub.add_parser("ingest")
    p.add_argument("--log", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("--configs", required=True)
    p.add_argument("--workloads", required=True)
    p.add_argument("--native", default="")
    p.add_argument("--disks", default="")
    p.add_argument("--vsocks", default="")
    p.add_argument("--blk-only", default="")
    p.add_argument("--nvmes", default="")
    p.add_argument("--l0-rc", type=int, default=0)
    p.add_argument("--stalled", action="store_true",
                   help="the round was stopped because L1 hung")
    p.add_argument("--lost", help="write the configurations that sent no "
                   "data (comma-separated) to this file")
    p.add_argument("--host-load", help="the file follow --host-load wrote")
    p.add_argument("--contam-pct", type=float, default=hostload.CONTAM_PCT)
    p.add_argument("--keep", help="only these runs: config/workload,...")
    p.add_argument("--makeup", type=int, default=0, help="k: the k-th "
                   "extra round (its raw files go to raw/r<rep>-m<k>/)")
    p.add_argument("--redo", help="write the contaminated runs "
                   "(config/workload,...) to this file")
    args = ap.parse_args(argv)

    if args.cmd == "plan":
        try:
            rounds = plan_rounds(_split(args.configs), _split(args.workloads),
                                 args.reps, args.seed, _split(args.native),
                                 _split(args.disks), _split(args.vsocks),
                                 _split(args.blk_only), _split(args.nvmes))
        except ValueError as e:
            print(f"rounds.py: {e}", file=sys.stderr)
            return 2
        print(f"total\t{sum(n for _, _, n in rounds)}")
        print(f"balance\t{balance_note(_split(args.configs), args.reps)}")
        for rep, order, n in rounds:
            print(f"round\t{rep}\t{','.join(order)}\t{n}")
    elif args.cmd == "init":
        meta = {k: parsers.number_or_text(v) for k, v in args.meta}
        append_samples(args.results, [], meta)
    elif args.cmd == "follow":
        try:
            mon = None
            if args.host_load:
                mon = hostload.Monitor(args.host_load,
                                       [args.pid, os.getpid()])
            n = follow(args.log, args.pid, args.total, args.done,
                       args.active_before, state=args.state, stall=args.stall,
                       monitor=mon)
        except KeyboardInterrupt:
            return 130
        if n == STALLED:
            return 3
    else:
        lost, redo = [], []
        keep = None
        if args.keep is not None:
            keep = {tuple(x.split("/", 1)) for x in _split(args.keep)}
        ok, failed = ingest_round(
            args.log, args.out, args.results, args.rep,
            _split(args.configs), _split(args.workloads),
            _split(args.native), args.l0_rc, stalled=args.stalled, lost=lost,
            keep=keep, loads=hostload.read_loads(args.host_load, args.rep),
            contam_pct=args.contam_pct, redo=redo, disks=_split(args.disks),
            makeup=args.makeup, vsocks=_split(args.vsocks),
            blk_only=_split(args.blk_only), nvmes=_split(args.nvmes))
        record_cmdlines(args.results, args.out, args.rep, _split(args.configs),
                        args.makeup)
        if args.redo:
            with open(args.redo, "w") as f:
                f.write(",".join(f"{c}/{w}" for c, w in redo) + "\n")
        print(f"bench: round {args.rep}: {ok} runs measured, {failed} failed")
        if args.lost:
            with open(args.lost, "w") as f:
                f.write(",".join(lost) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
