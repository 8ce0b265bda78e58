// SPDX-License-Identifier: Apache-2.0
/* virtio-net multiqueue on the real virtio-pci transport with a polled
 * I/O thread: the test plays the guest driver (fake RAM, two queue pairs
 * and the control queue) and the I/O thread (it calls the kick handler
 * and iothread_poll_once itself, with made-up times). Taps are
 * socketpairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_mem.h"
#include "fake_pci_host.h"
#include "iothread/iothread.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"

#define NPAIRS	 2
#define NQ	 (2 * NPAIRS + 1) /* rx0 tx0 rx1 tx1 ctrl */
#define CTRLQ	 (2 * NPAIRS)
#define QSZ	 16
#define RING_GPA 0x10000 /* queue q's rings at RING_GPA + q * 0x1000 */
#define BUF_GPA	 0x40000
#define HDR	 VIRTIO_NET_HDR_LEN

#define F(bit) (1ULL << (bit))

struct fx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_mem fm;
	struct iothread io;
	struct virtio_net *n;
	struct virtio_pci *vp;
	uint64_t bar;
	int wires[NPAIRS];
	uint16_t avail_idx[NQ], next_desc[NQ];
	uint64_t next_buf;
};

static void cw(struct fx *f, uint32_t off, uint32_t len, uint64_t v)
{
	mmio_wr(&f->trap, f->bar + VP_COMMON_OFF + off, len, v);
}

static uint8_t status(struct fx *f)
{
	return (uint8_t)mmio_rd(&f->trap, f->bar + VP_COMMON_OFF + VP_STATUS, 1);
}

static uint64_t desc_gpa(unsigned int q)
{
	return RING_GPA + 0x1000 * (uint64_t)q;
}

static uint64_t avail_gpa(unsigned int q)
{
	return desc_gpa(q) + 0x400;
}

static uint64_t used_gpa(unsigned int q)
{
	return desc_gpa(q) + 0x800;
}

static uint16_t used_idx(struct fx *f, unsigned int q)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, used_gpa(q) + 2), __ATOMIC_ACQUIRE);
}

/* Linux's bring-up with MQ: every queue of both pairs and the control
 * queue set up and enabled, DRIVER_OK. */
static void driver_bring_up(struct fx *f)
{
	uint64_t feat = F(VIRTIO_F_VERSION_1) | F(VIRTQ_F_EVENT_IDX) | F(VIRTIO_NET_F_CTRL_VQ) |
			F(VIRTIO_NET_F_MQ);
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	cw(f, VP_GFSELECT, 4, 0);
	cw(f, VP_GF, 4, (uint32_t)feat);
	cw(f, VP_GFSELECT, 4, 1);
	cw(f, VP_GF, 4, feat >> 32);
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_FEATURES_OK);
	for (unsigned int q = 0; q < NQ; q++) {
		cw(f, VP_Q_SELECT, 2, q);
		cw(f, VP_Q_SIZE, 2, QSZ);
		cw(f, VP_Q_DESC, 8, desc_gpa(q));
		cw(f, VP_Q_DRIVER, 8, avail_gpa(q));
		cw(f, VP_Q_DEVICE, 8, used_gpa(q));
		cw(f, VP_Q_ENABLE, 2, 1);
	}
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(status(f), 0x0f);
}

/* Posts a chain of cnt buffers (lens, flags each) on queue q; returns
 * their guest addresses in gpas. */
static void post(struct fx *f, unsigned int q, const uint32_t *lens, const uint16_t *flags,
		 unsigned int cnt, uint64_t *gpas)
{
	uint16_t head = f->next_desc[q] % QSZ;
	for (unsigned int i = 0; i < cnt; i++) {
		uint16_t idx = f->next_desc[q]++ % QSZ;
		gpas[i] = f->next_buf;
		f->next_buf += (lens[i] + 63) & ~63u;
		struct virtq_desc d = {.addr = gpas[i],
				       .len = lens[i],
				       .flags = flags[i] | (i + 1 < cnt ? VIRTQ_DESC_F_NEXT : 0),
				       .next = (uint16_t)((idx + 1) % QSZ)};
		memcpy(fake_mem_at(&f->fm, desc_gpa(q) + 16 * (uint64_t)idx), &d, sizeof(d));
	}
	uint16_t old = f->avail_idx[q];
	*(uint16_t *)fake_mem_at(&f->fm, avail_gpa(q) + 4 + 2 * (uint64_t)(old % QSZ)) = head;
	f->avail_idx[q] = (uint16_t)(old + 1);
	__atomic_store_n((uint16_t *)fake_mem_at(&f->fm, avail_gpa(q) + 2), f->avail_idx[q],
			 __ATOMIC_RELEASE);
}

/* The guest's notify write reached the queue's ioeventfd; the I/O thread
 * handles it. */
static void kick(struct fx *f, unsigned int q)
{
	uint64_t one = 1;
	assert_int_equal(write(f->vp->q[q].kick_fd, &one, sizeof(one)), sizeof(one));
	vp_kick_ready(&f->vp->q[q], EPOLLIN);
}

/* The poller's CPU clock in step with the test's wall clock: it always
 * gets its CPU, so only idleness and the cap can stop it. */
static uint64_t fake_now;
static uint64_t fake_cpu(void)
{
	return fake_now;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_int_equal(fake_mem_init(&f->fm, 1 << 20), 0);
	assert_int_equal(iothread_init(&f->io, "io0"), 0);
	f->io.cpu_clock = fake_cpu;
	f->next_buf = BUF_GPA;

	struct tap taps[NPAIRS];
	for (unsigned int i = 0; i < NPAIRS; i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		tap_from_fd(&taps[i], sv[0]);
		f->wires[i] = sv[1];
	}
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	char err[256];
	f->n = virtio_net_create("virtio-net0", taps, NPAIRS, mac, err, sizeof(err));
	assert_non_null(f->n);
	f->n->io = &f->io;
	/* Adaptive, starting at the first kick, 1 us idle, a 10 ms cap. */
	poll_policy_default(&f->n->vdev.poll);
	f->n->vdev.poll.mode = POLL_ADAPTIVE;
	f->n->vdev.poll.start_kicks = 1;
	f->n->vdev.poll.idle_ns = 1000;
	f->n->vdev.poll.max_ns = 10000000;
	struct virtio_pci_env env = {
	    .pci = f->pci, .io = &f->io, .gm = &f->fm.gm, .use_ioeventfd = true};
	assert_int_equal(virtio_pci_attach(&env, &f->n->vdev, err, sizeof(err)), 0);
	f->vp = f->n->vdev.transport_data;
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, VP_BAR);
	driver_bring_up(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	pci_bus_destroy(f->pci);
	virtio_net_destroy(f->n);
	iothread_destroy(&f->io);
	bus_destroy(&f->trap);
	for (unsigned int i = 0; i < NPAIRS; i++)
		close(f->wires[i]);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* A chain on tx1 while the driver has not enabled pair 1 (a guest may
 * kick any queue it set up): the device leaves it in the ring, so the
 * ring always "has work". The poller must not take that for work: it
 * would poll without end (its cap restarts whenever stopping finds the
 * ring non-empty), a guest-made busy loop on the I/O thread. Once the
 * pair is enabled, the chain is sent. */
static void test_disabled_pair_does_not_spin_poller(void **state)
{
	struct fx *f = *state;
	struct iothread_poller *p = &f->vp->q[3].poller;
	assert_true(f->vp->q[3].polled);
	uint32_t len = HDR + 60;
	uint16_t fl = 0;
	uint64_t gpa;
	post(f, 3, &len, &fl, 1, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0, HDR);
	memset(fake_mem_at(&f->fm, gpa + HDR), 0x5a, 60);
	kick(f, 3); /* polling starts */
	assert_true(p->st.polling);
	uint64_t t = p->st.started_ns;
	/* 2 s of I/O thread time in 1 ms steps: 200 caps' worth. */
	for (int i = 0; i < 2000 && p->st.polling; i++) {
		t += 1000000;
		fake_now = t;
		iothread_poll_once(&f->io, t);
	}
	assert_false(p->st.polling);
	assert_int_equal(f->io.nr_polling, 0);
	assert_int_equal(used_idx(f, 3), 0); /* nothing sent on a disabled pair */

	/* The driver enables pair 1: what waited goes out on tap queue 1. */
	static const uint32_t clens[3] = {2, 2, 1};
	static const uint16_t cfl[3] = {0, 0, VIRTQ_DESC_F_WRITE};
	uint64_t g[3];
	post(f, CTRLQ, clens, cfl, 3, g);
	uint8_t hdr[2] = {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET};
	uint16_t two = 2;
	memcpy(fake_mem_at(&f->fm, g[0]), hdr, 2);
	memcpy(fake_mem_at(&f->fm, g[1]), &two, 2);
	kick(f, CTRLQ);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, g[2]), VIRTIO_NET_OK);
	virtio_net_sched_event(f->n, EPOLLIN); /* what enabling scheduled */
	uint8_t pkt[256];
	assert_int_equal(recv(f->wires[1], pkt, sizeof(pkt), MSG_DONTWAIT), HDR + 60);
	assert_int_equal(pkt[HDR], 0x5a);
	assert_int_equal(used_idx(f, 3), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_disabled_pair_does_not_spin_poller, setup,
					    teardown),
	};
	return cmocka_run_group_tests_name("net_poll", tests, NULL, NULL);
}
