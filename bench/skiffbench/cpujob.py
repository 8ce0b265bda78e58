# SPDX-License-Identifier: Apache-2.0
"""The cpu workload's output (bench/bench-cpu.sh: a fixed CPU-bound job in
L2, no I/O while it runs): one line from L2's job server,

    SKIFF-CPU: mib=N ms=T sha256=HEX

N MiB hashed (sha256 over a 1 MiB buffer in memory, N times), T the
guest's wall time for it in ms. Anything else (L2's complaint, a cut-off
line, no line) is a ValueError naming what came instead."""

import re

_LINE = re.compile(r"^SKIFF-CPU: mib=(\d+) ms=(\d+) sha256=([0-9a-f]{64})\s*$")


def parse_cpu_job(text):
    """{'mib': N, 'ms': T, 'sha256': HEX} from the job server's reply."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = [m for m in map(_LINE.match, lines) if m]
    if len(found) != 1:
        if found:
            raise ValueError(f"cpu job: {len(found)} SKIFF-CPU lines, "
                             "expected one")
        first = lines[0][:80] if lines else "no output"
        raise ValueError(f"cpu job: no SKIFF-CPU line (got: {first})")
    m = found[0]
    mib, ms = int(m.group(1)), int(m.group(2))
    if mib == 0:
        raise ValueError("cpu job: no work done (mib=0)")
    return {"mib": mib, "ms": ms, "sha256": m.group(3)}


def from_cpu_job(parsed):
    """Metrics: cpu_job_ms (lower is better; the same work in every
    configuration, so the run's exits and CPU compare as they are) and
    cpu_job_mib (the amount, informational)."""
    return {"cpu_job_ms": parsed["ms"], "cpu_job_mib": parsed["mib"]}
