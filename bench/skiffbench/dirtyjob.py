# SPDX-License-Identifier: Apache-2.0
"""migrate-busy's load (bench/bench-migbusy.sh): what L2's job server and
L1 wrote into the run's dirty.txt, one SKIFF-DIRTY line each,

    SKIFF-DIRTY: start mib=M chunk_mib=C pause_ms=P up=U  (the load runs)
    SKIFF-DIRTY: mark up=U0 passes=N             (L1 starts the migration)
    SKIFF-DIRTY: window ms=W                     (L1 saw it end W ms later)
    SKIFF-DIRTY: pass K A B                      (each pass, L2's uptime, cs)
    SKIFF-DIRTY: end N REASON UP                 (the load's end)

into the guest's dirtying rate during the migration, [U0, U0 + W] in the
guest's time, and before it, [end of pass 1, U0] (the first pass makes
the file: its page allocation is not the load). A pass's M MiB are taken
as written evenly over [A, B] (its C MiB chunks with pauses between), so
a window that cuts a pass counts the part inside it. The load must have run through the migration: it ended
because L1 stopped it, after the window. Anything else is a ValueError
naming what is wrong."""

import re

_PREFIX = "SKIFF-DIRTY: "
_START = re.compile(r"start mib=(\d+) chunk_mib=(\d+) pause_ms=(\d+) "
                    r"up=(\d+)$")
_MARK = re.compile(r"mark up=(\d+) passes=(\d+)$")
_WINDOW = re.compile(r"window ms=(\d+)$")
_PASS = re.compile(r"pass (\d+) (\d+) (\d+)$")
_END = re.compile(r"end (\d+) (\S+) (\d+)$")


def _one(found, what):
    if len(found) != 1:
        raise ValueError(f"dirtying load: {len(found)} {what} lines, "
                         "expected one")
    return found[0]


def parse_dirty(text):
    """{'mib', 'chunk_mib', 'pause_ms', 'mark_cs', 'window_ms', 'passes': [(a, b)],
    'end_cs'} from dirty.txt, or ValueError."""
    lines = [line.strip() for line in text.splitlines()]
    ours = [line[len(_PREFIX):] for line in lines if line.startswith(_PREFIX)]
    if not ours:
        first = next((line for line in lines if line), "no output")
        raise ValueError(f"dirtying load: no SKIFF-DIRTY line (got: "
                         f"{first[:80]})")

    def matches(rx):
        return [m for m in map(rx.match, ours) if m]

    start = _one(matches(_START), "start")
    mark = _one(matches(_MARK), "mark")
    window = _one(matches(_WINDOW), "window")
    ends = matches(_END)
    if not ends:
        raise ValueError("dirtying load: no end line (was it stopped?)")
    end = _one(ends, "end")
    if end.group(2) != "stop":
        raise ValueError(f"dirtying load: it ended ({end.group(2)}) before "
                         "L1 stopped it")
    passes = [(int(m.group(2)), int(m.group(3))) for m in matches(_PASS)]
    if not passes or len(passes) != int(end.group(1)):
        raise ValueError(f"dirtying load: {len(passes)} pass lines for "
                         f"{end.group(1)} passes")
    out = {"mib": int(start.group(1)), "chunk_mib": int(start.group(2)),
           "pause_ms": int(start.group(3)),
           "mark_cs": int(mark.group(1)), "window_ms": int(window.group(1)),
           "passes": passes, "end_cs": int(end.group(3))}
    if out["mib"] == 0:
        raise ValueError("dirtying load: no working set (mib=0)")
    if out["end_cs"] * 10 < out["mark_cs"] * 10 + out["window_ms"]:
        raise ValueError("dirtying load: it stopped before the migration "
                         "ended")
    return out


def mib_written(passes, mib, lo, hi):
    """MiB written in [lo, hi] (cs), each pass's mib spread evenly over
    its [a, b]; a pass within one clock tick (a == b) counts where it
    is."""
    total = 0.0
    for a, b in passes:
        if b > a:
            total += mib * max(0, min(b, hi) - max(a, lo)) / (b - a)
        elif lo <= a <= hi:
            total += mib
    return total


def from_dirty(parsed):
    """Metrics, all informational (the load both VMMs face, not a score):
    mig_load_mib_per_s and mig_load_passes_per_s during the migration
    (guest time), mig_load_free_mib_per_s before it, mig_load_set_mib."""
    mib, passes = parsed["mib"], parsed["passes"]
    lo = parsed["mark_cs"]
    hi = lo + parsed["window_ms"] / 10.0
    out = {"mig_load_set_mib": mib}
    if hi > lo:
        rate = mib_written(passes, mib, lo, hi) / ((hi - lo) / 100.0)
        out["mig_load_mib_per_s"] = round(rate, 2)
        out["mig_load_passes_per_s"] = round(rate / mib, 3)
    free_lo = passes[0][1]
    if lo > free_lo:
        out["mig_load_free_mib_per_s"] = round(
            mib_written(passes[1:], mib, free_lo, lo) /
            ((lo - free_lo) / 100.0), 2)
    return out
