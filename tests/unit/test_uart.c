// SPDX-License-Identifier: Apache-2.0
/* 8250 UART: registers, interrupt raise and clear, loopback probe, FIFO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/bus.h"
#include "devices/legacy/uart8250.h"

struct sink {
	int level, raises;
	uint8_t out[64];
	size_t out_len;
};

static void sink_irq(void *opaque, int level)
{
	struct sink *s = opaque;
	if (level && !s->level)
		s->raises++;
	s->level = level;
}

static void sink_tx(void *opaque, const uint8_t *buf, size_t len)
{
	struct sink *s = opaque;
	memcpy(s->out + s->out_len, buf, len);
	s->out_len += len;
}

static uint8_t rd(struct uart8250 *u, unsigned int off)
{
	uint8_t v;
	uart_access(u, off, &v, false);
	return v;
}

static void wr(struct uart8250 *u, unsigned int off, uint8_t v)
{
	uart_access(u, off, &v, true);
}

static void test_thr_transmits(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	wr(&u, UART_RBR_THR, 'h');
	wr(&u, UART_RBR_THR, 'i');
	assert_int_equal(s.out_len, 2);
	assert_memory_equal(s.out, "hi", 2);
	assert_int_equal(s.level, 0); /* no interrupts enabled */
	assert_true(rd(&u, UART_LSR) & UART_LSR_THRE);
	assert_true(rd(&u, UART_LSR) & UART_LSR_TEMT);
}

static void test_divisor_latch(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	wr(&u, UART_LCR, UART_LCR_DLAB | 0x03);
	wr(&u, UART_RBR_THR, 0x01); /* DLL, not THR */
	wr(&u, UART_IER, 0x00);	    /* DLM, not IER */
	assert_int_equal(rd(&u, UART_RBR_THR), 0x01);
	assert_int_equal(s.out_len, 0);
	wr(&u, UART_LCR, 0x03);
	assert_int_equal(rd(&u, UART_LCR), 0x03);
	assert_int_equal(rd(&u, UART_IER), 0);
}

static void test_thre_interrupt_raise_and_clear(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_NO_INT);
	wr(&u, UART_IER, UART_IER_THRI); /* THR empty: interrupt at once */
	assert_int_equal(s.level, 1);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_THRI);
	assert_int_equal(s.level, 0); /* reading IIR acknowledged it */
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_NO_INT);
	wr(&u, UART_RBR_THR, 'x'); /* byte sent: THRE again */
	assert_int_equal(s.level, 1);
	wr(&u, UART_IER, 0); /* disabling drops the line */
	assert_int_equal(s.level, 0);
}

static void test_rx_interrupt_and_fifo(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	wr(&u, UART_IER, UART_IER_RDI);
	assert_int_equal(s.level, 0);
	assert_false(rd(&u, UART_LSR) & UART_LSR_DR);
	assert_int_equal(uart_receive(&u, (const uint8_t *)"ab", 2), 2);
	assert_int_equal(s.level, 1);
	assert_true(rd(&u, UART_LSR) & UART_LSR_DR);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_RDI);
	assert_int_equal(rd(&u, UART_RBR_THR), 'a');
	assert_int_equal(s.level, 1); /* still data */
	assert_int_equal(rd(&u, UART_RBR_THR), 'b');
	assert_int_equal(s.level, 0);
	assert_false(rd(&u, UART_LSR) & UART_LSR_DR);
}

static void test_rx_priority_over_thre(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	wr(&u, UART_IER, UART_IER_RDI | UART_IER_THRI);
	uart_receive(&u, (const uint8_t *)"z", 1);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_RDI);
	rd(&u, UART_RBR_THR);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0x0f, UART_IIR_THRI);
}

static void test_rx_fifo_full(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	uint8_t buf[UART_RX_FIFO + 10];
	memset(buf, 'q', sizeof(buf));
	assert_int_equal(uart_receive(&u, buf, sizeof(buf)), UART_RX_FIFO);
	wr(&u, UART_IIR_FCR, UART_FCR_ENABLE | UART_FCR_CLEAR_RX);
	assert_false(rd(&u, UART_LSR) & UART_LSR_DR);
	assert_int_equal(rd(&u, UART_IIR_FCR) & 0xc0, UART_IIR_FIFO);
}

static void test_loopback_probe(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	/* Linux's 8250 probe: loopback with RTS|OUT2 must read CTS|DCD. */
	wr(&u, UART_MCR, UART_MCR_LOOP | 0x0a);
	assert_int_equal(rd(&u, UART_MSR) & 0xf0, 0x90);
	wr(&u, UART_MCR, UART_MCR_LOOP | 0x05); /* DTR|OUT1 -> DSR|RI */
	assert_int_equal(rd(&u, UART_MSR) & 0xf0, 0x60);
	wr(&u, UART_RBR_THR, 'L'); /* looped back, not sent */
	assert_int_equal(s.out_len, 0);
	assert_int_equal(rd(&u, UART_RBR_THR), 'L');
	wr(&u, UART_MCR, 0);
	assert_int_equal(rd(&u, UART_MSR), 0xb0);
}

static void test_scratch_and_names(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	wr(&u, UART_SCR, 0x5a);
	assert_int_equal(rd(&u, UART_SCR), 0x5a);
	assert_string_equal(uart_reg_name(&u, 0, true), "THR");
	assert_string_equal(uart_reg_name(&u, 0, false), "RBR");
	assert_string_equal(uart_reg_name(&u, 5, false), "LSR");
}

/* A 2-byte OUT at SCR (0x3ff) writes SCR only: the byte past the last
 * register must not wrap onto THR and transmit. Reads give all ones there. */
static void test_wide_access_does_not_wrap(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	uart_init(&u, sink_irq, sink_tx, &s);
	uint8_t w[2] = {0x5a, 'X'};
	struct bus_access acc = {.offset = UART_SCR, .data = w, .len = 2, .is_write = true};
	uart_bus_handler(&u, &acc);
	assert_int_equal(s.out_len, 0);
	assert_int_equal(u.tx_bytes, 0);
	assert_int_equal(rd(&u, UART_SCR), 0x5a);
	uint8_t r[4] = {0};
	acc = (struct bus_access){.offset = UART_MSR, .data = r, .len = 4, .is_write = false};
	uart_bus_handler(&u, &acc);
	assert_int_equal(r[1], 0x5a);
	assert_int_equal(r[2], 0xff);
	assert_int_equal(r[3], 0xff);

	/* Through the bus, as a vCPU dispatches it: the bus drops it whole. */
	struct bus bus;
	bus_init(&bus);
	struct bus_region reg = {
	    .base = 0x3f8, .len = 8, .handler = uart_bus_handler, .opaque = &u};
	assert_int_equal(bus_register(&bus, BUS_PIO, &reg), 0);
	uint16_t v = 0x4142;
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x3ff, &v, 2, true, 0));
	assert_int_equal(s.out_len, 0);
	assert_int_equal(rd(&u, UART_SCR), 0x5a);
	bus_destroy(&bus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thr_transmits),
	    cmocka_unit_test(test_divisor_latch),
	    cmocka_unit_test(test_thre_interrupt_raise_and_clear),
	    cmocka_unit_test(test_rx_interrupt_and_fifo),
	    cmocka_unit_test(test_rx_priority_over_thre),
	    cmocka_unit_test(test_rx_fifo_full),
	    cmocka_unit_test(test_loopback_probe),
	    cmocka_unit_test(test_scratch_and_names),
	    cmocka_unit_test(test_wide_access_does_not_wrap),
	};
	return cmocka_run_group_tests_name("uart8250", tests, NULL, NULL);
}
