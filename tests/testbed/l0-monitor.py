#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Send one command to the running L0's QEMU monitor and print the answer.

usage: tests/testbed/l0-monitor.py [COMMAND]   (default: info registers -a)

For a frozen L1: where its vCPUs are (RIP, CR3, ...). L1's kernel runs with
KASLR, so symbolize RIPs against /proc/kallsyms of a live L1, not System.map.
The socket is .cache/testbed/l0.monitor (TB_CACHE), made by tb_boot_l0."""
import os
import socket
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
path = os.path.join(os.environ.get("TB_CACHE", os.path.join(root, ".cache/testbed")), "l0.monitor")
cmd = " ".join(sys.argv[1:]) or "info registers -a"
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(path)
except OSError as e:
    sys.exit(f"l0-monitor: cannot connect to {path}: {e.strerror} (is an L0 running?)")
s.settimeout(2)
s.sendall(cmd.encode() + b"\n")
out, end = b"", time.time() + 10
while time.time() < end:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode(errors="replace"))
