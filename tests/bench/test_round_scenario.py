# SPDX-License-Identifier: Apache-2.0
"""The L1 side of a benchmark round (bench/bench-round.sh):
its snapshot and delta functions, run by busybox sh on the host as they
run in L1, and its configuration table as bench/run.sh reads it."""

import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath

SCENARIO = os.path.join(benchpath.REPO, "bench", "bench-round.sh")
GUEST_LIB = os.path.join(benchpath.REPO, "tests", "testbed", "guest",
                         "lib.sh")
BUSYBOX = shutil.which("busybox")


def ash(script, **env):
    """Run script in busybox ash after sourcing the guest library and the
    scenario, as L1 does."""
    full = f". {GUEST_LIB}\n. {SCENARIO}\n{script}"
    res = subprocess.run([BUSYBOX, "sh", "-c", full], capture_output=True,
                         text=True, timeout=60,
                         env={**os.environ, **env})
    if res.returncode != 0:
        raise AssertionError(f"ash failed ({res.returncode}): {res.stderr}")
    return res.stdout


def kv(text):
    return dict(line.split("=", 1) for line in text.split() if "=" in line)


def delta(before, after):
    """bench_delta of two snapshots given as text, as key -> value."""
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("b", before), ("a", after)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        return kv(ash(f"bench_delta {d}/b {d}/a"))


@unittest.skipUnless(BUSYBOX, "busybox not installed")
class RoundScenarioTest(unittest.TestCase):
    def test_delta(self):
        before = ("time 1000000000\nkvm exits 100\nkvm io_exits 10\n"
                  "task 99 50 qemu-system-x86\ntask 120 10 CPU 0/KVM\n"
                  "task 130 0 vhost-99\nmem 1000 500\n")
        # Thread ids out of order, as a shell glob lists them; a new thread.
        after = ("time 3500000000\nkvm exits 400\nkvm io_exits 12\n"
                 "task 120 210 CPU 0/KVM\ntask 130 40 vhost-99\n"
                 "task 99 60 qemu-system-x86\ntask 1000 5 worker\n"
                 "task 999 7 worker\nmem 300000 262144\n")
        out = delta(before, after)
        self.assertEqual(out["window_s"], "2.500")
        self.assertEqual(out["kvm_exits"], "300")
        self.assertEqual(out["exits_io"], "2")
        self.assertEqual(out["cpu_s.CPU_0_KVM"], "2.00")
        self.assertEqual(out["cpu_s.vhost"], "0.40")
        self.assertEqual(out["cpu_s.qemu-system-x86"], "0.10")
        # Same name: numbered in thread-id order, not glob order.
        self.assertEqual(out["cpu_s.worker"], "0.07")
        self.assertEqual(out["cpu_s.worker.2"], "0.05")
        self.assertEqual(out["mem_rss_kib"], "300000")
        self.assertEqual(out["mem_overhead_kib"], str(300000 - 262144))
        # Every KVM counter, not only the five named ones.
        self.assertEqual(out["kvm.exits"], "300")
        self.assertEqual(out["kvm.io_exits"], "2")

    def test_delta_all_counters_and_memory_split(self):
        # A boot's start: no VM yet, so no counters before.
        before = "time 0\n"
        after = ("time 2000000000\nkvm exits 50\nkvm insn_emulation 7\n"
                 "kvm halt_wakeup 3\nmem 270000 262144\n"
                 "memst RssAnon 265000\nmemst RssFile 5000\n"
                 "memst RssShmem 0\n")
        out = delta(before, after)
        self.assertEqual(out["kvm.insn_emulation"], "7")
        self.assertEqual(out["kvm.halt_wakeup"], "3")
        self.assertEqual(out["kvm_exits"], "50")
        self.assertEqual(out["mem_rss_anon_kib"], "265000")
        self.assertEqual(out["mem_rss_file_kib"], "5000")
        self.assertEqual(out["mem_anon_overhead_kib"], str(265000 - 262144))

    def test_delta_interface_drops(self):
        # udp64-h2g's loss: what L1's tap dropped in the window; an
        # interface that appeared inside it (a new tap) has no delta.
        before = ("time 0\nnet tap0.tx_dropped 40\n"
                  "net tap0.rx_dropped 0\n")
        after = ("time 1000000000\nnet tap0.tx_dropped 57\n"
                 "net tap0.rx_dropped 0\nnet tap1.tx_dropped 9\n")
        out = delta(before, after)
        self.assertEqual(out["net.tap0.tx_dropped"], "17")
        self.assertEqual(out["net.tap0.rx_dropped"], "0")
        self.assertNotIn("net.tap1.tx_dropped", out)

    def test_snapshot_of_a_live_process(self):
        proc = subprocess.Popen(["sleep", "30"])
        try:
            out = ash(f"BENCH_MEM_KIB=262144 bench_snap {proc.pid}")
        finally:
            proc.kill()
            proc.wait()
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("time "))
        self.assertIn(f"task {proc.pid} ", out)
        self.assertTrue(any(line.startswith("mem ") for line in lines))
        kinds = {line.split()[1] for line in lines
                 if line.startswith("memst ")}
        self.assertEqual(kinds, {"RssAnon", "RssFile", "RssShmem"})
        # The host's interfaces but lo, each direction's drops.
        nets = {line.split()[1] for line in lines if line.startswith("net ")}
        ifaces = [i for i in os.listdir("/sys/class/net") if i != "lo"]
        self.assertEqual(nets, {f"{i}.{d}_dropped" for i in ifaces
                                for d in ("rx", "tx")})

    def test_relay_finds_init_after_firmware_escapes(self):
        # -M pc: SeaBIOS leaves terminal escapes before L2's first line.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "in"), "w") as f:
                f.write("\033c\033[?7l\033[2JSKIFF-L2: init uptime=6.24\r\n"
                        "SKIFF-BENCH-L2: ready\n")
            ash(f"BENCH_VMM_PID=$$ BENCH_MEM_KIB=1 bench_relay {d} "
                f"<{d}/in >/dev/null")
            self.assertTrue(os.path.exists(os.path.join(d, "init.snap")))
            self.assertTrue(os.path.exists(os.path.join(d, "ready.ns")))

    def test_qemu_options(self):
        with tempfile.TemporaryDirectory() as d:
            script = ('bench_qemu_opts "$@"; '
                      'echo "m=$vm_m k=$vm_k nic=$vm_nic o=$vm_o"')
            def opts(*words):
                return ash(f"BENCH_KCACHE={d}; set -- {' '.join(words)}; "
                           + script).strip()
            self.assertEqual(opts("vhost=on"),
                             "m=microvm,pcie=on k=/l2/vmlinuz "
                             "nic=virtio-net-pci o=,vhost=on")
            self.assertEqual(opts("vhost=off", "machine=pc", "nic=e1000"),
                             "m=pc k=/l2/vmlinuz nic=e1000 o=,vhost=off")
            # kernel=pvh without a cached vmlinux: no kernel (the caller
            # fails the configuration), then with one.
            self.assertIn(" k= ", opts("kernel=pvh"))
            open(os.path.join(d, "vmlinux-00ab"), "w").close()
            self.assertIn(f" k={d}/vmlinux-00ab ", opts("kernel=pvh"))

    def test_kvmtool_options(self):
        script = 'bench_kvmtool_opts "$@"; echo "n=$vm_n"'
        self.assertEqual(ash("set --; " + script).strip(),
                         "n=mode=tap,tapif=tap0,guest_mac=02:73:6b:69:66:00")
        self.assertEqual(ash("set -- vhost=1; " + script).strip(),
                         "n=mode=tap,tapif=tap0,guest_mac=02:73:6b:69:66:00,"
                         "vhost=1")

    def test_config_table(self):
        out = ash('for c in skiff-trap qemu-vhost-on native-veth nosuch; do '
                  'echo "$c=[$(bench_config_line $c)]"; done')
        self.assertIn("skiff-trap=[skiff --no-ioeventfd]", out)
        self.assertIn("qemu-vhost-on=[qemu vhost=on]", out)
        self.assertIn("native-veth=[native]", out)
        self.assertIn("nosuch=[]", out)
        out = ash('for c in qemu-rtc qemu-rtc-pvh skiff-unpack-guest; do '
                  'echo "$c=[$(bench_config_line $c)]"; done')
        self.assertIn("qemu-rtc=[qemu vhost=off machine=microvm,pcie=on,"
                      "rtc=on]", out)
        self.assertIn("kernel=pvh]", out)
        self.assertIn("skiff-unpack-guest=[skiff --unpack guest]", out)
        out = ash('for c in kvmtool kvmtool-vhost; do '
                  'echo "$c=[$(bench_config_line $c)]"; done')
        self.assertIn("kvmtool=[kvmtool]", out)
        self.assertIn("kvmtool-vhost=[kvmtool vhost=1]", out)
        out = ash('echo "[$(bench_config_line skiff-dma-fenced)]"')
        self.assertIn("[skiff bin=skiff-dma-fenced]", out)
        out = ash('echo "[$(bench_config_line skiff-base)]"')
        self.assertIn("[skiff bin=skiff-base]", out)


class RunPlanTest(unittest.TestCase):
    """bench/run.sh's choice of configurations, before any round runs."""

    def test_kvmtool_left_out_when_not_built(self):
        run = os.path.join(benchpath.REPO, "bench", "run.sh")
        env = {**os.environ, "TB_KVMTOOL": "/nonexistent/lkvm-static"}
        res = subprocess.run([run, "--configs", "kvmtool,kvmtool-vhost"],
                             capture_output=True, text=True, timeout=60,
                             env=env)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("kvmtool not built", res.stdout)
        self.assertIn("skipping kvmtool,kvmtool-vhost", res.stdout)
        self.assertIn("no configuration left to run", res.stderr)


if __name__ == "__main__":
    unittest.main()
