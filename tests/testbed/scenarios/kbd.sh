# SPDX-License-Identifier: Apache-2.0
# The i8042 keyboard controller: Linux's i8042 and atkbd bind to it, and
# Ctrl+Alt+Del on that keyboard restarts L2 (its /init is a shell, so the
# kernel handles the keys itself), which ends skiff as a reboot. L2 types
# the keys through the controller's "write keyboard output buffer"
# command (0xd2), which skiff delivers like keystrokes, with IRQ 1.
TIMEOUT=130
EXPECT="SKIFF-L2: init
SKIFF-L2: kbd bound"

l1() {
	skiff_boot_l2 --cpus 1 --stats || { fail "skiff exited $VMM_RC, want 0"; return; }
	# What the controller cost the boot, in exits (for the log).
	grep i8042 /tmp/vmm.err
	grep -q "^skiff: guest requested a reboot; exiting" /tmp/vmm.err ||
		{ fail "no reboot after Ctrl+Alt+Del"; return; }
	pass
}

# kbd_type OCTAL...: each byte as if the keyboard sent it.
kbd_type() {
	for b in "$@"; do
		printf '\322' | dd of=/dev/port bs=1 seek=100 conv=notrunc 2>/dev/null
		printf "%b" "\\$b" | dd of=/dev/port bs=1 seek=96 conv=notrunc 2>/dev/null
	done
}

l2() {
	# Linux numbers GSI 1 as it likes (irq 25 on skiff's ACPI).
	if ! dmesg | grep -q "serio: i8042 KBD port at 0x60,0x64 irq"; then
		dmesg | grep -i -E "8042|serio|pnp|atkbd|keyboard"
		fail "no i8042 KBD port in dmesg"
		return
	fi
	wait_for /sys/bus/serio/drivers/atkbd/serio0 ||
		{ fail "atkbd did not bind"; return; }
	echo "SKIFF-L2: kbd bound"
	# Set 2: Ctrl (14), Alt (11), Del (e0 71) pressed.
	kbd_type 024 021 340 161
	sleep 20
	fail "still running 20 s after Ctrl+Alt+Del"
}
