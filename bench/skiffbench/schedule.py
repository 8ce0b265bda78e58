# SPDX-License-Identifier: Apache-2.0
"""Interleaved run schedule and a progress line with a time-left estimate.

Runs are ordered round by round (rep 1 of everything, then rep 2, ...) and
within a round the configurations alternate per workload (A B A B), so slow
drift of the machine -- thermal state, page cache, a background job --
lands on every configuration alike instead of on whichever ran last, and an
interrupted benchmark still has balanced data for the rounds it finished.

Shell use (bench/run.sh reads one run per line, tab-separated):
  python3 bench/skiffbench/schedule.py list --configs a,b --workloads boot,tcp \
      --reps 5 [--seed 7]
      -> "<n>\t<N>\t<config>\t<workload>\t<rep>"
  python3 bench/skiffbench/schedule.py progress --n 3 --total 20 \
      --config a --workload tcp --rep 2 --elapsed 81.5
      -> "[3/20] a tcp rep 2 — elapsed 1m22s, ~7m41s left"
"""

import argparse
import random
import sys
import time
from collections import namedtuple

Run = namedtuple("Run", "config workload rep")


def make_schedule(configs, workloads, reps, seed=None):
    """List of Run(config, workload, rep) with rep counted from 1.

    With a seed, the configuration order is shuffled once per round (the
    same order for every workload of that round) by a private RNG, so a
    fixed A-first position cannot bias A while the schedule stays
    reproducible; without one the order is exactly as given.
    """
    if reps < 1:
        raise ValueError("reps must be >= 1")
    if not configs or not workloads:
        raise ValueError("need at least one config and one workload")
    if len(set(configs)) != len(configs):
        raise ValueError("duplicate config names")
    rng = random.Random(seed) if seed is not None else None
    runs = []
    for rep in range(1, reps + 1):
        order = list(configs)
        if rng is not None:
            rng.shuffle(order)
        for workload in workloads:
            for config in order:
                runs.append(Run(config, workload, rep))
    return runs


def format_duration(seconds):
    seconds = int(round(max(0.0, seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def progress_line(n, total, run, elapsed, done=None):
    """"[n/N] config workload rep k — elapsed, ~time left" for run number n
    (1-based) about to start. The estimate is the mean duration of the
    `done` runs finished so far (n-1 by default) times the runs left
    including this one; before any run finishes there is nothing to
    estimate from."""
    done = n - 1 if done is None else done
    head = (f"[{n}/{total}] {run.config} {run.workload} rep {run.rep} "
            f"\u2014 elapsed {format_duration(elapsed)}")
    if done <= 0:
        return head + ", time left unknown"
    left = elapsed / done * (total - done)
    return head + f", ~{format_duration(left)} left"


class Progress:
    """Stateful printer for Python callers: call start(run) before each run."""

    def __init__(self, total, out=None, clock=time.monotonic):
        self.total, self.out, self.clock = total, out or sys.stderr, clock
        self.t0 = clock()
        self.n = 0

    def start(self, run):
        self.n += 1
        line = progress_line(self.n, self.total, run, self.clock() - self.t0)
        print(line, file=self.out, flush=True)
        return line


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help="print the interleaved schedule")
    ls.add_argument("--configs", required=True, help="comma-separated")
    ls.add_argument("--workloads", required=True, help="comma-separated")
    ls.add_argument("--reps", type=int, default=5)
    ls.add_argument("--seed", type=int, default=None)
    pr = sub.add_parser("progress", help="print one progress line")
    pr.add_argument("--n", type=int, required=True)
    pr.add_argument("--total", type=int, required=True)
    pr.add_argument("--config", required=True)
    pr.add_argument("--workload", required=True)
    pr.add_argument("--rep", type=int, required=True)
    pr.add_argument("--elapsed", type=float, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "list":
        split = lambda s: [x for x in s.split(",") if x]
        runs = make_schedule(split(args.configs), split(args.workloads),
                             args.reps, args.seed)
        for i, r in enumerate(runs, 1):
            print(f"{i}\t{len(runs)}\t{r.config}\t{r.workload}\t{r.rep}")
    else:
        run = Run(args.config, args.workload, args.rep)
        print(progress_line(args.n, args.total, run, args.elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
