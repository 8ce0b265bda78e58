// SPDX-License-Identifier: Apache-2.0
/* virtio-pci: the PCI function (IDs, BARs, capabilities), the register BAR
 * dispatch, the PCI-config window, ioeventfds following the BAR, and
 * attaching a device. Common configuration: virtio_pci_common.c; kicks
 * and interrupts: virtio_pci_notify.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/vm.h"
#include "iothread/iothread.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci_impl.h"

#define VP_CLASS_STORAGE 0x010000 /* what QEMU's virtio-blk-pci says */
#define VP_CLASS_NET	 0x020000
#define VP_CLASS_OTHER	 0xff0000
#define VP_REVISION	 1    /* modern (non-transitional) device */
#define VP_MAX_DEVICE_ID 0x3f /* device IDs 0x1040..0x107f */

static struct virtio_pci *vp_of(struct pci_device *dev)
{
	return (struct virtio_pci *)dev; /* pci is the first member */
}

static void vp_device_cfg(struct virtio_pci *vp, uint64_t rel, uint8_t *data, uint32_t len,
			  bool is_write)
{
	struct virtio_dev *vdev = vp->vdev;
	if (rel >= vdev->config_len || len > vdev->config_len - rel)
		return;
	pthread_mutex_lock(&vp->lock);
	if (is_write && vdev->ops->config_write)
		vdev->ops->config_write(vdev, (uint32_t)rel, data, len);
	else if (!is_write && vdev->ops->config_read)
		vdev->ops->config_read(vdev, (uint32_t)rel, data, len);
	pthread_mutex_unlock(&vp->lock);
}

/* One access to the register BAR, from a trap or the PCI-config window. */
static void vp_bar_access(struct virtio_pci *vp, uint64_t off, uint8_t *data, uint32_t len,
			  bool is_write)
{
	if (!is_write)
		memset(data, 0, len);
	if (len == 0 || len > 8 || (len & (len - 1)) || off >= VP_BAR_SIZE ||
	    len > VP_BAR_SIZE - off)
		return;
	if (off >= VP_NOTIFY_OFF) {
		if (is_write && (off - VP_NOTIFY_OFF) % VP_NOTIFY_MULT == 0)
			vp_notify_write(vp, (off - VP_NOTIFY_OFF) / VP_NOTIFY_MULT);
	} else if (off >= VP_DEVICE_OFF) {
		vp_device_cfg(vp, off - VP_DEVICE_OFF, data, len, is_write);
	} else if (off == VP_ISR_OFF) {
		if (!is_write)
			data[0] = vp_isr_read(vp);
	} else if (off < VP_COMMON_OFF + VP_COMMON_LEN) {
		pthread_mutex_lock(&vp->lock);
		if (is_write)
			vp_common_write(vp, (uint32_t)off, data, len);
		else
			vp_common_read(vp, (uint32_t)off, data, len);
		pthread_mutex_unlock(&vp->lock);
	}
}

static void vp_bar_handler(void *opaque, struct bus_access *acc)
{
	vp_bar_access(opaque, acc->offset, acc->data, acc->len, acc->is_write);
}

/* One access to the port notify BAR: a write at queue q's port kicks q;
 * reads are 0. */
static void vp_pio_access(struct virtio_pci *vp, uint64_t off, uint8_t *data, uint32_t len,
			  bool is_write)
{
	if (!is_write)
		memset(data, 0, len);
	else if (off % VP_PIO_MULT == 0)
		vp_notify_write(vp, off / VP_PIO_MULT);
}

static void vp_pio_handler(void *opaque, struct bus_access *acc)
{
	vp_pio_access(opaque, acc->offset, acc->data, acc->len, acc->is_write);
}

static const char *vp_notify_name(uint64_t q)
{
	static const char *const notify[] = {
	    "notify q0",  "notify q1",	"notify q2",  "notify q3",  "notify q4",  "notify q5",
	    "notify q6",  "notify q7",	"notify q8",  "notify q9",  "notify q10", "notify q11",
	    "notify q12", "notify q13", "notify q14", "notify q15", "notify q16", "notify q17",
	    "notify q18", "notify q19", "notify q20", "notify q21", "notify q22", "notify q23",
	    "notify q24", "notify q25", "notify q26", "notify q27", "notify q28", "notify q29",
	    "notify q30", "notify q31",
	};
	_Static_assert(sizeof(notify) / sizeof(notify[0]) == VIRTIO_MAX_QUEUES, "notify names");
	return q < VIRTIO_MAX_QUEUES ? notify[q] : "notify";
}

static const char *vp_reg_name(void *opaque, uint64_t off, bool is_write)
{
	(void)opaque;
	(void)is_write;
	if (off < VP_ISR_OFF)
		return vp_common_reg_name((uint32_t)off);
	if (off < VP_DEVICE_OFF)
		return "isr";
	if (off < VP_NOTIFY_OFF)
		return "cfg";
	return vp_notify_name((off - VP_NOTIFY_OFF) / VP_NOTIFY_MULT);
}

static const char *vp_pio_reg_name(void *opaque, uint64_t off, bool is_write)
{
	(void)opaque;
	(void)is_write;
	return vp_notify_name(off / VP_PIO_MULT);
}

/* A notify BAR moved: move the queues' ioeventfds with it (MMIO: any
 * length; port: the 16-bit write the driver makes). Runs under the bus's
 * config lock. */
static void vp_bar_map(struct pci_device *dev, unsigned int bar, uint64_t addr, bool mapped)
{
	struct virtio_pci *vp = vp_of(dev);
	if ((bar != VP_BAR && bar != VP_PIO_BAR) || !vp->use_ioeventfd)
		return;
	bool pio = bar == VP_PIO_BAR;
	unsigned int k = pio ? VP_KICK_PIO : VP_KICK_MMIO;
	enum bus_space sp = pio ? BUS_PIO : BUS_MMIO;
	uint32_t len = pio ? 2 : 0;
	uint64_t base = pio ? addr : addr + VP_NOTIFY_OFF;
	uint64_t stride = pio ? VP_PIO_MULT : VP_NOTIFY_MULT;
	void *host;
	const struct pci_host_ops *ops = pci_bus_host(dev->bus, &host);
	for (unsigned int i = 0; i < vp->vdev->num_queues; i++) {
		struct virtio_pci_queue *q = &vp->q[i];
		if (!mapped) {
			if (q->kick[k].assigned)
				ops->ioeventfd(host, q->kick_fd, sp, q->kick[k].addr, len, false);
			q->kick[k].assigned = false;
			continue;
		}
		q->kick[k].addr = base + i * stride;
		int r = ops->ioeventfd(host, q->kick_fd, sp, q->kick[k].addr, len, true);
		q->kick[k].assigned = r == 0;
		if (r < 0)
			log_once_at(&vp->ioeventfd_logged, LOG_WARN,
				    "%s: ioeventfd: %s; kicks will trap", dev->name, strerror(-r));
	}
}

typedef void vp_access_fn(struct virtio_pci *vp, uint64_t off, uint8_t *data, uint32_t len,
			  bool is_write);

/* The PCI-config-access window (virtio 1.2 §4.1.4.9): BAR, offset and
 * length as the driver left them, if they make a valid access; returns
 * the BAR's access function, or NULL. */
static vp_access_fn *vp_cfg_window(struct virtio_pci *vp, uint32_t *off, uint32_t *len)
{
	const uint8_t *cap = &vp->pci.cfg[vp->pci_cfg_cap];
	memcpy(off, cap + VP_CAP_OFFSET, 4);
	memcpy(len, cap + VP_CAP_LENGTH, 4);
	if ((*len != 1 && *len != 2 && *len != 4) || *off % *len)
		return NULL;
	if (cap[VP_CAP_BAR] == VP_BAR && *off < VP_BAR_SIZE)
		return vp_bar_access;
	if (cap[VP_CAP_BAR] == VP_PIO_BAR && *off < VP_PIO_BAR_SIZE)
		return vp_pio_access;
	return NULL;
}

static bool hits_cfg_data(struct virtio_pci *vp, uint32_t off, uint32_t len)
{
	uint32_t d = (uint32_t)vp->pci_cfg_cap + VP_CAP_PCI_CFG_DATA;
	return off < d + 4 && d < off + len;
}

static void vp_cfg_read(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len)
{
	struct virtio_pci *vp = vp_of(dev);
	uint32_t boff, blen, d = (uint32_t)vp->pci_cfg_cap + VP_CAP_PCI_CFG_DATA;
	vp_access_fn *access;
	if (!hits_cfg_data(vp, off, len) || !(access = vp_cfg_window(vp, &boff, &blen)))
		return;
	uint8_t buf[4] = {0};
	access(vp, boff, buf, blen, false);
	memcpy(&dev->cfg[d], buf, sizeof(buf));
	for (uint32_t i = 0; i < len; i++)
		if (off + i >= d && off + i < d + 4)
			data[i] = dev->cfg[off + i];
}

static void vp_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len)
{
	struct virtio_pci *vp = vp_of(dev);
	uint32_t boff, blen;
	vp_access_fn *access;
	if (!hits_cfg_data(vp, off, len) || !(access = vp_cfg_window(vp, &boff, &blen)))
		return;
	uint8_t buf[4];
	memcpy(buf, &dev->cfg[vp->pci_cfg_cap + VP_CAP_PCI_CFG_DATA], sizeof(buf));
	access(vp, boff, buf, blen, true);
}

static void vp_free(struct virtio_pci *vp)
{
	for (unsigned int i = 0; i < VIRTIO_MAX_QUEUES; i++)
		if (vp->q[i].kick_fd >= 0)
			close(vp->q[i].kick_fd);
	pthread_mutex_destroy(&vp->lock);
	pthread_mutex_destroy(&vp->isr_lock);
	free(vp);
}

static void vp_release(struct pci_device *dev)
{
	vp_free(vp_of(dev));
}

static const struct pci_device_ops vp_pci_ops = {
    .cfg_read = vp_cfg_read,
    .cfg_write = vp_cfg_write,
    .bar_map = vp_bar_map,
    .release = vp_release,
};

static int vp_add_cap(struct virtio_pci *vp, uint8_t type, uint8_t bar, uint32_t offset,
		      uint32_t length, uint8_t cap_len, uint32_t extra)
{
	uint8_t cap[VIRTIO_PCI_NOTIFY_CAP_LEN] = {PCI_CAP_ID_VNDR, 0, cap_len, type, bar};
	memcpy(cap + VP_CAP_OFFSET, &offset, 4);
	memcpy(cap + VP_CAP_LENGTH, &length, 4);
	memcpy(cap + VP_CAP_NOTIFY_MULT, &extra, 4); /* beyond cap_len when 16 */
	return pci_device_add_cap(&vp->pci, cap, cap_len);
}

static int vp_add_caps(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	if (vp_add_cap(vp, VIRTIO_PCI_CAP_COMMON_CFG, VP_BAR, VP_COMMON_OFF, VP_COMMON_LEN,
		       VIRTIO_PCI_CAP_LEN, 0) < 0 ||
	    vp_add_cap(vp, VIRTIO_PCI_CAP_NOTIFY_CFG, VP_PIO_BAR, 0, vdev->num_queues * VP_PIO_MULT,
		       VIRTIO_PCI_NOTIFY_CAP_LEN, VP_PIO_MULT) < 0 ||
	    vp_add_cap(vp, VIRTIO_PCI_CAP_NOTIFY_CFG, VP_BAR, VP_NOTIFY_OFF,
		       vdev->num_queues * VP_NOTIFY_MULT, VIRTIO_PCI_NOTIFY_CAP_LEN,
		       VP_NOTIFY_MULT) < 0 ||
	    vp_add_cap(vp, VIRTIO_PCI_CAP_ISR_CFG, VP_BAR, VP_ISR_OFF, 1, VIRTIO_PCI_CAP_LEN, 0) <
		0 ||
	    (vdev->config_len && vp_add_cap(vp, VIRTIO_PCI_CAP_DEVICE_CFG, VP_BAR, VP_DEVICE_OFF,
					    vdev->config_len, VIRTIO_PCI_CAP_LEN, 0) < 0))
		return -1;
	vp->pci_cfg_cap =
	    vp_add_cap(vp, VIRTIO_PCI_CAP_PCI_CFG, VP_BAR, 0, 0, VIRTIO_PCI_CFG_CAP_LEN, 0);
	if (vp->pci_cfg_cap < 0)
		return -1;
	/* bar, offset, length and data are the driver's to write */
	uint8_t rw[VIRTIO_PCI_CFG_CAP_LEN] = {[VP_CAP_BAR] = 0xff};
	memset(rw + VP_CAP_OFFSET, 0xff, sizeof(rw) - VP_CAP_OFFSET);
	pci_device_set_wmask(&vp->pci, (uint32_t)vp->pci_cfg_cap, rw, sizeof(rw));
	return 0;
}

static int vdev_check(const struct virtio_dev *vdev, char *err, size_t errlen)
{
	uint32_t qmax = vdev->queue_max_size;
	if (!vdev->name || !vdev->ops || !vdev->ops->queue_notify)
		snprintf(err, errlen, "virtio device without a name or queue_notify");
	else if (vdev->device_id == 0 || vdev->device_id > VP_MAX_DEVICE_ID)
		snprintf(err, errlen, "%s: bad virtio device ID %u", vdev->name, vdev->device_id);
	else if (vdev->num_queues < 1 || vdev->num_queues > VIRTIO_MAX_QUEUES)
		snprintf(err, errlen, "%s: %u queues (1..%d supported)", vdev->name,
			 vdev->num_queues, VIRTIO_MAX_QUEUES);
	else if (qmax == 0 || qmax > VIRTQ_MAX_SIZE || (qmax & (qmax - 1)))
		snprintf(err, errlen, "%s: queue size %u is not a power of 2 up to %d", vdev->name,
			 qmax, VIRTQ_MAX_SIZE);
	else if (vdev->config_len > VIRTIO_PCI_CONFIG_MAX)
		snprintf(err, errlen, "%s: config space of %u bytes (max %d)", vdev->name,
			 vdev->config_len, VIRTIO_PCI_CONFIG_MAX);
	else
		return 0;
	return -1;
}

static uint32_t vp_class(uint32_t device_id)
{
	return device_id == VIRTIO_ID_NET     ? VP_CLASS_NET
	       : device_id == VIRTIO_ID_BLOCK ? VP_CLASS_STORAGE
					      : VP_CLASS_OTHER;
}

static struct virtio_pci *vp_new(const struct virtio_pci_env *env, struct virtio_dev *vdev,
				 char *err, size_t errlen)
{
	struct virtio_pci *vp = calloc(1, sizeof(*vp));
	if (!vp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&vp->lock, NULL);
	pthread_mutex_init(&vp->isr_lock, NULL);
	vp->vdev = vdev;
	vp->io = env->io;
	vp->use_ioeventfd = env->use_ioeventfd && !vdev->kicks_on_vcpu;
	vp->offered = (vdev->host_features | VP_FEATURES_ADD) & ~VP_FEATURES_DROP;
	atomic_store(&vp->config_vector, VIRTIO_MSI_NO_VECTOR);
	for (unsigned int i = 0; i < VIRTIO_MAX_QUEUES; i++) {
		vp->q[i].vp = vp;
		vp->q[i].index = i;
		vp->q[i].kick_fd = -1;
		vp_queue_set_vector(&vp->q[i], VIRTIO_MSI_NO_VECTOR);
	}
	for (unsigned int i = 0; vp->use_ioeventfd && i < vdev->num_queues; i++) {
		vp->q[i].kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vp->q[i].kick_fd < 0) {
			snprintf(err, errlen, "%s: eventfd: %s", vdev->name, strerror(errno));
			vp_free(vp);
			return NULL;
		}
	}
	return vp;
}

/* Builds the PCI function; nothing outside vp refers to it yet. */
static int vp_build(struct virtio_pci *vp, char *err, size_t errlen)
{
	struct virtio_dev *vdev = vp->vdev;
	uint16_t id = (uint16_t)(VIRTIO_PCI_DEVICE_BASE + vdev->device_id);
	pci_device_init(&vp->pci, vdev->name, VIRTIO_PCI_VENDOR, id, vp_class(vdev->device_id),
			VP_REVISION);
	pci_device_set_subsystem(&vp->pci, VIRTIO_PCI_VENDOR, id);
	vp->pci.ops = &vp_pci_ops;
	struct bus_region r = {
	    .handler = vp_bar_handler, .reg_name = vp_reg_name, .opaque = vp, .name = vdev->name};
	struct bus_region rp = {.handler = vp_pio_handler,
				.reg_name = vp_pio_reg_name,
				.opaque = vp,
				.name = vdev->name};
	if (pci_device_add_bar(&vp->pci, VP_BAR, VP_BAR_SIZE, &r) < 0 ||
	    pci_device_add_bar_flags(&vp->pci, VP_PIO_BAR, VP_PIO_BAR_SIZE, PCI_BAR_IO, &rp) < 0 ||
	    vp_add_caps(vp) < 0) {
		snprintf(err, errlen, "%s: cannot lay out the PCI function", vdev->name);
		return -1;
	}
	return pci_msix_init(&vp->pci, vp_msix_vectors(vdev), VP_MSIX_BAR, err, errlen);
}

static void vp_unpoll(struct virtio_pci *vp, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		iothread_del_fd(vp->io, vp->q[i].kick_fd);
}

int virtio_pci_attach(const struct virtio_pci_env *env, struct virtio_dev *vdev, char *err,
		      size_t errlen)
{
	if (vdev_check(vdev, err, errlen) < 0)
		return -1;
	struct virtio_pci *vp = vp_new(env, vdev, err, errlen);
	if (!vp)
		return -1;
	unsigned int polled = 0;
	if (vp_build(vp, err, errlen) < 0)
		goto fail;
	for (; vp->use_ioeventfd && env->io && polled < vdev->num_queues; polled++) {
		int r = iothread_add_fd(env->io, vp->q[polled].kick_fd, EPOLLIN, vp_kick_ready,
					&vp->q[polled]);
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot poll the queue's eventfd: %s", vdev->name,
				 strerror(-r));
			goto fail;
		}
	}
	/* Everything the guest can reach must be ready before the device is
	 * on the bus: queues, then transport hooks. */
	vdev->gm = env->gm;
	vdev->transport = &vp_transport_ops;
	vdev->transport_data = vp;
	vdev->driver_features = 0;
	atomic_store(&vdev->status, 0);
	if (virtio_dev_init_queues(vdev) < 0) {
		snprintf(err, errlen, "%s: cannot set up the queues", vdev->name);
		goto fail;
	}
	if (vp_pollers_add(vp) < 0) {
		snprintf(err, errlen, "%s: too many polled queues for the I/O thread", vdev->name);
		goto fail;
	}
	if (pci_bus_add_device(env->pci, &vp->pci, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	vp_unpoll(vp, polled);
	vdev->transport = NULL;
	vdev->transport_data = NULL;
	pci_msix_destroy(&vp->pci);
	vp_free(vp);
	return -1;
}
