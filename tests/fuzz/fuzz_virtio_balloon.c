// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon (src/devices/virtio-balloon/virtio_balloon*.c): fuzz bytes build chains
 * on its four queues (inflate, deflate, stats, reporting: the features the
 * driver takes decide which is which), kick them, fire the stats timer,
 * change the target, read and write the config space, reset. Guest RAM
 * changes under the device (fuzz_common.h). Checked: every discard lies in
 * guest RAM on 4 KiB page boundaries (the device never gives back host
 * memory outside the guest's), a run stays within its budget, no chain
 * yields more pages than BALLOON_PFNS_MAX. Queues 2 and 3's rings sit
 * among the buffers (fzq_layout places two queues apart): more chaos. */
#include <string.h>

#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "fuzz_common.h"
#include "virtio/virtio_dev.h"

static struct virtio_dev *dev;
static uint64_t popped;

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static int fake_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	return 0;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_resched = fake_queue_resched,
};

/* Checks instead of madvise: the fuzzer's RAM stays as it is. */
static int check_discard(void *host, size_t len)
{
	FZ_CHECK(len && fz_in_ram(host, len));
	FZ_CHECK(((uintptr_t)host - (uintptr_t)fz_gm.host) % 4096 == 0 && len % 4096 == 0);
	return 0;
}

static void on_pop(const struct virtq *vq, const struct virtq_elem *e)
{
	(void)vq;
	for (unsigned int i = 0; i < e->out_num + e->in_num; i++)
		FZ_CHECK(fz_in_ram(e->iov[i].iov_base, e->iov[i].iov_len));
	popped++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char err[200];
	struct balloon_spec s;
	balloon_spec_init(&s);
	if (opt_parse_spec(&balloon_spec_table, "stats=1,reporting=on,deflate-on-oom=on", &s, err,
			   sizeof(err)) < 0)
		abort();
	fz_begin(NULL, 0); /* guest RAM exists for the target's check */
	dev = virtio_balloon_create("virtio-balloon0", &s, &fz_gm, err, sizeof(err));
	if (!dev)
		abort();
	dev->transport = &fake_transport;
	((struct virtio_balloon *)dev->priv)->discard = check_discard;
	fz_on_pop = on_pop;
	return 0;
}

static void kick(struct virtio_balloon *b, unsigned int q)
{
	uint64_t pops = popped,
		 pages = counter_get(&b->stats.inflated) + counter_get(&b->stats.bad_pfns);
	dev->ops->queue_notify(dev, q);
	FZ_CHECK(popped - pops <= BALLOON_POP_BUDGET);
	FZ_CHECK(counter_get(&b->stats.inflated) + counter_get(&b->stats.bad_pfns) - pages <=
		 (popped - pops) * BALLOON_PFNS_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_balloon *b = dev->priv;
	struct fz_q g[4];
	bool active = false;
	char err[200];

	fz_begin(data, size);
	dev->gm = &fz_gm;
	memset(&b->stats, 0, sizeof(b->stats));
	popped = 0;
	dev->driver_features = (1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTQ_F_INDIRECT_DESC |
				1ULL << VIRTQ_F_EVENT_IDX | dev->host_features) &
			       ~((uint64_t)fz_u8() << 1) & ~((uint64_t)fz_u8() << 28);
	if (virtio_dev_init_queues(dev) < 0)
		abort();
	for (unsigned int q = 0; q < dev->num_queues; q++)
		fzq_layout(&g[q], q, (uint16_t)(1u << (fz_u8() % 9))); /* 1..256 */
	for (unsigned int steps = 0; fz_more() && steps < 1024; steps++) {
		uint8_t op = fz_u8();
		unsigned int q = (op >> 4) % dev->num_queues;
		switch (op % 10) {
		case 0: /* DRIVER_OK, as the transport does it */
			if (active)
				break;
			for (unsigned int i = 0; i < dev->num_queues; i++) {
				fzq_configure(&dev->vqs[i], &g[i], dev->driver_features);
				virtq_activate(&dev->vqs[i], &fz_gm);
			}
			active = dev->ops->activate(dev) == 0;
			break;
		case 1:
		case 2:
			kick(b, q);
			break;
		case 3: /* reset, as the transport does it */
			dev->ops->reset(dev);
			for (unsigned int i = 0; i < dev->num_queues; i++) {
				virtq_reset(&dev->vqs[i]);
				g[i].avail_idx = 0;
			}
			active = false;
			break;
		case 4: {
			uint8_t buf[8];
			dev->ops->config_read(dev, fz_u8() % 8, buf, 1 + fz_u8() % 8);
			break;
		}
		case 5: {
			uint8_t buf[8];
			fz_bytes(buf, sizeof(buf));
			dev->ops->config_write(dev, fz_u8() % 8, buf, 1 + fz_u8() % 8);
			break;
		}
		case 6:
			virtio_balloon_stats_tick(b, 0);
			break;
		case 7: {
			char spec[32];
			snprintf(spec, sizeof(spec), "%s=%u", fz_u8() & 1 ? "amount" : "stats",
				 fz_u16());
			virtio_balloon_update(dev, spec, err, sizeof(err));
			FZ_CHECK(atomic_load(&b->num_pages) <= b->ram_pages);
			break;
		}
		default:
			fzq_driver_op(&g[q], fz_u8());
		}
	}
	dev->ops->reset(dev);
	for (unsigned int i = 0; i < dev->num_queues; i++)
		virtq_reset(&dev->vqs[i]);
	return 0;
}
