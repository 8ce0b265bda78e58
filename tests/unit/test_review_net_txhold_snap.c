// SPDX-License-Identifier: Apache-2.0
/* Review of virtio-net's TX hold in a snapshot (review7, finding 2): a
 * one-pair card whose vCPUs halt in the guest (--cpu-pm on) holds TX
 * completions by its own choice (virtio_net_coal_defaults), not the
 * driver's. The section saved them as if the driver had set them, so a
 * load on a card that must not hold (default mode, vhost=on) took them:
 * the default-mode card held TX completions (what b46bcbd measured as
 * +14% UDP request/response latency) until the guest reset it, and a
 * vhost=on card refused a snapshot whose driver had set nothing. The
 * load now derives the card's own hold for the card it loads on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-net/virtio_net_priv.h"

#define F(bit) (1ULL << (bit))

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};

struct card {
	struct virtio_net *n;
	int wire;
};

/* A one-pair card as virtio_net_new_device leaves it: the hold when the
 * vCPUs halt in the guest (hold), NOTF_COAL not offered with vhost=on. */
static void card_new(struct card *c, bool hold, bool vhost)
{
	int sv[2];
	char err[200] = "";
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	struct tap tap;
	tap_from_fd(&tap, sv[0]);
	c->wire = sv[1];
	c->n = virtio_net_create("virtio-net0", &tap, 1, mac, err, sizeof(err));
	assert_non_null(c->n);
	if (vhost)
		c->n->vdev.host_features &= ~F(VIRTIO_NET_F_NOTF_COAL);
	c->n->tx_hold = hold;
	virtio_net_coal_defaults(c->n);
}

static void card_free(struct card *c)
{
	virtio_net_destroy(c->n);
	close(c->wire);
}

static uint32_t tx_us(const struct card *c)
{
	return atomic_load(&c->n->coal_usecs[VIRTIO_NET_TXQ]);
}

static uint32_t tx_max(const struct card *c)
{
	return atomic_load(&c->n->coal_max[VIRTIO_NET_TXQ]);
}

/* The card's section as virtio_net_save writes it. */
static size_t save(struct card *c, uint8_t *out, size_t cap)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(virtio_net_save(c->n, &w, SNAP_ID_DEVICE, 2, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, 2);
	assert_non_null(s);
	assert_true(s->len <= cap);
	memcpy(out, s->data, s->len);
	len = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return len;
}

static int load(struct card *c, const uint8_t *p, size_t len)
{
	char err[200] = "";
	int r = virtio_net_restore(c->n, p, len, err, sizeof(err));
	if (r < 0)
		print_message("refused: %s\n", err);
	return r;
}

/* The driver's TX_SET (the driver accepted NOTF_COAL). */
static void driver_tx_set(struct card *c, uint32_t max, uint32_t us)
{
	uint8_t d[8];
	memcpy(d, &max, 4);
	memcpy(d + 4, &us, 4);
	c->n->vdev.driver_features |= F(VIRTIO_NET_F_NOTF_COAL);
	pthread_mutex_lock(&c->n->ctrl_lock);
	assert_int_equal(virtio_net_coal_set(c->n, VIRTIO_NET_TXQ, d), VIRTIO_NET_OK);
	pthread_mutex_unlock(&c->n->ctrl_lock);
	c->n->vdev.driver_features = 0;
}

/* The finding: a --cpu-pm card's own hold loaded on a default-mode card
 * holds there too. After the fix the default-mode card does not hold. */
static void test_own_hold_not_carried_to_default_mode(void **state)
{
	(void)state;
	struct card a, b;
	uint8_t s[128];
	card_new(&a, true, false);
	assert_int_equal(tx_us(&a), VIRTIO_NET_TX_HOLD_USECS);
	size_t len = save(&a, s, sizeof(s));
	card_new(&b, false, false);
	assert_int_equal(load(&b, s, len), 0);
	assert_int_equal(tx_us(&b), 0);
	assert_int_equal(tx_max(&b), 0);
	card_free(&a);
	card_free(&b);
}

/* The finding's other face: a vhost=on card (no NOTF_COAL offered)
 * refused the section of a --cpu-pm card whose driver set nothing (no
 * driver yet, or one without NOTF_COAL before its DRIVER_OK): "it has
 * coalescing state". The card's own hold is not the driver's state. */
static void test_own_hold_loads_on_vhost_card(void **state)
{
	(void)state;
	struct card a, b;
	uint8_t s[128];
	card_new(&a, true, false);
	size_t len = save(&a, s, sizeof(s));
	card_new(&b, false, true);
	assert_int_equal(load(&b, s, len), 0);
	assert_int_equal(tx_us(&b), 0);
	card_free(&a);
	card_free(&b);
}

/* Not changed: what the driver set goes with the guest, the same values
 * as the hold's included, and a vhost=on card still refuses it. */
static void test_driver_values_carried(void **state)
{
	(void)state;
	struct card a, b, c;
	uint8_t s[128];
	card_new(&a, true, false);
	driver_tx_set(&a, VIRTIO_NET_TX_HOLD_PACKETS, VIRTIO_NET_TX_HOLD_USECS);
	size_t len = save(&a, s, sizeof(s));
	card_new(&b, false, false);
	assert_int_equal(load(&b, s, len), 0);
	assert_int_equal(tx_us(&b), VIRTIO_NET_TX_HOLD_USECS);
	assert_int_equal(tx_max(&b), VIRTIO_NET_TX_HOLD_PACKETS);
	card_new(&c, false, true);
	assert_int_equal(load(&c, s, len), -1);
	card_free(&c);

	/* tx-usecs 0 on a --cpu-pm card stays 0 on a --cpu-pm card. */
	driver_tx_set(&a, 1, 0);
	len = save(&a, s, sizeof(s));
	card_free(&b);
	card_new(&b, true, false);
	assert_int_equal(load(&b, s, len), 0);
	assert_int_equal(tx_us(&b), 0);
	card_free(&a);
	card_free(&b);
}

/* A default-mode card's section loaded on a --cpu-pm card: the card's own
 * coalescing is the loading card's (its hold), and saved again as its
 * own. */
static void test_own_hold_of_loading_card(void **state)
{
	(void)state;
	struct card a, b, c;
	uint8_t s[128];
	card_new(&a, false, false);
	size_t len = save(&a, s, sizeof(s));
	card_new(&b, true, false);
	assert_int_equal(load(&b, s, len), 0);
	assert_int_equal(tx_us(&b), VIRTIO_NET_TX_HOLD_USECS);
	assert_int_equal(tx_max(&b), VIRTIO_NET_TX_HOLD_PACKETS);
	len = save(&b, s, sizeof(s));
	card_new(&c, false, false);
	assert_int_equal(load(&c, s, len), 0);
	assert_int_equal(tx_us(&c), 0);
	card_free(&a);
	card_free(&b);
	card_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_hold_not_carried_to_default_mode),
	    cmocka_unit_test(test_own_hold_loads_on_vhost_card),
	    cmocka_unit_test(test_driver_values_carried),
	    cmocka_unit_test(test_own_hold_of_loading_card),
	};
	return cmocka_run_group_tests_name("review_net_txhold_snap", tests, NULL, NULL);
}
