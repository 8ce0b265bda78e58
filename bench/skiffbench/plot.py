# SPDX-License-Identifier: Apache-2.0
"""gnuplot plots: one image per workload, one panel per metric, each
configuration's runs as points and its median as a bar.

The gnuplot script is written next to the image (DIR/<workload>.gp) with
the data inlined, so a plot can be re-rendered or restyled by hand without
re-running anything.
"""

import math
import re
import shutil
import subprocess

from . import metrics as metric_table
from . import stats

# Preference order; the first the installed gnuplot lists wins. pngcairo
# anti-aliases, png (libgd) is the plain fallback, svg needs no raster lib.
_TERMINALS = (("pngcairo", "png"), ("png", "png"), ("svg", "svg"))


def gnuplot_available():
    return shutil.which("gnuplot") is not None


def detect_terminal():
    """(terminal, file extension) supported by the installed gnuplot, or
    None when gnuplot is missing or lists none of ours."""
    if not gnuplot_available():
        return None
    try:
        res = subprocess.run(["gnuplot", "-e", "set terminal"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    listed = set(re.findall(r"^\s*(\S+)\s", res.stdout + res.stderr, re.M))
    for term, ext in _TERMINALS:
        if term in listed:
            return term, ext
    return None


def _q(text):
    """A gnuplot double-quoted string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "workload"


def gnuplot_script(workload, by_metric, configs, terminal, image_path):
    """Script text. by_metric: {metric: {config: [values]}}; configs gives
    the x order (baseline first)."""
    names = sorted(by_metric, key=metric_table.sort_key)
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    xtics = ", ".join(f"{_q(c)} {i}" for i, c in enumerate(configs, 1))
    lines = [
        f"set terminal {terminal} size {420 * cols},{340 * rows} noenhanced",
        f"set output {_q(image_path)}",
        "set key off",
        "set grid ytics",
        # Every metric is a non-negative rate, time or count: start the y
        # axis at 0 so the picture shows ratios honestly, not magnified noise.
        "set yrange [0:*]",
        "set offsets 0, 0, graph 0.05, 0",
        f"set xrange [0.5:{len(configs) + 0.5}]",
        f"set xtics ({xtics}) rotate by -25 font ',8'",
        f"set multiplot layout {rows},{cols} title "
        + _q(f"{workload}: points = runs, bar = median"),
    ]
    for k, name in enumerate(names, 1):
        runs, medians = [], []
        for i, config in enumerate(configs, 1):
            vals = by_metric[name].get(config) or []
            for j, v in enumerate(vals):
                # Spread runs sideways a little so equal values stay visible.
                runs.append(f"{i + (j - (len(vals) - 1) / 2) * 0.05:.3f} {v!r}")
            if vals:
                medians.append(f"{i} {stats.median(vals)!r}")
        higher = metric_table.direction(name)
        hint = {True: " (higher is better)", False: " (lower is better)"}
        lines += [f"$R{k} << EOD", *runs, "EOD",
                  f"$M{k} << EOD", *(medians or ["1 NaN"]), "EOD",
                  f"set title {_q(name + hint.get(higher, ''))}",
                  f"plot $R{k} using 1:2 with points pt 7 ps 0.7 lc rgb "
                  f"'#1f77b4', $M{k} using ($1-0.3):2:(0.6):(0) "
                  f"with vectors nohead lw 2 lc rgb '#d62728'"]
    lines.append("unset multiplot")
    return "\n".join(lines) + "\n"


def plot_workload(workload, by_metric, configs, out_dir, term=None):
    """Write DIR/<workload>.gp and render it. Returns the image path, or
    None with a reason string when no image could be made."""
    term = term or detect_terminal()
    if term is None:
        return None, "gnuplot missing or without png/svg terminal"
    if not by_metric:
        return None, "no numeric metrics"
    terminal, ext = term
    base = f"{out_dir}/{safe_name(workload)}"
    image = f"{base}.{ext}"
    script = gnuplot_script(workload, by_metric, configs, terminal, image)
    with open(base + ".gp", "w") as f:
        f.write(script)
    try:
        res = subprocess.run(["gnuplot", base + ".gp"], capture_output=True,
                             text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"gnuplot failed: {e}"
    if res.returncode != 0:
        err = res.stderr.strip().splitlines()
        return None, "gnuplot failed: " + (err[-1] if err else "no message")
    return image, None
