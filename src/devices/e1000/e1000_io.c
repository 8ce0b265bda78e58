// SPDX-License-Identifier: Apache-2.0
/* e1000: the I/O BAR (8254x manual, "I/O-Mapped Internal Register Access").
 * Two dwords: IOADDR at 0 selects a register of the memory BAR, IODATA at
 * 4 reads or writes it, with the memory BAR's effects. Linux's e1000 finds
 * the first I/O BAR and resets the 82540 through it (E1000_WRITE_REG_IO:
 * CTRL.RST), so without one that write went to port 0 of the machine and
 * the device was never reset. Only whole-dword accesses, as the manual
 * allows; anything else reads 0 and is ignored (logged once). */
#include <string.h>

#include "devices/e1000/e1000_priv.h"

#define E1000_IOADDR 0
#define E1000_IODATA 4

void e1000_pio(void *opaque, struct bus_access *acc)
{
	struct e1000 *d = opaque;
	uint32_t v = 0;
	if (acc->len != 4 || (acc->offset != E1000_IOADDR && acc->offset != E1000_IODATA)) {
		pthread_mutex_lock(&d->lock);
		e1000_log_once(d, E1000_LOG_ACCESS,
			       "%u-byte access at I/O BAR offset %#llx ignored", acc->len,
			       (unsigned long long)acc->offset);
		pthread_mutex_unlock(&d->lock);
		if (!acc->is_write)
			memset(acc->data, 0, acc->len);
		return;
	}
	if (acc->is_write)
		memcpy(&v, acc->data, 4);
	/* As a memory BAR read: see the writes batched before it. */
	if (acc->offset == E1000_IODATA && !acc->is_write && d->ctx.flush)
		d->ctx.flush(d->ctx.cm_opaque);
	pthread_mutex_lock(&d->lock);
	if (acc->offset == E1000_IOADDR) {
		/* A register of the 128 KiB BAR, dword-aligned: bits 16:2. */
		if (acc->is_write)
			d->ioaddr = v & (E1000_BAR_SIZE - 4);
		else
			v = d->ioaddr;
	} else if (acc->is_write) {
		e1000_reg_write(d, d->ioaddr, v);
	} else {
		v = e1000_reg_read(d, d->ioaddr);
	}
	pthread_mutex_unlock(&d->lock);
	if (!acc->is_write)
		memcpy(acc->data, &v, 4);
}

const char *e1000_pio_name(void *opaque, uint64_t off, bool is_write)
{
	(void)opaque;
	static const char *const names[2][2] = {{"IOADDR read", "IOADDR write"},
						{"IODATA read", "IODATA write"}};
	return off == E1000_IOADDR || off == E1000_IODATA ? names[off / 4][is_write] : NULL;
}
