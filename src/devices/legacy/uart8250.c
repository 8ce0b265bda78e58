// SPDX-License-Identifier: Apache-2.0
#include "devices/legacy/uart8250.h"

#include <stdio.h>
#include <string.h>

#include "core/snap.h"

void uart_init(struct uart8250 *u, uart_irq_fn set_irq, uart_tx_fn tx, void *opaque)
{
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->lock, NULL);
	u->set_irq = set_irq;
	u->tx = tx;
	u->opaque = opaque;
	u->dll = 12; /* 9600 baud, the reset value firmware leaves */
}

/* Highest-priority pending interrupt as an IIR value (without FIFO bits). */
static uint8_t uart_iir(const struct uart8250 *u)
{
	if ((u->ier & UART_IER_RDI) && u->rx_count)
		return UART_IIR_RDI;
	if ((u->ier & UART_IER_THRI) && u->thr_ipending)
		return UART_IIR_THRI;
	return UART_IIR_NO_INT;
}

/* Drives the line from the register state; called with the lock held.
 * The line is level-modelled: it only changes when the state does. */
static void uart_update_irq(struct uart8250 *u)
{
	int level = uart_iir(u) != UART_IIR_NO_INT;
	if (level != u->irq_level) {
		u->irq_level = level;
		if (u->set_irq)
			u->set_irq(u->opaque, level);
	}
}

static void rx_push(struct uart8250 *u, uint8_t c)
{
	if (u->rx_count == UART_RX_FIFO) {
		u->rx_dropped++;
		return;
	}
	u->rx[(u->rx_head + u->rx_count) % UART_RX_FIFO] = c;
	u->rx_count++;
	u->rx_bytes++;
}

static uint8_t rx_pop(struct uart8250 *u)
{
	if (!u->rx_count)
		return 0;
	uint8_t c = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % UART_RX_FIFO;
	u->rx_count--;
	return c;
}

/* In loopback the modem outputs drive the inputs: DTR->DSR, RTS->CTS,
 * OUT1->RI, OUT2->DCD. Linux's probe checks exactly this mapping. */
static uint8_t uart_msr(const struct uart8250 *u)
{
	if (!(u->mcr & UART_MCR_LOOP))
		return 0xb0; /* DCD, DSR, CTS: a cable is plugged in */
	uint8_t m = u->mcr;
	return (uint8_t)(((m & 0x01) << 5) | ((m & 0x02) << 3) | ((m & 0x04) << 4) |
			 ((m & 0x08) << 4));
}

static void uart_write(struct uart8250 *u, unsigned int off, uint8_t v)
{
	switch (off) {
	case UART_RBR_THR:
		if (u->lcr & UART_LCR_DLAB) {
			u->dll = v;
			break;
		}
		if (u->mcr & UART_MCR_LOOP) {
			rx_push(u, v);
		} else {
			u->tx_bytes++;
			if (u->tx)
				u->tx(u->opaque, &v, 1);
		}
		/* Transmission is instant: THR is empty again at once. */
		u->thr_ipending = true;
		break;
	case UART_IER:
		if (u->lcr & UART_LCR_DLAB) {
			u->dlm = v;
			break;
		}
		/* Enabling THRI while THR is empty raises it immediately. */
		if (!(u->ier & UART_IER_THRI) && (v & UART_IER_THRI))
			u->thr_ipending = true;
		u->ier = v & 0x0f;
		break;
	case UART_IIR_FCR:
		u->fcr = v & 0xc9;
		if (v & UART_FCR_CLEAR_RX)
			u->rx_head = u->rx_count = 0;
		break;
	case UART_LCR:
		u->lcr = v;
		break;
	case UART_MCR:
		u->mcr = v & 0x1f;
		break;
	case UART_SCR:
		u->scr = v;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

static uint8_t uart_read(struct uart8250 *u, unsigned int off)
{
	uint8_t iir;
	switch (off) {
	case UART_RBR_THR:
		if (u->lcr & UART_LCR_DLAB)
			return u->dll;
		return rx_pop(u);
	case UART_IER:
		return (u->lcr & UART_LCR_DLAB) ? u->dlm : u->ier;
	case UART_IIR_FCR:
		iir = uart_iir(u);
		/* Reading IIR while it reports THRE acknowledges it. */
		if (iir == UART_IIR_THRI)
			u->thr_ipending = false;
		return iir | ((u->fcr & UART_FCR_ENABLE) ? UART_IIR_FIFO : 0);
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		return UART_LSR_THRE | UART_LSR_TEMT | (u->rx_count ? UART_LSR_DR : 0);
	case UART_MSR:
		return uart_msr(u);
	case UART_SCR:
		return u->scr;
	default:
		return 0xff;
	}
}

void uart_access(struct uart8250 *u, unsigned int offset, uint8_t *data, bool is_write)
{
	/* Past the 8 registers is nothing: a wide access must not wrap onto
	 * THR (a 2-byte OUT at SCR would otherwise transmit a byte). */
	if (offset >= UART_NR_REGS) {
		if (!is_write)
			*data = 0xff;
		return;
	}
	pthread_mutex_lock(&u->lock);
	if (is_write)
		uart_write(u, offset, *data);
	else
		*data = uart_read(u, offset);
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

size_t uart_receive(struct uart8250 *u, const uint8_t *buf, size_t len)
{
	size_t n = 0;
	pthread_mutex_lock(&u->lock);
	while (n < len && u->rx_count < UART_RX_FIFO)
		rx_push(u, buf[n++]);
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return n;
}

void uart_bus_handler(void *opaque, struct bus_access *acc)
{
	/* Wider accesses touch consecutive registers, as on real hardware;
	 * bytes past SCR are ignored (uart_access). */
	for (uint32_t i = 0; i < acc->len; i++)
		uart_access(opaque, (unsigned int)(acc->offset + i), &acc->data[i], acc->is_write);
}

const char *uart_reg_name(void *opaque, uint64_t offset, bool is_write)
{
	(void)opaque;
	static const char *rd[8] = {"RBR", "IER", "IIR", "LCR", "MCR", "LSR", "MSR", "SCR"};
	static const char *wr[8] = {"THR", "IER", "FCR", "LCR", "MCR", "LSR", "MSR", "SCR"};
	return offset < UART_NR_REGS ? (is_write ? wr : rd)[offset] : "none";
}

/* The saved form: fixed layout, the FIFO from its head. */
struct uart_state {
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr, thr_ipending;
	uint16_t rx_count;
	uint8_t zero[6];
	uint8_t rx[UART_RX_FIFO];
};
_Static_assert(sizeof(struct uart_state) == 16 + UART_RX_FIFO, "uart_state is packed");

int uart_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	      size_t errlen)
{
	struct uart8250 *u = dev;
	struct uart_state s = {0};
	pthread_mutex_lock(&u->lock);
	s = (struct uart_state){u->ier,
				u->lcr,
				u->mcr,
				u->scr,
				u->dll,
				u->dlm,
				u->fcr,
				u->thr_ipending,
				(uint16_t)u->rx_count,
				{0},
				{0}};
	for (unsigned int i = 0; i < u->rx_count; i++)
		s.rx[i] = u->rx[(u->rx_head + i) % UART_RX_FIFO];
	pthread_mutex_unlock(&u->lock);
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "uart: out of memory saving its state");
	return -1;
}

/* What uart_write can leave in each register, and nothing else. */
static int uart_state_check(const struct uart_state *s, char *err, size_t errlen)
{
	static const uint8_t zero[sizeof(s->zero)];
	if ((s->ier & ~0x0f) || (s->fcr & ~0xc9) || (s->mcr & ~0x1f) || s->thr_ipending > 1 ||
	    s->rx_count > UART_RX_FIFO || memcmp(s->zero, zero, sizeof(zero))) {
		snprintf(err, errlen, "uart: saved state is not valid");
		return -1;
	}
	return 0;
}

int uart_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct uart8250 *u = dev;
	struct uart_state s;
	if (len != sizeof(s)) {
		snprintf(err, errlen, "uart: saved state is %zu bytes, expected %zu", len,
			 sizeof(s));
		return -1;
	}
	memcpy(&s, data, sizeof(s));
	if (uart_state_check(&s, err, errlen) < 0)
		return -1;
	pthread_mutex_lock(&u->lock);
	u->ier = s.ier;
	u->lcr = s.lcr;
	u->mcr = s.mcr;
	u->scr = s.scr;
	u->dll = s.dll;
	u->dlm = s.dlm;
	u->fcr = s.fcr;
	u->thr_ipending = s.thr_ipending;
	u->rx_head = 0;
	u->rx_count = s.rx_count;
	memcpy(u->rx, s.rx, sizeof(u->rx));
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}
