// SPDX-License-Identifier: Apache-2.0
/* i8042 keyboard controller: the commands Linux's i8042 and atkbd drivers
 * send, the reset pulse, Ctrl-Alt-Del and its IRQ, the bounded queue, and
 * random guest accesses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/bus.h"
#include "devices/legacy/i8042.h"
#include "x86/acpi.h"
#include "x86/aml.h"
#include "x86/layout.h"

struct sink {
	int level, raises, resets;
};

static void sink_irq(void *opaque, int level)
{
	struct sink *s = opaque;
	if (level && !s->level)
		s->raises++;
	s->level = level;
}

static void sink_reset(void *opaque)
{
	((struct sink *)opaque)->resets++;
}

static uint8_t rd(struct i8042 *k, uint16_t port)
{
	uint8_t v = 0;
	i8042_access(k, port, &v, 1, false);
	return v;
}

static void wr(struct i8042 *k, uint16_t port, uint8_t v)
{
	i8042_access(k, port, &v, 1, true);
}

static void cmd(struct i8042 *k, uint8_t c)
{
	wr(k, I8042_CMD_PORT, c);
}

/* Reads every waiting byte into out; returns how many. */
static size_t drain(struct i8042 *k, uint8_t *out, size_t max)
{
	size_t n = 0;
	while ((rd(k, I8042_CMD_PORT) & I8042_STR_OBF) && n < max)
		out[n++] = rd(k, I8042_DATA_PORT);
	return n;
}

static void test_self_test(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	assert_int_equal(rd(&k, I8042_CMD_PORT) & I8042_STR_OBF, 0);
	cmd(&k, 0xaa);
	uint8_t st = rd(&k, I8042_CMD_PORT);
	assert_true(st & I8042_STR_OBF);
	assert_true(st & I8042_STR_SYS);
	assert_true(st & I8042_STR_CMD);
	assert_int_equal(rd(&k, I8042_DATA_PORT), 0x55);
	assert_int_equal(rd(&k, I8042_CMD_PORT) & I8042_STR_OBF, 0);
	cmd(&k, 0xab); /* keyboard interface test */
	assert_int_equal(rd(&k, I8042_DATA_PORT), 0x00);
	i8042_destroy(&k);
}

static void test_ctr_read_write(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	cmd(&k, 0x20);
	uint8_t ctr = rd(&k, I8042_DATA_PORT);
	assert_true(ctr & I8042_CTR_KBDINT);
	assert_true(ctr & I8042_CTR_AUXDIS);
	assert_int_equal(ctr & I8042_CTR_XLATE, 0);
	cmd(&k, 0x60);
	wr(&k, I8042_DATA_PORT, 0x45);
	assert_int_equal(rd(&k, I8042_CMD_PORT) & I8042_STR_CMD, 0); /* last write: data */
	assert_int_equal(rd(&k, I8042_CMD_PORT) & I8042_STR_OBF, 0); /* not a keyboard byte */
	cmd(&k, 0x20);
	assert_int_equal(rd(&k, I8042_DATA_PORT), 0x45 | I8042_CTR_AUXDIS);
	cmd(&k, 0xad); /* disable keyboard */
	cmd(&k, 0x20);
	assert_true(rd(&k, I8042_DATA_PORT) & I8042_CTR_KBDDIS);
	cmd(&k, 0xae);
	cmd(&k, 0x20);
	assert_int_equal(rd(&k, I8042_DATA_PORT) & I8042_CTR_KBDDIS, 0);
	i8042_destroy(&k);
}

/* How Linux's i8042_check_aux finds there is no AUX port: the loop
 * command echoes as AUX data, but enabling AUX leaves AUXDIS set. */
static void test_no_aux_port(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	cmd(&k, 0xd3);
	wr(&k, I8042_DATA_PORT, 0x5a);
	uint8_t st = rd(&k, I8042_CMD_PORT);
	assert_true(st & I8042_STR_OBF);
	assert_true(st & I8042_STR_AUXDATA);
	assert_int_equal(s.raises, 0); /* AUX data never raises the keyboard IRQ */
	assert_int_equal(rd(&k, I8042_DATA_PORT), 0x5a);
	cmd(&k, 0xa8);
	cmd(&k, 0x20);
	assert_true(rd(&k, I8042_DATA_PORT) & I8042_CTR_AUXDIS);
	i8042_destroy(&k);
}

static void test_reset_pulse(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	cmd(&k, 0xff); /* pulses nothing: Linux's null command */
	cmd(&k, 0xd1);
	wr(&k, I8042_DATA_PORT, 0xdf); /* Linux's A20 gate: reset line high */
	assert_int_equal(s.resets, 0);
	cmd(&k, 0xfe);
	assert_int_equal(s.resets, 1);
	cmd(&k, 0xd1);
	wr(&k, I8042_DATA_PORT, 0xde);
	assert_int_equal(s.resets, 2);
	wr(&k, I8042_DATA_PORT, 0xfe); /* on the data port it is a keyboard byte */
	assert_int_equal(s.resets, 2);
	i8042_destroy(&k);
}

static void test_atkbd_probe(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	uint8_t out[8];
	i8042_init(&k, sink_irq, sink_reset, &s);
	wr(&k, I8042_DATA_PORT, 0xf2); /* get ID */
	assert_int_equal(s.level, 1);
	assert_int_equal(drain(&k, out, sizeof(out)), 3);
	assert_memory_equal(out, "\xfa\xab\x83", 3);
	assert_int_equal(s.raises, 3); /* an edge per byte */
	assert_int_equal(s.level, 0);
	wr(&k, I8042_DATA_PORT, 0xed); /* set LEDs, then its parameter */
	wr(&k, I8042_DATA_PORT, 0x00);
	assert_int_equal(drain(&k, out, sizeof(out)), 1);
	assert_int_equal(out[0], 0xfa);
	wr(&k, I8042_DATA_PORT, 0xf0); /* which scancode set? */
	wr(&k, I8042_DATA_PORT, 0x00);
	assert_int_equal(drain(&k, out, sizeof(out)), 2);
	assert_memory_equal(out, "\xfa\x02", 2);
	wr(&k, I8042_DATA_PORT, 0xff); /* reset */
	assert_int_equal(drain(&k, out, sizeof(out)), 2);
	assert_memory_equal(out, "\xfa\xaa", 2);
	wr(&k, I8042_DATA_PORT, 0xf4); /* enable: acknowledged */
	assert_int_equal(drain(&k, out, sizeof(out)), 1);
	assert_int_equal(out[0], 0xfa);
	i8042_destroy(&k);
}

static const uint8_t cad_set2[] = {0x14, 0x11, 0xe0, 0x71, 0xe0, 0xf0,
				   0x71, 0xf0, 0x11, 0xf0, 0x14};
static const uint8_t cad_set1[] = {0x1d, 0x38, 0xe0, 0x53, 0xe0, 0xd3, 0xb8, 0x9d};

static void test_ctrl_alt_del(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	uint8_t out[I8042_QUEUE];
	i8042_init(&k, sink_irq, sink_reset, &s);
	assert_int_equal(i8042_ctrl_alt_del(&k), 0);
	assert_int_equal(s.level, 1);
	assert_int_equal(drain(&k, out, sizeof(out)), sizeof(cad_set2));
	assert_memory_equal(out, cad_set2, sizeof(cad_set2));
	assert_int_equal(s.raises, (int)sizeof(cad_set2));

	/* Translated by the controller when the guest asks for it. */
	cmd(&k, 0x60);
	wr(&k, I8042_DATA_PORT, I8042_CTR_KBDINT | I8042_CTR_XLATE);
	assert_int_equal(i8042_ctrl_alt_del(&k), 0);
	assert_int_equal(drain(&k, out, sizeof(out)), sizeof(cad_set1));
	assert_memory_equal(out, cad_set1, sizeof(cad_set1));
	i8042_destroy(&k);
}

static void test_irq_follows_ctr(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	cmd(&k, 0x60);
	wr(&k, I8042_DATA_PORT, 0);
	assert_int_equal(i8042_ctrl_alt_del(&k), 0);
	assert_int_equal(s.level, 0); /* disabled: the keys wait */
	cmd(&k, 0x60);
	wr(&k, I8042_DATA_PORT, I8042_CTR_KBDINT);
	assert_int_equal(s.level, 1);
	i8042_destroy(&k);
}

/* The driver's next data read after a controller command is its reply,
 * even with keys waiting. */
static void test_reply_before_keys(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	assert_int_equal(i8042_ctrl_alt_del(&k), 0);
	cmd(&k, 0xaa);
	assert_int_equal(rd(&k, I8042_DATA_PORT), 0x55);
	assert_int_equal(rd(&k, I8042_DATA_PORT), cad_set2[0]);
	i8042_destroy(&k);
}

static void test_queue_bound(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	assert_int_equal(i8042_ctrl_alt_del(&k), 0);
	assert_int_equal(i8042_ctrl_alt_del(&k), -1); /* no room for all 11 */
	assert_int_equal(k.q_count, sizeof(cad_set2));
	for (int i = 0; i < 100; i++) {
		cmd(&k, 0xd2);
		wr(&k, I8042_DATA_PORT, (uint8_t)i);
	}
	assert_int_equal(k.q_count, I8042_QUEUE);
	assert_int_equal(k.dropped, 100 - (I8042_QUEUE - sizeof(cad_set2)));
	for (int i = 0; i < 100; i++)
		cmd(&k, 0x20); /* replies push out the newest byte */
	assert_int_equal(k.q_count, I8042_QUEUE);
	i8042_destroy(&k);
}

static void test_wide_and_foreign_accesses(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	i8042_init(&k, sink_irq, sink_reset, &s);
	uint8_t w[4] = {0xfe, 0xfe, 0xfe, 0xfe};
	i8042_access(&k, I8042_CMD_PORT, w, 2, true);
	i8042_access(&k, I8042_CMD_PORT, w, 4, true);
	i8042_access(&k, 0x61, w, 1, true);
	assert_int_equal(s.resets, 0);
	cmd(&k, 0xaa);
	memset(w, 0, sizeof(w));
	i8042_access(&k, I8042_DATA_PORT, w, 2, false);
	assert_memory_equal(w, "\xff\xff", 2);
	assert_int_equal(k.q_count, 1); /* the reply is still there */
	assert_int_equal(k.ignored, 4);
	i8042_destroy(&k);
}

/* Random guest traffic through the trap table: never more than the queue
 * holds, and the IRQ line always tells whether a keyboard byte waits
 * with the interrupt enabled. */
static void test_random_accesses(void **state)
{
	(void)state;
	struct sink s = {0};
	struct i8042 k;
	struct bus bus;
	i8042_init(&k, sink_irq, sink_reset, &s);
	bus_init(&bus);
	struct bus_region data = {
	    .base = I8042_DATA_PORT, .len = 1, .handler = i8042_bus_handler, .opaque = &k};
	struct bus_region ctl = {
	    .base = I8042_CMD_PORT, .len = 1, .handler = i8042_bus_handler, .opaque = &k};
	assert_int_equal(bus_register(&bus, BUS_PIO, &data), 0);
	assert_int_equal(bus_register(&bus, BUS_PIO, &ctl), 0);
	uint32_t x = 12345;
	for (int i = 0; i < 200000; i++) {
		x = x * 1103515245u + 12345u;
		uint8_t d[8];
		memset(d, (int)(x >> 24), sizeof(d));
		uint32_t len = 1u << ((x >> 8) & 3);
		uint16_t port = (x >> 12) & 1 ? I8042_CMD_PORT : I8042_DATA_PORT;
		bus_dispatch(&bus, BUS_PIO, port, d, len, (x >> 13) & 1, 0);
		if ((x >> 14 & 0xff) == 0)
			i8042_ctrl_alt_del(&k);
		assert_true(k.q_count <= I8042_QUEUE);
		assert_true(k.q_head < I8042_QUEUE);
		int want = k.q_count && !k.q[k.q_head].aux && (k.ctr & I8042_CTR_KBDINT);
		assert_int_equal(s.level, want);
	}
	assert_true(s.resets > 0); /* the walk did reach the reset pulse */
	bus_destroy(&bus);
	i8042_destroy(&k);
}

static const uint8_t *memfind(const uint8_t *h, size_t hn, const void *n, size_t nn)
{
	for (size_t i = 0; i + nn <= hn; i++)
		if (!memcmp(h + i, n, nn))
			return h + i;
	return NULL;
}

/* What makes Linux probe the controller and map IRQ 1 on skiff's
 * hardware-reduced ACPI: the FADT's 8042 flag and a PNP0303 device with
 * both ports and the IRQ. */
static void test_acpi_describes_kbd(void **state)
{
	(void)state;
	static uint8_t buf[0x10000];
	assert_int_not_equal(acpi_build(buf, LAYOUT_BIOS_START, sizeof(buf), 1, 0, 0), 0);
	const uint8_t *fadt = memfind(buf, sizeof(buf), "FACP", 4);
	assert_non_null(fadt);
	uint16_t boot_arch;
	memcpy(&boot_arch, fadt + 109, 2); /* IAPC_BOOT_ARCH */
	assert_true(boot_arch & 0x2);	   /* 8042 */
	const uint8_t *dsdt = memfind(buf, sizeof(buf), "DSDT", 4);
	assert_non_null(dsdt);
	uint32_t len;
	memcpy(&len, dsdt + 4, 4);
	assert_int_equal(acpi_checksum(dsdt, len), 0);
	const uint8_t *kbd = memfind(dsdt, len, "KBD_", 4);
	assert_non_null(kbd);
	size_t rest = len - (size_t)(kbd - dsdt);
	uint32_t hid = aml_eisaid("PNP0303");
	assert_non_null(memfind(kbd, rest, &hid, 4));
	uint8_t crs[32];
	size_t n = aml_res_io(crs, I8042_DATA_PORT, 1);
	n += aml_res_io(crs + n, I8042_CMD_PORT, 1);
	n += aml_res_irq(crs + n, 1);
	assert_non_null(memfind(kbd, rest, crs, n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_test),
	    cmocka_unit_test(test_ctr_read_write),
	    cmocka_unit_test(test_no_aux_port),
	    cmocka_unit_test(test_reset_pulse),
	    cmocka_unit_test(test_atkbd_probe),
	    cmocka_unit_test(test_ctrl_alt_del),
	    cmocka_unit_test(test_irq_follows_ctr),
	    cmocka_unit_test(test_reply_before_keys),
	    cmocka_unit_test(test_queue_bound),
	    cmocka_unit_test(test_wide_and_foreign_accesses),
	    cmocka_unit_test(test_random_accesses),
	    cmocka_unit_test(test_acpi_describes_kbd),
	};
	return cmocka_run_group_tests_name("i8042", tests, NULL, NULL);
}
