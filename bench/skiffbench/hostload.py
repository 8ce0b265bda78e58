# SPDX-License-Identifier: Apache-2.0
"""The host's other users during each run: the per-run idle check.

The host cannot hold L1 between two runs, so instead of a check before
each run, each run's own window is checked: from L1's marker that starts
it (for a boot, the VMM's start) to the one that ends it, the host's busy
CPU time (/proc/stat) minus what the round's L0 and this harness used
(their /proc/PID/stat ticks) is what everyone else took. A run during
which others took more than a threshold share of the machine is
contaminated: recorded with its share, not counted, and run again in a
later round (bench/run.sh bounds how many).
"""

import os
import re

_START = re.compile(r"SKIFF-BENCH: start rep=(\d+) config=(\S+)")
_RUN = re.compile(r"SKIFF-BENCH: run rep=(\d+) config=(\S+) workload=(\S+)")
_DONE = re.compile(r"SKIFF-BENCH: done rep=(\d+) config=(\S+) "
                   r"workload=(\S+) rc=")

CONTAM_PCT = 10.0  # others' share of all CPUs that spoils a run


def machine_ticks(path="/proc/stat"):
    """(busy, total) clock ticks of all CPUs since boot."""
    with open(path) as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait + steal


def proc_table(root="/proc"):
    """{pid: (ppid, utime + stime ticks)} of every live process."""
    out = {}
    for name in os.listdir(root):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(root, name, "stat")) as f:
                text = f.read()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        # fields[0] is the state: ppid is field 4 of stat, utime 14.
        out[int(name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return out


def tree_ticks(table, roots):
    """CPU ticks of the processes in `roots` and all their descendants."""
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo, total = set(), list(roots), 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if pid in table:
            total += table[pid][1]
        todo += children.get(pid, [])
    return total


def others_pct(before, after):
    """Share (%) of all CPUs used by others between two snapshots
    (busy, total, own)."""
    d_total = after[1] - before[1]
    if d_total <= 0:
        return 0.0
    others = (after[0] - before[0]) - (after[2] - before[2])
    return max(0.0, 100.0 * others / d_total)


class Monitor:
    """Feed it the console lines as they come; it writes one line per
    finished run to `path`: "REP<TAB>CONFIG<TAB>WORKLOAD<TAB>PCT<TAB>S"."""

    def __init__(self, path, own_roots, snap=None):
        self.path, self.own_roots = path, list(own_roots)
        self.snap = snap or self._snap
        self.open = {}

    def _snap(self):
        busy, total = machine_ticks()
        return busy, total, tree_ticks(proc_table(), self.own_roots)

    def line(self, text):
        m = _START.search(text)
        if m:
            self.open[(m.group(1), m.group(2), "boot")] = self.snap()
            return
        m = _RUN.search(text)
        if m and m.group(3) != "boot":  # a boot's window opened at start
            self.open[(m.group(1), m.group(2), m.group(3))] = self.snap()
            return
        m = _DONE.search(text)
        if m:
            key = (m.group(1), m.group(2), m.group(3))
            before = self.open.pop(key, None)
            if before is None:
                return
            after = self.snap()
            secs = (after[1] - before[1]) / max(1, os.cpu_count() or 1) / 100
            with open(self.path, "a") as f:
                f.write("\t".join(key) + f"\t{others_pct(before, after):.1f}"
                        f"\t{secs:.1f}\n")


def read_loads(path, rep):
    """{(config, workload): others' %} of one round."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4 and parts[0] == str(rep):
                out[(parts[1], parts[2])] = float(parts[3])
    return out
