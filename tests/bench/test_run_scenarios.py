# SPDX-License-Identifier: Apache-2.0
"""tests/testbed/run-scenarios.sh's retry policy (issue 32.4) and budget
(issue 39.4), with a fake run-one.sh (TB_RUN_ONE), scenario files
(TB_SCENARIOS) and guest kernel (TB_KCACHE) of its own: only a testbed
signature gets a retry, the final line says how many and why, more than
two retries fail the run; and the real default suite's bounds, with a
retry of its two longest scenarios, within CI's 90 minutes (75 without
the retries)."""

import os
import re
import subprocess
import tempfile
import unittest

import benchpath

TB = os.path.join(benchpath.REPO, "tests", "testbed")
SCRIPT = os.path.join(TB, "run-scenarios.sh")

# The fake run-one.sh: what NAME does is in its name. stuck-once fails
# once with L1 stuck, then passes; stuck fails so every time; bug fails
# with a FAIL line from L1; ok passes.
FAKE = r"""#!/bin/bash
n=$1 c=$TB_CACHE/count.$1
mkdir -p "$TB_CACHE/logs"
echo x >>"$c"
log=$TB_CACHE/logs/$n.log
printf 'SKIFF-L1: ready uptime=4.1\r\n' >"$log"
case "$n:$(wc -l <"$c")" in
ok:* | stuck-once:2)
	echo "PASS $n (10s)"
	exit 0 ;;
stuck-once:1 | stuck*:*)
	echo "testbed: L1 stuck: cpu 0: halted, IF=1, IRR 236 above PPR 0x10 (L0 lost the wake-up), at 70 s" >>"$log"
	echo "FAIL $n: L1 stuck: cpu 0: halted, IF=1, IRR 236 above PPR 0x10 (L0 lost the wake-up), at 70 s; L0 stopped early (80s)"
	exit 1 ;;
bug*:*)
	printf 'SKIFF-RESULT: FAIL %s sha256 differs\r\n' "$n" >>"$log"
	echo "FAIL $n: sha256 differs (30s)"
	exit 1 ;;
esac
"""


class RetryPolicy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.env = dict(os.environ, TB_CACHE=os.path.join(d, "cache"),
                        TB_SCENARIOS=os.path.join(d, "scenarios"),
                        TB_KCACHE=os.path.join(d, "kernel"),
                        TB_RUN_ONE=os.path.join(d, "run-one.sh"))
        os.makedirs(os.path.join(d, "kernel", "boot"))
        os.makedirs(os.path.join(d, "scenarios"))
        for f in ("boot/vmlinuz-6.1.0-57-amd64", "linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb"):
            open(os.path.join(d, "kernel", f), "w").close()
        for n, t in (("ok", 120), ("stuck-once", 300), ("stuck", 200), ("bug", 100),
                     ("bug2", 100)):
            with open(os.path.join(d, "scenarios", n + ".sh"), "w") as f:
                f.write(f"TIMEOUT={t}\nl1() {{ pass; }}\n")
        with open(self.env["TB_RUN_ONE"], "w") as f:
            f.write(FAKE)
        os.chmod(self.env["TB_RUN_ONE"], 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def run_names(self, *names):
        res = subprocess.run(["bash", SCRIPT, *names], env=self.env, capture_output=True,
                             text=True, timeout=120)
        return res.returncode, res.stdout.splitlines()

    def runs(self, name):
        with open(os.path.join(self.env["TB_CACHE"], "count." + name)) as f:
            return len(f.readlines())

    def test_header(self):
        rc, out = self.run_names("ok")
        self.assertEqual(rc, 0)
        self.assertIn("testbed: guest kernel: linux-image-6.1.0-57-amd64 6.1.192-3", out)
        self.assertEqual(out[-1], "testbed: 1 passed, 0 failed; retried 0")

    def test_testbed_signature_retried_once(self):
        rc, out = self.run_names("ok", "stuck-once")
        self.assertEqual(rc, 0)
        self.assertEqual(self.runs("stuck-once"), 2)
        self.assertEqual(out[-1], "testbed: 2 passed, 0 failed; retried 1: stuck-once (l1-stuck)")
        self.assertTrue(os.path.exists(os.path.join(self.env["TB_CACHE"], "logs",
                                                    "stuck-once.failed.log")))

    def test_skiff_failure_not_retried(self):
        rc, out = self.run_names("bug", "ok")
        self.assertNotEqual(rc, 0)
        self.assertEqual(self.runs("bug"), 1)
        self.assertIn("testbed: bug failed, not retried: skiff: scenario-fail: bug sha256 differs",
                      out)
        self.assertEqual(out[-1], "testbed: 1 passed, 1 failed; retried 0")

    def test_a_failed_retry_fails_the_run(self):
        rc, out = self.run_names("stuck-once", "stuck", "ok")
        self.assertNotEqual(rc, 0)
        self.assertEqual(self.runs("stuck"), 2)
        self.assertEqual(out[-1], "testbed: 2 passed, 1 failed; retried 2: stuck-once (l1-stuck),"
                                  " stuck (l1-stuck)")

    def use_stuck_once(self, *names):
        """Scenarios NAMES that each fail once with L1 stuck, then pass."""
        for n in names:
            with open(os.path.join(self.env["TB_SCENARIOS"], n + ".sh"), "w") as f:
                f.write("TIMEOUT=100\nl1() { pass; }\n")
        with open(self.env["TB_RUN_ONE"], "w") as f:
            f.write(FAKE.replace("stuck-once:2)", "stuck-once*:2)")
                        .replace("stuck-once:1 |", "stuck-once*:1 |"))

    def test_two_retries_pass(self):
        # About 2 testbed failures per 100 lives: two in a 31-scenario
        # run come about once in 8 runs (FAILURES.md).
        self.use_stuck_once("stuck-once2")
        rc, out = self.run_names("stuck-once", "stuck-once2", "ok")
        self.assertEqual(rc, 0, out)
        self.assertEqual(out[-1], "testbed: 3 passed, 0 failed; retried 2: stuck-once (l1-stuck),"
                                  " stuck-once2 (l1-stuck)")

    def test_three_retries_fail_even_when_all_pass(self):
        self.use_stuck_once("stuck-once2", "stuck-once3")
        rc, out = self.run_names("stuck-once", "stuck-once2", "stuck-once3")
        self.assertNotEqual(rc, 0)
        self.assertTrue(out[-1].startswith("testbed: 3 passed, 0 failed; retried 3: "), out[-1])
        self.assertTrue(out[-1].endswith("; more than two retries fail the run"), out[-1])

    def test_bounds_line(self):
        rc, out = self.run_names("ok", "stuck-once", "bug")
        # 120 + 300 + 100 = 520 s; plus 300 + 120 = 940 s.
        self.assertIn("testbed: bounds: 3 scenarios sum to 8 min, 15 min with a retry of the"
                      " two longest (CI allows 90)", out)


class Budget(unittest.TestCase):
    def test_default_suite_fits_ci(self):
        res = subprocess.run(["bash", "-c", f". '{TB}/lib.sh'; "
                              "tb_bounds_budget $(tb_default_scenarios)"],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        total, worst = map(int, res.stdout.split())
        # Bounds are about 2x each scenario's pass in a loaded session-19
        # run (docs: tests/testbed/README.md); a freeze is ended within
        # 90 s by the L0 watcher, so a retry rarely costs its whole bound.
        # The worst case may take CI's whole 90 min since balloon and
        # vsock joined the default suite (issue 33.5): 73 min of bounds,
        # 89.5 with the two retries.
        self.assertLessEqual(total, 75 * 60, f"the default suite's bounds sum to {total} s")
        # Issue 37.5 (vfio-multi, 240 s) took the retry margin from 85 to
        # CI's 90 minutes: 4340 s, 5330 s with the retries.
        self.assertLessEqual(worst, 90 * 60,
                             f"the default suite's bounds sum to {total} s, {worst} s with a"
                             " retry of the two longest: over CI's 90 min")


if __name__ == "__main__":
    unittest.main()
