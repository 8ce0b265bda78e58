#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Says whose a failed testbed run is: the testbed's (L0's software CPU,
which run-scenarios.sh may retry) or skiff's (which fails at once).

usage: tests/testbed/classify-failure.py LOG [FAIL_LINE]

LOG is the failed run's console log (.cache/testbed/logs/NAME.log),
FAIL_LINE run-one.sh's "FAIL NAME: why (Ns)" line. Prints one line,
"testbed: KIND: detail" (exit 0) or "skiff: KIND: detail" (exit 1); a
missing log is exit 2 with a one-line error.

Only three testbed signatures are recognised (tests/testbed/FAILURES.md):
  l1-stuck            tb_l0_watch's "testbed: L1 stuck" line: l1-stuck.py
                      found an L1 CPU halted over a deliverable interrupt
  l1-never-ready      no "SKIFF-L1: ready" line: L1 did not boot
  l2-double-fault     an L2 double fault at entry_SYSCALL_64+0x0 with RSP
                      on the user stack (the frame the bench caught thrice)
Anything that names skiff wins over them: another oops (L1's or L2's), a
scenario's FAIL line, skiff's non-zero exit, a timeout while the L2
watcher saw a skiff thread running. Whatever is not recognised is skiff's
too: a retry must never hide a bug."""
import re
import sys

OOPS = re.compile(r"(BUG: |Oops: |general protection fault|Kernel panic|kernel BUG at|"
                  r"traps: PANIC: double fault|double fault: )")
DF_RIP = re.compile(r"RIP: 0010:entry_SYSCALL_64\+0x0/")
USER_RSP = re.compile(r"RSP: 0018:00007f[0-9a-f]{10}\b")
TS = re.compile(r"^\[\s*[0-9.]+\]\s*")


def oopses(lines):
    """Each oops as (its first line, whether it is the known double-fault
    frame). An oops's frame is its first dozen lines (to CR2): lines in it
    are not oopses of their own (a double fault prints two headers)."""
    out, frame_end = [], -1
    for i, line in enumerate(lines):
        body = TS.sub("", line)
        if i <= frame_end or not OOPS.match(body):
            continue
        frame = "\n".join(lines[i:i + 12])
        known = "double fault" in body and DF_RIP.search(frame) and USER_RSP.search(frame)
        out.append((body, bool(known)))
        frame_end = i + 11
    return out


def skiff_exit(lines):
    """vmm_boot_l2's "skiff exited N; its stderr:" and skiff's first
    error line after it, or None. 0 is not a failure; 143 is L1's own
    timeout of skiff (a hang), still skiff's."""
    for i, line in enumerate(lines):
        m = re.search(r"vmm_boot_l2: skiff exited (\d+)", line)
        if m and m.group(1) != "0":
            err = next((x for x in lines[i + 1:i + 21] if x.startswith("skiff: ")), "")
            return f"skiff exited {m.group(1)}" + (f": {err}" if err else "")
    return None


def busy_skiff_thread(lines):
    """The L2 watcher's first skiff thread in state R: "l2-watch: task TID
    (comm) R utime stime wchan=...", when the VMM is skiff."""
    for line in lines:
        m = re.match(r"l2-watch: task (\d+) \(([^)]*)\) R ", line)
        if m:
            return f"thread {m.group(2)} running"
    return None


def classify(log, fail_line=""):
    lines = log.replace("\r", "").splitlines()
    why = re.sub(r"^FAIL \S+: ", "", fail_line.strip())
    why = re.sub(r" \(\d+s\)$", "", why)
    found = oopses(lines)
    other = [o for o, known in found if not known]
    if other:
        return "skiff", "guest-oops", other[0]
    fail = next((x for x in lines if "SKIFF-RESULT: FAIL" in x), None)
    exited = skiff_exit(lines)
    if found:  # only the known frame: the scenario's failure follows from it
        return "testbed", "l2-double-fault", "L2 double fault at entry_SYSCALL_64+0x0, RSP on the user stack"
    if fail:
        return "skiff", "scenario-fail", fail.split("SKIFF-RESULT: FAIL", 1)[1].strip()
    if exited:
        return "skiff", "skiff-exit", exited
    stuck = next((x for x in lines if x.startswith("testbed: L1 stuck")), None)
    if stuck:
        return "testbed", "l1-stuck", stuck[len("testbed: L1 stuck: "):]
    if not any("SKIFF-L1: ready" in x for x in lines):
        return "testbed", "l1-never-ready", why or "no SKIFF-L1: ready line"
    busy = busy_skiff_thread(lines)
    if busy and ("killed" in why or "no result" in why):
        return "skiff", "busy-timeout", f"{why}; {busy}"
    return "skiff", "unrecognised", why or "no recognised testbed signature"


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: classify-failure.py LOG [FAIL_LINE]", file=sys.stderr)
        return 2
    try:
        with open(argv[1], errors="replace") as f:
            log = f.read()
    except OSError as e:
        print(f"classify-failure: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    whose, kind, detail = classify(log, argv[2] if len(argv) == 3 else "")
    print(f"{whose}: {kind}: {detail}")
    return 0 if whose == "testbed" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
