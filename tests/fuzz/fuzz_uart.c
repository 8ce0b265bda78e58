// SPDX-License-Identifier: Apache-2.0
/* The 16550A UART (src/devices/legacy/uart8250.c) through the trap table as the
 * vCPU loop drives it: port I/O of every width (1..8 bytes) at every port
 * from just below COM1 to just past it, string I/O (count accesses),
 * interleaved with host input (uart_receive).
 *
 * Checked beyond ASan/UBSan, against a per-byte model of the access: a
 * byte outside the UART's 8 ports touches nothing (an access is routed
 * by its first port), so the transmitted
 * byte count grows exactly by the bytes that land on THR (with DLAB and
 * loopback off), and the scratch register holds the last byte written to
 * it; the receive FIFO never exceeds its size; the IRQ line follows the
 * interrupt identification. */
#include <string.h>

#include "core/bus.h"
#include "devices/legacy/uart8250.h"
#include "fuzz_common.h"

#define BASE 0x3f8

static uint64_t tx_seen;
static int irq_level;

static void on_irq(void *opaque, int level)
{
	(void)opaque;
	irq_level = level;
}

static void on_tx(void *opaque, const uint8_t *buf, size_t len)
{
	(void)opaque, (void)buf;
	tx_seen += len;
}

/* What a correct UART does with one write access, byte by byte. */
static void model_write(const struct uart8250 *u, uint32_t port, const uint8_t *d, uint32_t len,
			uint64_t *tx, int *scr)
{
	uint8_t lcr = u->lcr, mcr = u->mcr;
	/* The trap table routes an access by its first port, and drops one
	 * that runs past the region's end as a whole. */
	if (port < BASE || port >= BASE + 8 || port + len > BASE + 8)
		return;
	for (uint32_t i = 0; i < len; i++) {
		if (port + i >= BASE + 8)
			break;
		switch (port + i - BASE) {
		case UART_RBR_THR:
			if (!(lcr & UART_LCR_DLAB) && !(mcr & UART_MCR_LOOP))
				(*tx)++;
			break;
		case UART_LCR:
			lcr = d[i];
			break;
		case UART_MCR:
			mcr = d[i] & 0x1f;
			break;
		case UART_SCR:
			*scr = d[i];
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uart8250 u;
	struct bus b;
	struct bus_region r = {.base = BASE,
			       .len = 8,
			       .handler = uart_bus_handler,
			       .reg_name = uart_reg_name,
			       .opaque = &u,
			       .name = "uart0"};

	fz_begin_noram(data, size);
	uart_init(&u, on_irq, on_tx, NULL);
	tx_seen = 0;
	irq_level = 0;
	bus_init(&b);
	if (bus_register(&b, BUS_PIO, &r) < 0)
		abort();
	while (fz_more()) {
		uint8_t op = fz_u8();
		if ((op & 0x0f) == 0x0f) {
			uint8_t in[64];
			size_t n = fz_u8() % sizeof(in);
			fz_bytes(in, n);
			uart_receive(&u, in, n);
			continue;
		}
		uint32_t port = BASE - 4 + fz_u8() % 16, len = 1 + op % 8;
		uint32_t count = op & 0x40 ? 1 + fz_u8() % 4 : 1;
		bool wr = op & 0x80;
		for (uint32_t c = 0; c < count; c++) {
			uint8_t d[8];
			uint64_t tx = tx_seen;
			int scr = u.scr;
			fz_bytes(d, sizeof(d));
			if (wr)
				model_write(&u, port, d, len, &tx, &scr);
			bus_dispatch(&b, BUS_PIO, port, d, len, wr, 0);
			if (wr) {
				FZ_CHECK(tx_seen == tx);
				FZ_CHECK(u.scr == scr);
			}
			FZ_CHECK(u.rx_count <= UART_RX_FIFO && u.rx_head < UART_RX_FIFO);
			FZ_CHECK(irq_level == u.irq_level);
		}
	}
	bus_destroy(&b);
	pthread_mutex_destroy(&u.lock);
	return 0;
}
