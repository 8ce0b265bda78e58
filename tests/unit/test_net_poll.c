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
#include "vp_driver.h"

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
	int wires[NPAIRS];
	struct vp_driver d;
};

/* Linux's bring-up with MQ: every queue of both pairs and the control
 * queue set up and enabled, DRIVER_OK. */
static void driver_bring_up(struct fx *f)
{
	uint64_t feat = F(VIRTIO_F_VERSION_1) | F(VIRTQ_F_EVENT_IDX) | F(VIRTIO_NET_F_CTRL_VQ) |
			F(VIRTIO_NET_F_MQ);
	vpd_negotiate(&f->d, feat);
	for (unsigned int q = 0; q < NQ; q++)
		vpd_queue(&f->d, q, VIRTIO_MSI_NO_VECTOR);
	vpd_driver_ok(&f->d);
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
	f->d = (struct vp_driver){
	    .trap = &f->trap, .fm = &f->fm, .ring_gpa = RING_GPA, .next_buf = BUF_GPA, .qsz = QSZ};

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
	f->d.vp = f->vp;
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->d.bar = cfg_bar64(&f->trap, 1, VP_BAR);
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
	vpd_post(&f->d, 3, &len, &fl, 1, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0, HDR);
	memset(fake_mem_at(&f->fm, gpa + HDR), 0x5a, 60);
	vpd_kick(&f->d, 3); /* polling starts */
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
	assert_int_equal(vpd_used_idx(&f->d, 3), 0); /* nothing sent on a disabled pair */

	/* The driver enables pair 1: what waited goes out on tap queue 1. */
	static const uint32_t clens[3] = {2, 2, 1};
	static const uint16_t cfl[3] = {0, 0, VIRTQ_DESC_F_WRITE};
	uint64_t g[3];
	vpd_post(&f->d, CTRLQ, clens, cfl, 3, g);
	uint8_t hdr[2] = {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET};
	uint16_t two = 2;
	memcpy(fake_mem_at(&f->fm, g[0]), hdr, 2);
	memcpy(fake_mem_at(&f->fm, g[1]), &two, 2);
	vpd_kick(&f->d, CTRLQ);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, g[2]), VIRTIO_NET_OK);
	virtio_net_sched_event(f->n, EPOLLIN); /* what enabling scheduled */
	uint8_t pkt[256];
	assert_int_equal(recv(f->wires[1], pkt, sizeof(pkt), MSG_DONTWAIT), HDR + 60);
	assert_int_equal(pkt[HDR], 0x5a);
	assert_int_equal(vpd_used_idx(&f->d, 3), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_disabled_pair_does_not_spin_poller, setup,
					    teardown),
	};
	return cmocka_run_group_tests_name("net_poll", tests, NULL, NULL);
}
