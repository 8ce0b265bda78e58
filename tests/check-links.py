#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every relative link in the documentation resolves (issue 35.2).

Checks the Markdown links `[text](target)` and `[name]: target` of the
files given (default: every tracked *.md file but the reports the
benchmark harness wrote into a run's directory, docs/bench/RUN/**, whose
plots are not committed; the run's own README.md is checked): a relative
target must name a file or directory in the tree, and a `#fragment` on
a Markdown file must name one of its headings as GitHub spells the
anchor. Links with a scheme (https:, mailto:) are not followed; code
spans and fenced code blocks are skipped. Prints one line per broken
link and exits 1 if there is any, 2 on bad usage; run from anywhere.
"""
import os
import re
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INLINE = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODESPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def lines_outside_code(text):
    """(line number, line) outside fenced blocks, code spans blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, CODESPAN.sub("``", line)


def anchors(path):
    """The heading anchors GitHub gives a Markdown file."""
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        for _, line in lines_outside_code(f.read()):
            m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            k = seen.get(slug, 0)
            seen[slug] = k + 1
            out.add(slug if k == 0 else f"{slug}-{k}")
    return out


def inside(path):
    """Whether path is in the repository (GitHub resolves nothing outside)."""
    return not os.path.relpath(path, REPO).startswith("..")


def check(path):
    """Broken links of one file, as 'FILE:LINE: TARGET: why' lines."""
    bad = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in lines_outside_code(text):
        targets = INLINE.findall(line)
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if SCHEME.match(t):
                continue
            file_part, _, frag = t.partition("#")
            dest = path if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(path), file_part))
            rel = os.path.relpath(path, REPO)
            if not os.path.exists(dest):
                bad.append(f"{rel}:{n}: {t}: no such file")
            elif inside(path) and not inside(dest):
                bad.append(f"{rel}:{n}: {t}: outside the repository")
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append(f"{rel}:{n}: {t}: no heading #{frag}")
    return bad


def generated(rel):
    """A report the harness wrote into a run's directory under docs/bench."""
    parts = rel.split("/")
    return parts[:2] == ["docs", "bench"] and len(parts) > 3 and rel.split("/", 3)[3] != "README.md"


def main(argv):
    if any(a.startswith("-") for a in argv):
        print("usage: tests/check-links.py [FILE.md...]", file=sys.stderr)
        return 2
    files = [os.path.abspath(a) for a in argv]
    if not files:
        out = subprocess.run(["git", "-C", REPO, "ls-files", "*.md"], check=True,
                             capture_output=True, text=True).stdout
        files = [os.path.join(REPO, p) for p in out.split() if not generated(p)]
    bad = []
    for p in files:
        if not os.path.isfile(p):
            print(f"check-links: no file {p}", file=sys.stderr)
            return 2
        bad += check(p)
    for b in bad:
        print(b)
    print(f"links: {len(files)} files, {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
