/* 8250 UART: registers, interrupt raise and clear, loopback probe, FIFO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/bus.h"
#include "devices/uart8250.h"

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

/* Found by fuzz_uart (tests/fuzz/corpus/uart/regress-wide-wrap): a wide
 * access that runs past the UART's 8 ports must not wrap onto its own
 * registers. A 3-byte OUT at base+6 once wrote MSR, SCR and THR (sending
 * a byte); a 2-byte IN at base+7 read SCR and RBR (eating a byte). */
static void test_wide_access_stops_at_last_port(void **state)
{
	(void)state;
	struct sink s = {0};
	struct uart8250 u;
	struct bus b;
	struct bus_region r = {
	    .base = 0x3f8, .len = 8, .handler = uart_bus_handler, .opaque = &u, .name = "uart0"};
	uart_init(&u, sink_irq, sink_tx, &s);
	bus_init(&b);
	assert_int_equal(bus_register(&b, BUS_PIO, &r), 0);

	uint8_t out[3] = {0x11, 0x22, 0x33};
	bus_dispatch(&b, BUS_PIO, 0x3fe, out, 3, true, 0);
	assert_int_equal(s.out_len, 0);		       /* nothing transmitted */
	assert_int_equal(rd(&u, UART_SCR), 0x22);      /* the byte for base+7 */
	assert_int_equal(rd(&u, UART_IIR_FCR) & 1, 1); /* no THRE raised */

	uint8_t in = 'k', got[2];
	assert_int_equal(uart_receive(&u, &in, 1), 1);
	bus_dispatch(&b, BUS_PIO, 0x3ff, got, 2, false, 0);
	assert_int_equal(got[0], 0x22);
	assert_int_equal(got[1], 0xff);	 /* nobody's port */
	assert_int_equal(u.rx_count, 1); /* the byte is still there */
	assert_int_equal(rd(&u, UART_RBR_THR), 'k');
	bus_destroy(&b);
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
	    cmocka_unit_test(test_wide_access_stops_at_last_port),
	};
	return cmocka_run_group_tests_name("uart8250", tests, NULL, NULL);
}
