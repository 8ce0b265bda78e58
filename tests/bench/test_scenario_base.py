# SPDX-License-Identifier: Apache-2.0
"""A testbed scenario built on one that is built on another
(tests/testbed/lib.sh, SCENARIO_BASE; vfio-multi-qemu on vfio-multi on
vfio, issue 37.5): the host reads every base's settings, deepest first,
and L1 and L2 get every base's functions; a loop is an error. With
scenario files of its own (TB_SCENARIOS)."""

import os
import subprocess
import tempfile
import unittest

import benchpath

LIB = os.path.join(benchpath.REPO, "tests", "testbed", "lib.sh")

SCENARIOS = {
    # the full scenario: settings only it sets, and a function
    "full": 'TIMEOUT=100\nL1_EXTRA_APPEND="iommu=pt"\nEXPECT=full\n'
            'f_full() { :; }\nl2() { :; }\n',
    # its quick form overrides one setting
    "quick": "SCENARIO_BASE=full\nTIMEOUT=200\nf_quick() { :; }\n",
    # built on the quick form
    "other": "SCENARIO_BASE=quick\nSLOW=1\nl1() { :; }\n",
    "loop": "SCENARIO_BASE=loop\n",
}


class ScenarioBaseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "scenarios")
        os.makedirs(self.dir)
        for name, text in SCENARIOS.items():
            with open(os.path.join(self.dir, name + ".sh"), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def lib(self, script):
        return subprocess.run(
            ["bash", "-c", f'. "$0"; {script}', LIB], capture_output=True,
            text=True, timeout=20,
            env=dict(os.environ, TB_SCENARIOS=self.dir,
                     TB_CACHE=os.path.join(self.tmp.name, "cache")))

    def settings(self, name):
        res = self.lib(f'eval "$(tb_scenario_settings {name})"; '
                       'echo "$S_TIMEOUT|$S_SLOW|$S_L1_APPEND|$S_EXPECT|$S_HAS_L2"')
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout.strip()

    def test_settings_of_every_base(self):
        self.assertEqual(self.settings("full"), "100|0|iommu=pt|full|1")
        self.assertEqual(self.settings("quick"), "200|0|iommu=pt|full|1")
        # two deep: the full scenario's L1 kernel arguments, EXPECT and l2
        # reach it, the quick form's TIMEOUT overrides the full one's
        self.assertEqual(self.settings("other"), "200|1|iommu=pt|full|1")

    def test_base_files_deepest_first(self):
        res = self.lib(f'tb_scenario_bases "{self.dir}/other.sh"')
        self.assertEqual(res.stdout.splitlines(),
                         [f"{self.dir}/full.sh", f"{self.dir}/quick.sh"])
        res = self.lib(f'tb_scenario_bases "{self.dir}/full.sh"')
        self.assertEqual((res.returncode, res.stdout), (0, ""))

    def test_a_loop_is_an_error(self):
        res = self.lib(f'tb_scenario_bases "{self.dir}/loop.sh"')
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("SCENARIO_BASE: more than 4 deep", res.stderr)


if __name__ == "__main__":
    unittest.main()
