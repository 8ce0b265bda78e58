# SPDX-License-Identifier: Apache-2.0
"""Does each counted sample's raw directory hold the run it was made from?

Before issue 35.1, an extra ("makeup") round unpacked into raw/r<rep>/,
the directory of the round it made up for, and replaced the raw files of
every workload of its configurations, including the runs still counted
from the original round. This re-derives every counted sample from its
raw directory (the tool output and the "metrics" file, as
ingest.ingest_run does) and reports the samples whose recorded metrics
their raw files do not reproduce.

  python3 bench/skiffbench/rawcheck.py docs/bench/<run>   (unpacks raw.tar.xz)
"""

import argparse
import json
import math
import os
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from skiffbench import cpujob, dirtyjob, metrics, parsers  # noqa: E402
from skiffbench.ingest import TOOL_FILES, read_kv  # noqa: E402

READERS = {"iperf3": (parsers.parse_iperf3_json, metrics.from_iperf3),
           "sockperf": (parsers.parse_sockperf, metrics.from_sockperf),
           "ping": (parsers.parse_ping, metrics.from_ping),
           "fio": (parsers.parse_fio_json, metrics.from_fio),
           "vsock": (parsers.parse_vsock_io, metrics.from_vsock),
           "balloon": (parsers.parse_balloon, metrics.from_balloon),
           "cpu": (cpujob.parse_cpu_job, cpujob.from_cpu_job),
           "dirty": (dirtyjob.parse_dirty, dirtyjob.from_dirty)}


def run_dir(sample):
    """The sample's raw run directory, relative to the archive: raw_dir
    where ingest recorded it (a run with no tool file, such as migrate's,
    has no raw paths), else its tool files' directory."""
    if sample.get("raw_dir"):
        return sample["raw_dir"]
    for path in (sample.get("raw") or {}).values():
        return os.path.dirname(path)
    return os.path.join("raw", f"r{sample.get('rep')}", sample["config"],
                        sample["workload"])


def derive(archive, rel):
    """The metrics ingest would record from archive/rel, or None."""
    d = os.path.join(archive, rel)
    if not os.path.exists(os.path.join(d, "metrics")):
        return None
    out = {}
    for tool, name in TOOL_FILES:
        path = os.path.join(d, name)
        if os.path.exists(path):
            parse, to_metrics = READERS[tool]
            with open(path, errors="replace") as f:
                try:
                    out.update(to_metrics(parse(f.read())))
                except ValueError:
                    return None
    for key, value in read_kv(os.path.join(d, "metrics")):
        out[key] = parsers.number_or_text(value)
    return metrics.derive(out)


def _same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def check(doc, archive):
    """(counted samples, [(sample, why)] whose raw files disagree)."""
    counted = [s for s in doc["samples"] if not s.get("error")]
    bad = []
    for s in counted:
        rel = run_dir(s)
        got = derive(archive, rel)
        if got is None:
            bad.append((s, f"{rel}: no readable run there"))
            continue
        diff = sorted(k for k, v in s["metrics"].items()
                      if k in got and not _same(v, got[k]))
        if diff:
            bad.append((s, f"{rel}: {', '.join(diff[:3])} differ"))
    return counted, bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run directory: results.json, raw.tar.xz")
    args = ap.parse_args(argv)
    try:
        with open(os.path.join(args.run, "results.json")) as f:
            doc = json.load(f)
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(os.path.join(args.run, "raw.tar.xz")) as tar:
                tar.extractall(tmp, filter="data")
            counted, bad = check(doc, tmp)
    except (OSError, ValueError, tarfile.TarError) as e:
        print(f"rawcheck.py: {e}", file=sys.stderr)
        return 2
    for s, why in bad:
        print(f"{s['config']} {s['workload']} rep {s.get('rep')}: {why}")
    print(f"{args.run}: {len(bad)} of {len(counted)} counted samples "
          f"not reproduced by their raw files")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
