#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Says whose a failed testbed run is: the testbed's (L0's software CPU,
which run-scenarios.sh may retry) or skiff's (which fails at once).

usage: tests/testbed/classify-failure.py LOG [FAIL_LINE]

LOG is the failed run's console log (.cache/testbed/logs/NAME.log),
FAIL_LINE run-one.sh's "FAIL NAME: why (Ns)" line. Prints one line,
"testbed: KIND: detail" (exit 0) or "skiff: KIND: detail" (exit 1); a
missing log is exit 2 with a one-line error.

Only four testbed signatures are recognised (tests/testbed/FAILURES.md):
  l1-stuck            tb_l0_watch's "testbed: L1 stuck" line: l1-stuck.py
                      found an L1 CPU halted over a deliverable interrupt
  l1-never-ready      no "SKIFF-L1: ready" line: L1 did not boot (in a
                      scenario of several trials and phases, one L0 boot
                      each: as many boots without it as trials failed)
  l2-double-fault     an L2 double fault at entry_SYSCALL_64+0x0 with RSP
                      on the user stack (the frame the bench caught thrice)
  l1-irq-after-vmrun  an L1 oops whose trace shows an interrupt taken at
                      the instruction right after VMRUN in L1's KVM
                      (__svm_vcpu_run), where #VMEXIT has cleared GIF and
                      no CPU may take one: L0's TCG delivered it, before
                      KVM restored L1's GS base, and L1's per-CPU access
                      faulted until its stack ran out (in skiff's and in
                      QEMU's vCPU threads alike)
Anything that names skiff wins over them: another oops (L1's or L2's), a
scenario's FAIL line or skiff's non-zero exit before a known oops (after
it, they follow from it), a timeout while the L2 watcher saw a skiff
thread running. Whatever is not recognised is skiff's
too: a retry must never hide a bug."""
import re
import sys

OOPS = re.compile(r"(BUG: |Oops: |general protection fault|Kernel panic|kernel BUG at|"
                  r"traps: PANIC: double fault|double fault: )")
DF_RIP = re.compile(r"RIP: 0010:entry_SYSCALL_64\+0x0/")
USER_RSP = re.compile(r"RSP: 0018:00007f[0-9a-f]{10}\b")
TS = re.compile(r"^\[\s*[0-9.]+\]\s*")
# run-one.sh's line before each L0 boot of a scenario with trials/phases.
BOOT_MARK = re.compile(r"^=== testbed: \S+ trial \d+ phase \d+")
TRIALS_FAILED = re.compile(r"^(\d+) of \d+ trials failed")


def boots_never_ready(lines):
    """How many of the log's L0 boots (one, or one per run-one.sh marker)
    never printed "SKIFF-L1: ready"."""
    starts = [i for i, x in enumerate(lines) if BOOT_MARK.match(x)] or [0]
    ends = starts[1:] + [len(lines)]
    return sum(1 for a, b in zip(starts, ends)
               if not any("SKIFF-L1: ready" in x for x in lines[a:b]))


# The frame an interrupt hit, when it is the instruction after VMRUN
# (0f 01 d8): "RIP: 0010:__svm_vcpu_run+0x9c/..." then its Code line.
AFTER_VMRUN = re.compile(r"RIP: 0010:__svm_vcpu_run\+0x[0-9a-f]+/\S+ \[kvm_amd\]\n"
                         r"(?:\[\s*[0-9.]+\]\s*)?Code: [0-9a-f ]*\b0f 01 d8 <")


def oops_end(lines, i):
    """Where the oops starting at line i ends: past its "---[ end trace"
    and the "Kernel panic" that may follow it (one oops, not two); without
    an end trace, its frame's first dozen lines (to CR2)."""
    for j in range(i + 1, min(len(lines), i + 5000)):
        if "---[ end trace" in lines[j]:
            for k in range(j + 1, min(len(lines), j + 25)):
                if "Kernel panic - not syncing" in lines[k]:
                    return k + 1
            return j + 1
    return i + 12


def oopses(lines):
    """Each oops as (its first line, the testbed kind it is or None, its
    line's index). Lines
    in an oops are not oopses of their own (a double fault prints two
    headers, a fatal oops ends in a panic line)."""
    out, i = [], 0
    while i < len(lines):
        body = TS.sub("", lines[i])
        if not OOPS.match(body):
            i += 1
            continue
        end = oops_end(lines, i)
        frame = "\n".join(lines[i:i + 12])
        block = "\n".join(lines[i:end])
        kind = None
        if "double fault" in body and DF_RIP.search(frame) and USER_RSP.search(frame):
            kind = "l2-double-fault"
        elif AFTER_VMRUN.search(block):
            kind = "l1-irq-after-vmrun"
        out.append((body, kind, i))
        i = end
    return out


def skiff_exit(lines):
    """vmm_boot_l2's "skiff exited N; its stderr:" and skiff's first
    error line after it, with the line's index, or (None, None). 0 is not
    a failure; 143 is L1's own timeout of skiff (a hang), still skiff's."""
    for i, line in enumerate(lines):
        m = re.search(r"vmm_boot_l2: skiff exited (\d+)", line)
        if m and m.group(1) != "0":
            err = next((x for x in lines[i + 1:i + 21] if x.startswith("skiff: ")), "")
            return f"skiff exited {m.group(1)}" + (f": {err}" if err else ""), i
    return None, None


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
    other = [o for o, kind, _ in found if not kind]
    if other:
        return "skiff", "guest-oops", other[0]
    fail_i = next((i for i, x in enumerate(lines) if "SKIFF-RESULT: FAIL" in x), None)
    fail = lines[fail_i] if fail_i is not None else None
    exited, exit_i = skiff_exit(lines)
    # Only known frames: the scenario's failure follows from them, unless
    # it came first.
    first = found[0][2] if found else None
    if found and (fail_i is None or fail_i > first) and (exit_i is None or exit_i > first):
        kind = next((k for _, k, _ in found if k == "l1-irq-after-vmrun"), found[0][1])
        if kind == "l1-irq-after-vmrun":
            return ("testbed", kind, "L1 took an interrupt right after VMRUN, GIF clear (L0's TCG): "
                    + next(o for o, k, _ in found if k == kind))
        return "testbed", "l2-double-fault", "L2 double fault at entry_SYSCALL_64+0x0, RSP on the user stack"
    if fail:
        return "skiff", "scenario-fail", fail.split("SKIFF-RESULT: FAIL", 1)[1].strip()
    if exited:
        return "skiff", "skiff-exit", exited
    stuck = next((x for x in lines if x.startswith("testbed: L1 stuck")), None)
    if stuck:
        return "testbed", "l1-stuck", stuck[len("testbed: L1 stuck: "):]
    # Every failed trial must be a boot that never got ready: one that
    # did and failed is not explained by it.
    m = TRIALS_FAILED.match(why)
    never = boots_never_ready(lines)
    if never and never >= (int(m.group(1)) if m else 1):
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
