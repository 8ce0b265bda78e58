// SPDX-License-Identifier: Apache-2.0
/* The i8042 keyboard controller (src/devices/legacy/i8042.c) through the trap
 * table as the vCPU loop drives it: port I/O of every width (1..8 bytes)
 * at every port from 0x5c to 0x6b (the device owns 0x60 and 0x64),
 * string I/O (count accesses), interleaved with host Ctrl-Alt-Del.
 *
 * Checked beyond ASan/UBSan: the output queue never exceeds its bound;
 * the IRQ line is high exactly when a keyboard byte waits and the guest
 * enabled the interrupt; AUX (absent) stays disabled; an access wider
 * than a byte, or outside the two ports, changes nothing. */
#include <string.h>

#include "core/bus.h"
#include "devices/legacy/i8042.h"
#include "fuzz_common.h"

static int irq_level;

static void on_irq(void *opaque, int level)
{
	(void)opaque;
	irq_level = level;
}

static void on_reset(void *opaque)
{
	(void)opaque;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct i8042 k;
	struct bus b;
	struct bus_region rd = {
	    .base = I8042_DATA_PORT, .len = 1, .handler = i8042_bus_handler, .opaque = &k};
	struct bus_region rc = {
	    .base = I8042_CMD_PORT, .len = 1, .handler = i8042_bus_handler, .opaque = &k};

	fz_begin_noram(data, size);
	i8042_init(&k, on_irq, on_reset, NULL);
	irq_level = 0;
	bus_init(&b);
	if (bus_register(&b, BUS_PIO, &rd) < 0 || bus_register(&b, BUS_PIO, &rc) < 0)
		abort();
	while (fz_more()) {
		uint8_t op = fz_u8();
		if ((op & 0x0f) == 0x0f) {
			i8042_ctrl_alt_del(&k);
			FZ_CHECK(irq_level == k.irq_level);
			continue;
		}
		uint32_t port = 0x5c + fz_u8() % 16, len = 1 + op % 8;
		uint32_t count = op & 0x40 ? 1 + fz_u8() % 4 : 1;
		bool wr = op & 0x80;
		for (uint32_t c = 0; c < count; c++) {
			uint8_t d[8];
			fz_bytes(d, sizeof(d));
			struct i8042 before = k;
			bool ours = len == 1 && (port == I8042_DATA_PORT || port == I8042_CMD_PORT);
			bus_dispatch(&b, BUS_PIO, port, d, len, wr, 0);
			if (!ours) {
				FZ_CHECK(k.q_count == before.q_count && k.ctr == before.ctr);
				FZ_CHECK(k.status == before.status && k.pending == before.pending);
			}
			FZ_CHECK(k.q_count <= I8042_QUEUE && k.q_head < I8042_QUEUE);
			FZ_CHECK(k.ctr & I8042_CTR_AUXDIS);
			int want = k.q_count && !k.q[k.q_head].aux && (k.ctr & I8042_CTR_KBDINT);
			FZ_CHECK(irq_level == want && k.irq_level == want);
		}
	}
	bus_destroy(&b);
	i8042_destroy(&k);
	return 0;
}
