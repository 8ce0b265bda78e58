// SPDX-License-Identifier: Apache-2.0
/* The UART's and the i8042's snapshot state (uart_save/restore,
 * i8042_save/restore): a round trip gives a device the guest cannot tell
 * from the first, and hostile state is refused with the device untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/snap.h"
#include "devices/legacy/i8042.h"
#include "devices/legacy/uart8250.h"

static int irq_level;

static void irq(void *opaque, int level)
{
	(void)opaque;
	irq_level = level;
}

static uint8_t urd(struct uart8250 *u, unsigned int off)
{
	uint8_t v;
	uart_access(u, off, &v, false);
	return v;
}

static void uwr(struct uart8250 *u, unsigned int off, uint8_t v)
{
	uart_access(u, off, &v, true);
}

static uint8_t krd(struct i8042 *k, uint16_t port)
{
	uint8_t v = 0;
	i8042_access(k, port, &v, 1, false);
	return v;
}

static void kwr(struct i8042 *k, uint16_t port, uint8_t v)
{
	i8042_access(k, port, &v, 1, true);
}

/* The payload a save writes (at most max bytes), and its length. */
static size_t saved(int (*save)(void *, struct snap_writer *, uint32_t, uint32_t, char *, size_t),
		    void *dev, uint8_t *out, size_t max)
{
	struct snap_writer w;
	snap_writer_init(&w);
	char err[200];
	assert_int_equal(save(dev, &w, SNAP_ID_UART, 0, err, sizeof(err)), 0);
	size_t n;
	const uint8_t *b = snap_writer_image(&w, &n);
	struct snap_image img;
	assert_int_equal(snap_parse(&img, b, n, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_UART, 0);
	assert_non_null(s);
	assert_true(s->len <= max);
	memcpy(out, s->data, s->len);
	size_t len = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return len;
}

/* A guest mid-conversation: divisor set, interrupts on, the FIFO wrapped
 * round with bytes in it, a THR interrupt owed. */
static void uart_busy(struct uart8250 *u)
{
	uart_init(u, irq, NULL, NULL);
	uwr(u, UART_LCR, UART_LCR_DLAB);
	uwr(u, UART_RBR_THR, 1);
	uwr(u, UART_IER, 0);
	uwr(u, UART_LCR, 0x03);
	uwr(u, UART_SCR, 0x5a);
	uint8_t fill[UART_RX_FIFO - 3];
	memset(fill, 'x', sizeof(fill));
	uart_receive(u, fill, sizeof(fill));
	for (size_t i = 0; i < sizeof(fill); i++)
		urd(u, UART_RBR_THR);
	uart_receive(u, (const uint8_t *)"hello", 5); /* wraps the ring */
	uwr(u, UART_IER, UART_IER_RDI | UART_IER_THRI);
}

static void test_uart_round_trip(void **state)
{
	(void)state;
	struct uart8250 a, b;
	uart_busy(&a);
	uint8_t buf[1024];
	size_t n = saved(uart_save, &a, buf, sizeof(buf));
	irq_level = 0;
	uart_init(&b, irq, NULL, NULL);
	char err[200];
	assert_int_equal(uart_restore(&b, buf, n, err, sizeof(err)), 0);
	assert_int_equal(irq_level, 1); /* the restored FIFO's interrupt is up */
	for (unsigned int off = UART_IER; off < UART_NR_REGS; off++)
		if (off != UART_IIR_FCR) /* reading IIR acknowledges THRE */
			assert_int_equal(urd(&b, off), urd(&a, off));
	assert_int_equal(urd(&b, UART_IIR_FCR), urd(&a, UART_IIR_FCR));
	for (int i = 0; i < 5; i++)
		assert_int_equal(urd(&b, UART_RBR_THR), "hello"[i]);
	assert_false(urd(&b, UART_LSR) & UART_LSR_DR);
	uwr(&b, UART_LCR, UART_LCR_DLAB);
	assert_int_equal(urd(&b, UART_RBR_THR), 1); /* the divisor */
}

static void test_uart_hostile_refused(void **state)
{
	(void)state;
	struct uart8250 a, b;
	uart_busy(&a);
	uint8_t buf[1024], bad[1024];
	size_t n = saved(uart_save, &a, buf, sizeof(buf));
	uart_init(&b, irq, NULL, NULL);
	char err[200];
	assert_int_equal(uart_restore(&b, buf, n - 1, err, sizeof(err)), -1);
	assert_string_equal(err, "uart: saved state is 271 bytes, expected 272");
	memcpy(bad, buf, n);
	bad[8] = 0x01, bad[9] = 0x01; /* 257 bytes in a 256-byte FIFO */
	assert_int_equal(uart_restore(&b, bad, n, err, sizeof(err)), -1);
	assert_string_equal(err, "uart: saved state is not valid");
	assert_int_equal(urd(&b, UART_SCR), 0); /* untouched */
	assert_int_equal(urd(&b, UART_LSR) & UART_LSR_DR, 0);
	/* Every byte at every value of a few: refused, or a device that still
	 * answers every register without reading past its FIFO. */
	static const uint8_t vals[] = {0x00, 0x01, 0x10, 0x7f, 0x80, 0xff};
	for (size_t i = 0; i < n; i++)
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(bad, buf, n);
			bad[i] = vals[v];
			uart_init(&b, irq, NULL, NULL);
			if (uart_restore(&b, bad, n, err, sizeof(err)) < 0)
				continue;
			uwr(&b, UART_LCR, 0); /* DLAB off: RBR reads the FIFO */
			for (int r = 0; r < UART_RX_FIFO + 2; r++)
				urd(&b, UART_RBR_THR);
			assert_int_equal(urd(&b, UART_LSR) & UART_LSR_DR, 0);
		}
}

/* Keyboard bytes waiting behind a wrapped queue head, a controller
 * command waiting for its data byte. */
static void i8042_busy(struct i8042 *k)
{
	i8042_init(k, irq, NULL, NULL);
	for (int i = 0; i < 10; i++) {
		kwr(k, I8042_CMD_PORT, 0xd2); /* echo as keyboard data */
		kwr(k, I8042_DATA_PORT, (uint8_t)i);
	}
	for (int i = 0; i < 10; i++)
		krd(k, I8042_DATA_PORT);
	assert_int_equal(i8042_ctrl_alt_del(k), 0);
	kwr(k, I8042_CMD_PORT, 0xd3); /* an AUX byte last */
	kwr(k, I8042_DATA_PORT, 0x77);
	kwr(k, I8042_CMD_PORT, 0x60); /* waits for the controller byte */
}

static void test_i8042_round_trip(void **state)
{
	(void)state;
	struct i8042 a, b;
	i8042_busy(&a);
	uint8_t buf[256];
	size_t n = saved(i8042_save, &a, buf, sizeof(buf));
	irq_level = 0;
	i8042_init(&b, irq, NULL, NULL);
	char err[200];
	assert_int_equal(i8042_restore(&b, buf, n, err, sizeof(err)), 0);
	assert_int_equal(irq_level, 1);
	/* The pending 0x60 takes the next data byte on both. */
	kwr(&a, I8042_DATA_PORT, 0x45);
	kwr(&b, I8042_DATA_PORT, 0x45);
	for (int i = 0; i < I8042_QUEUE + 1; i++) {
		assert_int_equal(krd(&b, I8042_CMD_PORT), krd(&a, I8042_CMD_PORT));
		assert_int_equal(krd(&b, I8042_DATA_PORT), krd(&a, I8042_DATA_PORT));
	}
	kwr(&a, I8042_CMD_PORT, 0x20);
	kwr(&b, I8042_CMD_PORT, 0x20);
	assert_int_equal(krd(&b, I8042_DATA_PORT), 0x45 | I8042_CTR_AUXDIS);
	assert_int_equal(krd(&a, I8042_DATA_PORT), 0x45 | I8042_CTR_AUXDIS);
	i8042_destroy(&a);
	i8042_destroy(&b);
}

static void test_i8042_hostile_refused(void **state)
{
	(void)state;
	struct i8042 a, b;
	i8042_busy(&a);
	uint8_t buf[256], bad[256];
	size_t n = saved(i8042_save, &a, buf, sizeof(buf));
	char err[200];
	i8042_init(&b, irq, NULL, NULL);
	memcpy(bad, buf, n);
	bad[3] = 0xaa; /* a pending command that takes no data */
	assert_int_equal(i8042_restore(&b, bad, n, err, sizeof(err)), -1);
	assert_string_equal(err, "i8042: saved state is not valid");
	memcpy(bad, buf, n);
	bad[5] = I8042_QUEUE + 1;
	assert_int_equal(i8042_restore(&b, bad, n, err, sizeof(err)), -1);
	assert_int_equal(krd(&b, I8042_CMD_PORT) & I8042_STR_OBF, 0); /* untouched */
	for (size_t i = 0; i < n; i++)
		for (unsigned int v = 0; v < 256; v += 15) {
			memcpy(bad, buf, n);
			bad[i] = (uint8_t)v;
			i8042_destroy(&b);
			i8042_init(&b, irq, NULL, NULL);
			if (i8042_restore(&b, bad, n, err, sizeof(err)) < 0)
				continue;
			for (int r = 0; r < I8042_QUEUE + 1; r++)
				krd(&b, I8042_DATA_PORT);
			assert_int_equal(krd(&b, I8042_CMD_PORT) & I8042_STR_OBF, 0);
		}
	i8042_destroy(&a);
	i8042_destroy(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uart_round_trip),
	    cmocka_unit_test(test_uart_hostile_refused),
	    cmocka_unit_test(test_i8042_round_trip),
	    cmocka_unit_test(test_i8042_hostile_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
