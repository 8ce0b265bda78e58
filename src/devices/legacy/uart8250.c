#include "devices/legacy/uart8250.h"

#include <string.h>

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
