# SPDX-License-Identifier: Apache-2.0
"""tests/testbed/lib.sh's tb_l0_watch, beside a fake L0 monitor that
answers with the first lost wake-up caught (fixtures/l0_dump_stuck.txt)
or with the same dump's CPUs idle. It must find a stuck L1 CPU when L1's
console is only quiet (one stuck CPU leaves the other printing, so L1 is
never silent for long: 2026-12-07's freeze-count life 1), and in the last
dump it takes before the bound; a healthy L1 is never stopped."""

import os
import subprocess
import tempfile
import unittest

import benchpath

TB = os.path.join(benchpath.REPO, "tests", "testbed")

# Answers a monitor command with the fixture's sample-1 answer to it;
# "quit" leaves a mark. IDLE=1 empties every IRR (a healthy idle L1).
MONITOR = r"""#!/usr/bin/env python3
import os, re, sys
cmd = " ".join(sys.argv[1:])
cache = os.environ["TB_CACHE"]
if cmd == "quit":
    open(os.path.join(cache, "quit"), "w").close()
    sys.exit(0)
if cmd == "info status":
    print("VM status: running")
    sys.exit(0)
text = open(os.environ["FIXTURE"]).read()
parts = re.split(r"(?:\(qemu\) )?=== testbed: L0 monitor, sample \d+: (.*?) ===\n", text)
answers = dict(zip(parts[1::2], parts[2::2]))
out = answers.get(cmd, "")
if os.environ.get("IDLE") == "1":
    out = re.sub(r"^IRR\s+.*$", "IRR\t (none)", out, flags=re.M)
sys.stdout.write(out)
"""


class Watch(unittest.TestCase):
    def watch(self, bound, idle=False, **env):
        """Runs tb_l0_watch on a console log that stays quiet; returns
        what it wrote to LOG.l0 and whether it told L0 to quit."""
        with tempfile.TemporaryDirectory() as d:
            tb = os.path.join(d, "tests", "testbed")
            os.makedirs(tb)
            for name in ("lib.sh", "l1-stuck.py"):
                os.symlink(os.path.join(TB, name), os.path.join(tb, name))
            with open(os.path.join(tb, "l0-monitor.py"), "w") as f:
                f.write(MONITOR)
            cache = os.path.join(d, "cache")
            os.makedirs(cache)
            log = os.path.join(d, "console.log")
            with open(log, "w") as f:
                f.write("SKIFF-L1: ready uptime=4.4\n")
            env = dict(os.environ, TB_CACHE=cache, IDLE="1" if idle else "0",
                       FIXTURE=os.path.join(benchpath.FIXTURES, "l0_dump_stuck.txt"), **env)
            script = f'. "{tb}/lib.sh"; tb_l0_watch "{log}" {bound}'
            subprocess.run(["bash", "-c", script], env=env, timeout=120, check=True)
            with open(log + ".l0") as f:
                return f.read(), os.path.exists(os.path.join(cache, "quit"))

    def test_quiet_console_is_looked_at(self):
        # L1 never silent for TB_L1_SILENT_S, only quiet: still found.
        out, quit = self.watch(30, TB_L1_CHECK_S="5", TB_L1_SILENT_S="1000")
        self.assertIn("testbed: L1 stuck: cpu 0: halted, IF=1, IRR 236 251 above PPR 0x10"
                      " (L0 lost the wake-up), quiet for ", out)
        self.assertTrue(quit)

    def test_last_dump_is_judged(self):
        # No look before the bound's last dump: that dump says it.
        out, quit = self.watch(20, TB_L1_CHECK_S="1000", TB_L1_SILENT_S="1000")
        lines = [x for x in out.splitlines() if x.startswith("testbed: L1 stuck")]
        self.assertEqual(len(lines), 1, out)
        self.assertTrue(lines[0].startswith("testbed: L1 stuck: cpu 0: halted, IF=1, IRR 236 251"
                                            " above PPR 0x10 (L0 lost the wake-up), the last dump,"
                                            " at "), lines[0])
        self.assertFalse(quit)  # the bound ends L0 anyway

    def test_healthy_l1_not_stopped(self):
        out, quit = self.watch(40, idle=True, TB_L1_CHECK_S="5", TB_L1_SILENT_S="10")
        self.assertNotIn("L1 stuck", out)
        self.assertIn("=== testbed: L1 silent for 10 s", out)
        self.assertFalse(quit)

    def test_bench_only_says_so(self):
        out, quit = self.watch(30, TB_L1_CHECK_S="5", TB_L1_STOP="0")
        self.assertIn("testbed: L1 stuck: cpu 0", out)
        self.assertFalse(quit)


if __name__ == "__main__":
    unittest.main()
