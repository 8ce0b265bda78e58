// SPDX-License-Identifier: Apache-2.0
/* The fixture of the backend=vhost vsock tests (test_vsock_vhost.c,
 * test_vsock_vhost_snap.c): no /dev/vhost-vsock, so the device opens
 * /dev/null and an ioctl of the test's plays the kernel for every vhost
 * request (each recorded in calls[]); a transport that hands queues off
 * and counts it; the device on fake guest memory, its three queues set
 * up by the guest. Included once per test program, after its includes. */
#ifndef SKIFF_TEST_VSOCK_VHOST_FX_H
#define SKIFF_TEST_VSOCK_VHOST_FX_H

#define QSZ	  64
#define RAM_SIZE  (1u << 20)
#define F_VERSION (1ull << VIRTIO_F_VERSION_1)
#define F_EVIDX	  (1ull << VIRTQ_F_EVENT_IDX)
#define F_INDIR	  (1ull << VIRTQ_F_INDIRECT_DESC)

/* ---- an ioctl that plays the kernel's vhost-vsock ---- */

struct vcall {
	unsigned long req;
	unsigned int index; /* a ring's */
	uint64_t val;	    /* a ring's num, fd; the features, CID, running */
};
static struct vcall calls[512];
static unsigned int owners; /* VHOST_SET_OWNER: a device node opened */
static unsigned int ncalls;
static uint64_t fake_features = F_VERSION | F_EVIDX | F_INDIR;
static unsigned long fail_req;	      /* this request fails ... */
static int fail_errno;		      /* ... with this */
static unsigned int fail_index = ~0u; /* ... for this ring only (~0u: any) */

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) != VHOST_VIRTIO)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	struct vcall c = {.req = req};
	if (req == VHOST_SET_VRING_NUM || req == VHOST_SET_VRING_BASE ||
	    req == VHOST_GET_VRING_BASE) {
		c.index = ((struct vhost_vring_state *)arg)->index;
		c.val = ((struct vhost_vring_state *)arg)->num;
	} else if (req == VHOST_SET_VRING_KICK || req == VHOST_SET_VRING_CALL) {
		c.index = ((struct vhost_vring_file *)arg)->index;
		c.val = (uint64_t)((struct vhost_vring_file *)arg)->fd;
	} else if (req == VHOST_SET_VRING_ADDR) {
		c.index = ((struct vhost_vring_addr *)arg)->index;
		c.val = ((struct vhost_vring_addr *)arg)->flags;
	} else if (req == VHOST_SET_LOG_BASE) {
		c.val = *(uint64_t *)arg;
	} else if (req == VHOST_SET_FEATURES || req == VHOST_VSOCK_SET_GUEST_CID) {
		c.val = *(uint64_t *)arg;
	} else if (req == VHOST_VSOCK_SET_RUNNING) {
		c.val = (uint64_t) * (int *)arg;
	}
	if (req == fail_req && (fail_index == ~0u || fail_index == c.index)) {
		errno = fail_errno;
		return -1;
	}
	if (ncalls < sizeof(calls) / sizeof(calls[0]))
		calls[ncalls++] = c;
	if (req == VHOST_GET_FEATURES)
		*(uint64_t *)arg = fake_features;
	if (req == VHOST_GET_VRING_BASE)
		((struct vhost_vring_state *)arg)->num = 7;
	if (req == VHOST_SET_OWNER)
		owners++;
	return 0;
}

/* The index-th call of request req (and ring, unless ~0u), or NULL. */
static const struct vcall *call_of(unsigned long req, unsigned int ring)
{
	for (unsigned int i = 0; i < ncalls; i++)
		if (calls[i].req == req && (ring == ~0u || calls[i].index == ring))
			return &calls[i];
	return NULL;
}

static unsigned int count_of(unsigned long req)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < ncalls; i++)
		n += calls[i].req == req;
	return n;
}

/* ---- a transport that hands queues off ---- */

static unsigned int handed[VSOCK_NR_QUEUES], taken[VSOCK_NR_QUEUES], rescheds[VSOCK_NR_QUEUES];
static unsigned int handoff_fail_q = ~0u;

static void t_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void t_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static int t_handoff(struct virtio_dev *vdev, unsigned int q, int *kick, int *call)
{
	(void)vdev;
	if (q == handoff_fail_q)
		return -1;
	handed[q]++;
	*kick = 100 + (int)q;
	*call = 200 + (int)q;
	return 0;
}

static void t_takeback(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	taken[q]++;
}

static int t_resched(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	rescheds[q]++;
	return 0;
}

static const struct virtio_transport_ops transport = {
    .notify_queue = t_notify_queue,
    .notify_config = t_notify_config,
    .queue_handoff = t_handoff,
    .queue_takeback = t_takeback,
    .queue_resched = t_resched,
};

/* ---- fixture ---- */

struct fx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	const struct dev_ops *ops;
};

static void reset_fakes(void)
{
	ncalls = 0;
	fake_features = F_VERSION | F_EVIDX | F_INDIR;
	fail_req = 0;
	fail_index = ~0u;
	handoff_fail_q = ~0u;
	memset(handed, 0, sizeof(handed));
	memset(taken, 0, sizeof(taken));
	memset(rescheds, 0, sizeof(rescheds));
}

/* The device on f's memory, its queues set up by the guest (the
 * kernel's features: fake_features now). 0 or -1. */
static struct virtio_dev *dev_open(struct fake_mem *fm, const struct dev_ops **ops)
{
	char err[256];
	struct vsock_spec s = {.cid = 3, .backend = VSOCK_BACKEND_VHOST};
	struct virtio_dev *v =
	    virtio_vsock_vhost_create("virtio-vsock0", &s, "/dev/null", ops, err, sizeof(err));
	if (!v)
		return NULL;
	v->gm = &fm->gm;
	v->transport = &transport;
	v->driver_features = F_VERSION | F_EVIDX;
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++) {
		uint64_t base = 0x10000 + 0x4000 * (uint64_t)q;
		struct virtq *vq = &v->vqs[q];
		if (virtq_init(vq, "vsock q", v->queue_max_size, NULL, NULL) ||
		    virtq_set_size(vq, QSZ) || virtq_set_addr(vq, VIRTQ_RING_DESC, base) ||
		    virtq_set_addr(vq, VIRTQ_RING_AVAIL, base + 0x1000) ||
		    virtq_set_addr(vq, VIRTQ_RING_USED, base + 0x2000) ||
		    virtq_activate(vq, &fm->gm))
			return NULL;
	}
	ncalls = 0;
	return v;
}

static int fx_open(struct fx *f)
{
	f->vdev = dev_open(&f->fm, &f->ops);
	return f->vdev ? 0 : -1;
}

static int setup(void **state)
{
	reset_fakes();
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE) || fx_open(f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	f->ops->stop(f->vdev);
	f->ops->destroy(f->vdev);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

static unsigned int open_fds(void)
{
	unsigned int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

#endif
