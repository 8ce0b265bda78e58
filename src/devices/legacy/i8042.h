// SPDX-License-Identifier: Apache-2.0
/* An i8042 keyboard controller with a keyboard behind it, as much as
 * Linux's i8042 and atkbd drivers need to bind, and what Firecracker uses
 * it for: the guest's reset pulse (command 0xfe, `reboot=k`) and a
 * host-injected Ctrl-Alt-Del.
 *
 * Ports: data (0x60) and status/command (0x64), one byte wide; wider
 * accesses are ignored and read all ones. There is no AUX (mouse) port:
 * its disable bit in the controller byte stays set, which is how Linux
 * tells. Output bytes wait in a bounded queue; the keyboard IRQ line is
 * high while a keyboard byte waits and the controller byte enables it.
 *
 * Threads: vCPU threads (port access) and the controller (Ctrl-Alt-Del)
 * under one lock; set_irq and reset run with it held. */
#ifndef SKIFF_I8042_H
#define SKIFF_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"

#define I8042_DATA_PORT 0x60
#define I8042_CMD_PORT	0x64
#define I8042_QUEUE	16 /* a PS/2 keyboard's own buffer */

/* Status register (port 0x64 read) */
#define I8042_STR_OBF	  0x01 /* a byte waits at port 0x60 */
#define I8042_STR_SYS	  0x04 /* self-test passed */
#define I8042_STR_CMD	  0x08 /* last write went to port 0x64 */
#define I8042_STR_UNLOCK  0x10 /* keyboard not inhibited */
#define I8042_STR_AUXDATA 0x20 /* the waiting byte comes from AUX */

/* Controller byte (commands 0x20/0x60) */
#define I8042_CTR_KBDINT 0x01
#define I8042_CTR_AUXINT 0x02
#define I8042_CTR_SYS	 0x04
#define I8042_CTR_KBDDIS 0x10
#define I8042_CTR_AUXDIS 0x20
#define I8042_CTR_XLATE	 0x40 /* controller translates set 2 into set 1 */

typedef void (*i8042_irq_fn)(void *opaque, int level);
typedef void (*i8042_reset_fn)(void *opaque);

struct i8042 {
	pthread_mutex_t lock;
	uint8_t status, ctr, outp;
	uint8_t pending;     /* controller command waiting for its data byte */
	uint8_t kbd_pending; /* keyboard command waiting for its parameter */
	struct {
		uint8_t byte;
		bool aux;
	} q[I8042_QUEUE];
	unsigned int q_head, q_count;
	int irq_level;
	i8042_irq_fn set_irq;
	i8042_reset_fn reset;
	void *opaque;
	uint64_t dropped, ignored, resets;
};

void i8042_init(struct i8042 *k, i8042_irq_fn set_irq, i8042_reset_fn reset, void *opaque);
void i8042_destroy(struct i8042 *k);
/* One access at `port` (0x60 or 0x64) of `len` bytes. */
void i8042_access(struct i8042 *k, uint16_t port, uint8_t *data, uint32_t len, bool is_write);
/* Queues the Ctrl+Alt+Del presses and releases and raises the keyboard
 * IRQ if the guest enabled it; -1 if the queue has no room for them all. */
int i8042_ctrl_alt_del(struct i8042 *k);
/* Snapshot state, with struct dev_ops' save and restore signatures (dev:
 * the i8042): status, controller byte, output port, pending commands and
 * the output queue. */
struct snap_writer;
int i8042_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	       size_t errlen);
int i8042_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
/* Trap-table glue: one region per port, both with the device as opaque. */
void i8042_bus_handler(void *opaque, struct bus_access *acc);

#endif
