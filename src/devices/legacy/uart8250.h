// SPDX-License-Identifier: Apache-2.0
/* A 16550A-compatible UART (8250 family), enough for Linux's 8250 driver:
 * 8 registers, a receive FIFO, THRE/RDA interrupts, loopback for the
 * driver's probe. Transport-independent: the owner supplies the IRQ line
 * and where transmitted bytes go. */
#ifndef SKIFF_UART8250_H
#define SKIFF_UART8250_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bus.h"

#define UART_RX_FIFO 256

/* Register offsets */
enum {
	UART_RBR_THR = 0, /* DLL when LCR.DLAB */
	UART_IER = 1,	  /* DLM when LCR.DLAB */
	UART_IIR_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_MSR = 6,
	UART_SCR = 7,
	UART_NR_REGS = 8,
};

#define UART_IER_RDI	  0x01
#define UART_IER_THRI	  0x02
#define UART_IIR_NO_INT	  0x01
#define UART_IIR_THRI	  0x02
#define UART_IIR_RDI	  0x04
#define UART_IIR_FIFO	  0xc0
#define UART_LCR_DLAB	  0x80
#define UART_MCR_LOOP	  0x10
#define UART_LSR_DR	  0x01
#define UART_LSR_THRE	  0x20
#define UART_LSR_TEMT	  0x40
#define UART_FCR_ENABLE	  0x01
#define UART_FCR_CLEAR_RX 0x02

typedef void (*uart_irq_fn)(void *opaque, int level);
typedef void (*uart_tx_fn)(void *opaque, const uint8_t *buf, size_t len);

struct uart8250 {
	pthread_mutex_t lock;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thr_ipending; /* THR-empty interrupt owed to the driver */
	uint8_t rx[UART_RX_FIFO];
	unsigned int rx_head, rx_count;
	int irq_level;
	uart_irq_fn set_irq;
	uart_tx_fn tx;
	void *opaque;
	uint64_t tx_bytes, rx_bytes, rx_dropped;
};

void uart_init(struct uart8250 *u, uart_irq_fn set_irq, uart_tx_fn tx, void *opaque);
/* One register access (offset 0..7, one byte; others are ignored and
 * read all ones). */
void uart_access(struct uart8250 *u, unsigned int offset, uint8_t *data, bool is_write);
/* Host input; returns how many bytes fit in the receive FIFO. */
size_t uart_receive(struct uart8250 *u, const uint8_t *buf, size_t len);
/* Snapshot state, with struct dev_ops' save and restore signatures (dev:
 * the uart8250): the registers and the receive FIFO. */
struct snap_writer;
int uart_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	      size_t errlen);
int uart_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
/* Trap-table glue. */
void uart_bus_handler(void *opaque, struct bus_access *acc);
const char *uart_reg_name(void *opaque, uint64_t offset, bool is_write);

#endif
