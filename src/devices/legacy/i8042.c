// SPDX-License-Identifier: Apache-2.0
#include "devices/legacy/i8042.h"

#include <stdio.h>
#include <string.h>

#include "core/snap.h"

#define KBD_ACK	   0xfa
#define KBD_BAT_OK 0xaa
#define KBD_ECHO   0xee
#define NO_REPLY   -1
#define REPLY_CTR  0x100 /* replies with the controller byte */
#define REPLY_OUTP 0x101 /* replies with the output port */

/* Controller commands (port 0x64). Anything not listed is ignored, as
 * are 0x21..0x3f (RAM reads) and 0x61..0x7f (RAM writes) besides the
 * controller byte. */
static const struct ctl_cmd {
	uint8_t cmd;
	bool takes_data; /* the next port 0x60 write is its argument */
	int reply;
	uint8_t ctr_set, ctr_clear;
} ctl_cmds[] = {
    {0x20, false, REPLY_CTR, 0, 0},
    {0x60, true, NO_REPLY, 0, 0},
    {0xa7, false, NO_REPLY, I8042_CTR_AUXDIS, 0},
    {0xa8, false, NO_REPLY, 0, 0}, /* no AUX port: AUXDIS stays set */
    {0xa9, false, 0x01, 0, 0},	   /* AUX clock line stuck low */
    {0xaa, false, 0x55, 0, 0},	   /* self-test passed */
    {0xab, false, 0x00, 0, 0},	   /* keyboard interface test passed */
    {0xad, false, NO_REPLY, I8042_CTR_KBDDIS, 0},
    {0xae, false, NO_REPLY, 0, I8042_CTR_KBDDIS},
    {0xd0, false, REPLY_OUTP, 0, 0},
    {0xd1, true, NO_REPLY, 0, 0}, /* write the output port */
    {0xd2, true, NO_REPLY, 0, 0}, /* echo as keyboard data */
    {0xd3, true, NO_REPLY, 0, 0}, /* echo as AUX data */
    {0xd4, true, NO_REPLY, 0, 0}, /* to the (absent) mouse: dropped */
};

/* Keyboard commands (port 0x60 outside a controller command): each is
 * acknowledged, then answers `reply`. */
static const struct kbd_cmd {
	uint8_t cmd;
	bool takes_param;
	uint8_t nr_reply;
	uint8_t reply[2];
} kbd_cmds[] = {
    {0xed, true, 0, {0}},	    /* set LEDs */
    {0xf0, true, 0, {0}},	    /* scancode set: get answers below */
    {0xf2, false, 2, {0xab, 0x83}}, /* get ID: an MF2 keyboard */
    {0xf3, true, 0, {0}},	    /* typematic rate */
    {0xff, false, 1, {KBD_BAT_OK}}, /* reset and self-test */
};

/* Ctrl, Alt, Del in set 2 (the keyboard's) and set 1 (after the
 * controller's translation). A release is F0 before the last set-2 byte,
 * or the last set-1 byte with bit 7. */
static const struct key {
	uint8_t len, set2[2], set1[2];
} cad_keys[] = {
    {1, {0x14}, {0x1d}},
    {1, {0x11}, {0x38}},
    {2, {0xe0, 0x71}, {0xe0, 0x53}},
};
#define CAD_BYTES 11 /* 4 make bytes, 7 break bytes (set 2, the longer) */

static void i8042_update_irq(struct i8042 *k)
{
	int level = k->q_count && !k->q[k->q_head].aux && (k->ctr & I8042_CTR_KBDINT);
	if (level != k->irq_level) {
		k->irq_level = level;
		if (k->set_irq)
			k->set_irq(k->opaque, level);
	}
}

static void q_push(struct i8042 *k, uint8_t b, bool aux)
{
	if (k->q_count == I8042_QUEUE) {
		k->dropped++;
		return;
	}
	unsigned int i = (k->q_head + k->q_count) % I8042_QUEUE;
	k->q[i].byte = b;
	k->q[i].aux = aux;
	k->q_count++;
}

/* A controller reply goes before waiting keyboard bytes, so the driver's
 * next data read is the reply; a full queue loses its newest byte. */
static void q_push_front(struct i8042 *k, uint8_t b)
{
	if (k->q_count == I8042_QUEUE) {
		k->q_count--;
		k->dropped++;
	}
	k->q_head = (k->q_head + I8042_QUEUE - 1) % I8042_QUEUE;
	k->q[k->q_head].byte = b;
	k->q[k->q_head].aux = false;
	k->q_count++;
}

static uint8_t q_pop(struct i8042 *k)
{
	if (!k->q_count)
		return 0;
	uint8_t b = k->q[k->q_head].byte;
	k->q_head = (k->q_head + 1) % I8042_QUEUE;
	k->q_count--;
	return b;
}

void i8042_init(struct i8042 *k, i8042_irq_fn set_irq, i8042_reset_fn reset, void *opaque)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	k->set_irq = set_irq;
	k->reset = reset;
	k->opaque = opaque;
	/* As firmware leaves it: keyboard interrupt on, no translation (the
	 * guest then speaks set 2 directly), no AUX. */
	k->ctr = I8042_CTR_KBDINT | I8042_CTR_SYS | I8042_CTR_AUXDIS;
	k->status = I8042_STR_SYS | I8042_STR_UNLOCK;
	k->outp = 0x01; /* reset line not asserted */
}

void i8042_destroy(struct i8042 *k)
{
	pthread_mutex_destroy(&k->lock);
}

static void i8042_reset(struct i8042 *k)
{
	k->resets++;
	if (k->reset)
		k->reset(k->opaque);
}

static const struct ctl_cmd *ctl_find(uint8_t cmd)
{
	for (size_t i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (ctl_cmds[i].cmd == cmd)
			return &ctl_cmds[i];
	return NULL;
}

static const struct kbd_cmd *kbd_find(uint8_t cmd)
{
	for (size_t i = 0; i < sizeof(kbd_cmds) / sizeof(kbd_cmds[0]); i++)
		if (kbd_cmds[i].cmd == cmd)
			return &kbd_cmds[i];
	return NULL;
}

static void ctl_command(struct i8042 *k, uint8_t cmd)
{
	k->pending = 0;
	/* 0xf0..0xff pulse output lines low for a moment; bit 0 is the
	 * CPU's reset line. */
	if (cmd >= 0xf0) {
		if (!(cmd & 0x01))
			i8042_reset(k);
		return;
	}
	const struct ctl_cmd *c = ctl_find(cmd);
	if (!c) {
		k->ignored++;
		return;
	}
	k->ctr = (uint8_t)((k->ctr | c->ctr_set) & ~c->ctr_clear);
	if (c->takes_data)
		k->pending = cmd;
	if (c->reply == REPLY_CTR)
		q_push_front(k, k->ctr);
	else if (c->reply == REPLY_OUTP)
		q_push_front(k, k->outp);
	else if (c->reply != NO_REPLY)
		q_push_front(k, (uint8_t)c->reply);
}

static void ctl_data(struct i8042 *k, uint8_t cmd, uint8_t v)
{
	switch (cmd) {
	case 0x60:
		k->ctr = v | I8042_CTR_AUXDIS;
		break;
	case 0xd1:
		k->outp = v;
		if (!(v & 0x01))
			i8042_reset(k);
		break;
	case 0xd2:
		q_push(k, v, false);
		break;
	case 0xd3:
		q_push(k, v, true);
		break;
	default: /* 0xd4: nothing behind the AUX port */
		break;
	}
}

/* A byte for the keyboard. It empties its buffer on every command, as a
 * PS/2 keyboard does, then answers. */
static void kbd_write(struct i8042 *k, uint8_t v)
{
	k->q_head = k->q_count = 0;
	if (k->kbd_pending) {
		uint8_t cmd = k->kbd_pending;
		k->kbd_pending = 0;
		q_push(k, KBD_ACK, false);
		if (cmd == 0xf0 && v == 0)
			q_push(k, 0x02, false); /* the current set */
		return;
	}
	if (v == KBD_ECHO) {
		q_push(k, KBD_ECHO, false);
		return;
	}
	q_push(k, KBD_ACK, false);
	const struct kbd_cmd *c = kbd_find(v);
	if (!c)
		return; /* enable, disable, defaults...: only acknowledged */
	if (c->takes_param)
		k->kbd_pending = v;
	for (unsigned int i = 0; i < c->nr_reply; i++)
		q_push(k, c->reply[i], false);
}

static void i8042_write(struct i8042 *k, uint16_t port, uint8_t v)
{
	if (port == I8042_CMD_PORT) {
		k->status |= I8042_STR_CMD;
		ctl_command(k, v);
		return;
	}
	k->status &= (uint8_t)~I8042_STR_CMD;
	if (k->pending) {
		uint8_t cmd = k->pending;
		k->pending = 0;
		ctl_data(k, cmd, v);
		return;
	}
	kbd_write(k, v);
}

static uint8_t i8042_read(struct i8042 *k, uint16_t port)
{
	if (port == I8042_CMD_PORT) {
		uint8_t s = k->status & (uint8_t) ~(I8042_STR_OBF | I8042_STR_AUXDATA);
		if (k->q_count)
			s |= I8042_STR_OBF | (k->q[k->q_head].aux ? I8042_STR_AUXDATA : 0);
		return s;
	}
	uint8_t b = q_pop(k);
	/* An edge per byte: the line drops with the read, then rises again
	 * for the next waiting byte (ISA IRQ 1 is edge-triggered). */
	if (k->irq_level) {
		k->irq_level = 0;
		if (k->set_irq)
			k->set_irq(k->opaque, 0);
	}
	return b;
}

void i8042_access(struct i8042 *k, uint16_t port, uint8_t *data, uint32_t len, bool is_write)
{
	bool ours = len == 1 && (port == I8042_DATA_PORT || port == I8042_CMD_PORT);
	pthread_mutex_lock(&k->lock);
	if (!ours) {
		if (!is_write)
			memset(data, 0xff, len);
		k->ignored++;
	} else if (is_write) {
		i8042_write(k, port, data[0]);
	} else {
		data[0] = i8042_read(k, port);
	}
	i8042_update_irq(k);
	pthread_mutex_unlock(&k->lock);
}

static void push_key(struct i8042 *k, const struct key *key, bool release, bool xlate)
{
	for (unsigned int i = 0; i < key->len; i++) {
		bool last = i + 1 == key->len;
		if (xlate) {
			q_push(k, (uint8_t)(key->set1[i] | (release && last ? 0x80 : 0)), false);
			continue;
		}
		if (release && last)
			q_push(k, 0xf0, false);
		q_push(k, key->set2[i], false);
	}
}

int i8042_ctrl_alt_del(struct i8042 *k)
{
	const size_t n = sizeof(cad_keys) / sizeof(cad_keys[0]);
	pthread_mutex_lock(&k->lock);
	if (I8042_QUEUE - k->q_count < CAD_BYTES) {
		pthread_mutex_unlock(&k->lock);
		return -1;
	}
	bool xlate = k->ctr & I8042_CTR_XLATE;
	for (size_t i = 0; i < n; i++)
		push_key(k, &cad_keys[i], false, xlate);
	for (size_t i = n; i-- > 0;)
		push_key(k, &cad_keys[i], true, xlate);
	i8042_update_irq(k);
	pthread_mutex_unlock(&k->lock);
	return 0;
}

void i8042_bus_handler(void *opaque, struct bus_access *acc)
{
	i8042_access(opaque, (uint16_t)acc->addr, acc->data, acc->len, acc->is_write);
}

/* The saved form: fixed layout, the queue from its head, AUX bits as a
 * mask. */
struct i8042_state {
	uint8_t status, ctr, outp, pending, kbd_pending, q_count;
	uint16_t q_aux;
	uint8_t q[I8042_QUEUE];
};
_Static_assert(sizeof(struct i8042_state) == 8 + I8042_QUEUE, "i8042_state is packed");

int i8042_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	       size_t errlen)
{
	struct i8042 *k = dev;
	struct i8042_state s;
	pthread_mutex_lock(&k->lock);
	s = (struct i8042_state){k->status,	      k->ctr, k->outp, k->pending, k->kbd_pending,
				 (uint8_t)k->q_count, 0,      {0}};
	for (unsigned int i = 0; i < k->q_count; i++) {
		unsigned int j = (k->q_head + i) % I8042_QUEUE;
		s.q[i] = k->q[j].byte;
		s.q_aux |= (uint16_t)(k->q[j].aux << i);
	}
	pthread_mutex_unlock(&k->lock);
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "i8042: out of memory saving its state");
	return -1;
}

/* Only what the command tables can leave behind. */
static int i8042_state_check(const struct i8042_state *s, char *err, size_t errlen)
{
	const struct ctl_cmd *c = s->pending ? ctl_find(s->pending) : NULL;
	const struct kbd_cmd *kc = s->kbd_pending ? kbd_find(s->kbd_pending) : NULL;
	bool ok = s->q_count <= I8042_QUEUE && !(s->q_aux >> s->q_count) &&
		  !(s->status & ~(I8042_STR_SYS | I8042_STR_CMD | I8042_STR_UNLOCK)) &&
		  (s->ctr & I8042_CTR_AUXDIS) && (!s->pending || (c && c->takes_data)) &&
		  (!s->kbd_pending || (kc && kc->takes_param));
	if (!ok)
		snprintf(err, errlen, "i8042: saved state is not valid");
	return ok ? 0 : -1;
}

int i8042_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct i8042 *k = dev;
	struct i8042_state s;
	if (len != sizeof(s)) {
		snprintf(err, errlen, "i8042: saved state is %zu bytes, expected %zu", len,
			 sizeof(s));
		return -1;
	}
	memcpy(&s, data, sizeof(s));
	if (i8042_state_check(&s, err, errlen) < 0)
		return -1;
	pthread_mutex_lock(&k->lock);
	k->status = s.status;
	k->ctr = s.ctr;
	k->outp = s.outp;
	k->pending = s.pending;
	k->kbd_pending = s.kbd_pending;
	k->q_head = 0;
	k->q_count = s.q_count;
	for (unsigned int i = 0; i < I8042_QUEUE; i++)
		k->q[i].byte = s.q[i], k->q[i].aux = (s.q_aux >> i) & 1;
	i8042_update_irq(k);
	pthread_mutex_unlock(&k->lock);
	return 0;
}
