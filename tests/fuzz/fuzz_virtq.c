// SPDX-License-Identifier: Apache-2.0
/* Split virtqueue (src/virtio/virtq.c), device side: fuzz bytes configure
 * the queue (size, ring addresses, features, activation), write rings and
 * descriptor tables (direct and indirect) as a driver would, and drive the
 * device calls (pop, unpop, push, batches, notify suppression), with resets
 * in between. Guest RAM changes under the walker (fuzz_common.h).
 *
 * Checked beyond ASan/UBSan: every popped buffer lies in guest RAM, the
 * byte and segment counts add up, and no more chains are in flight than
 * the queue size. */
#include <string.h>

#include "fuzz_common.h"
#include "virtio/virtq.h"

#define MAXQ 256

static struct virtq vq;
static struct virtq_elem elem;
static uint16_t inflight[MAXQ];
static unsigned int ninflight;
static int broken_calls;
static bool can_unpop; /* the last pop is not yet pushed */

static void on_broken(struct virtq *q, void *opaque)
{
	(void)q, (void)opaque;
	broken_calls++;
}

static void check_elem(const struct virtq_elem *e)
{
	uint64_t out = 0, in = 0;
	FZ_CHECK(e->out_num + e->in_num <= VIRTQ_MAX_SEGS);
	FZ_CHECK(e->head < vq.size);
	for (unsigned int i = 0; i < e->out_num + e->in_num; i++) {
		FZ_CHECK(fz_in_ram(e->iov[i].iov_base, e->iov[i].iov_len));
		*(i < e->out_num ? &out : &in) += e->iov[i].iov_len;
	}
	FZ_CHECK(out == e->out_len && in == e->in_len);
	FZ_CHECK(out + in <= VIRTQ_MAX_TOTAL_LEN);
}

static void do_pop(void)
{
	int r = virtq_pop(&vq, &fz_gm, &elem);
	if (r < 0) {
		FZ_CHECK(vq.broken);
		return;
	}
	if (r == 0)
		return;
	check_elem(&elem);
	FZ_CHECK(ninflight < vq.size && ninflight < MAXQ);
	inflight[ninflight++] = elem.head;
	can_unpop = true;
}

static void do_push(uint8_t sel)
{
	struct virtq_used_elem e[9]; /* up to 8 popped ones and a bogus one */
	unsigned int n = 1 + sel % 8, k = 0;

	for (; k < n && k < ninflight; k++)
		e[k] = (struct virtq_used_elem){.id = inflight[ninflight - 1 - k], .len = fz_u32()};
	if (sel & 0x80) /* a head that was never popped: must be refused */
		e[k++] = (struct virtq_used_elem){.id = fz_u16(), .len = 0};
	if (!k)
		return;
	can_unpop = false;
	int r = k == 1 && !(sel & 0x40) ? virtq_push(&vq, &fz_gm, (uint16_t)e[0].id, e[0].len)
					: virtq_push_batch(&vq, &fz_gm, e, k);
	if (r == 0 && !(sel & 0x80))
		ninflight -= k;
	else if (r == 0)
		ninflight = ninflight >= k ? ninflight - k : 0; /* the bogus id passed */
}

static void do_reset(void)
{
	virtq_reset(&vq);
	ninflight = 0;
	can_unpop = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_q g;
	uint16_t max = (uint16_t)(1u << (size ? data[size - 1] % 9 : 8)); /* 1..256 */

	fz_begin(data, size);
	virtq_init(&vq, "fuzz q0", max, on_broken, NULL);
	ninflight = 0;
	can_unpop = false;
	fzq_layout(&g, 0, max);
	for (unsigned int steps = 0; fz_more() && steps < 4096; steps++) {
		uint8_t op = fz_u8();
		switch (op % 16) {
		case 0:
			g.size = fz_u16();
			virtq_set_size(&vq, g.size);
			break;
		case 1:
			virtq_set_addr(&vq, (enum virtq_ring)(fz_u8() % 4), fz_gpa());
			break;
		case 2: /* the standard layout, then activate */
			fzq_configure(&vq, &g, (uint64_t)fz_u8() << 28);
			virtq_activate(&vq, &fz_gm);
			break;
		case 3:
			virtq_set_features(&vq, fz_u64());
			break;
		case 4:
			virtq_activate(&vq, &fz_gm);
			break;
		case 5:
		case 6:
		case 7:
			do_pop();
			break;
		case 8:
			do_push(fz_u8());
			break;
		case 9:
			if (can_unpop && virtq_unpop(&vq) == 0)
				ninflight--;
			can_unpop = false;
			break;
		case 10:
			virtq_should_notify(&vq, &fz_gm);
			break;
		case 11:
			switch (fz_u8() % 5) {
			case 0:
				virtq_disable_notify(&vq, &fz_gm);
				break;
			case 1:
				virtq_enable_notify(&vq, &fz_gm);
				break;
			case 2:
				virtq_has_work(&vq, &fz_gm);
				break;
			default:
				virtq_poll_hold(&vq, &fz_gm, fz_u8() & 1);
			}
			break;
		case 12:
			do_reset();
			g.avail_idx = 0;
			break;
		case 13:
			if (fz_u8() == 0x5a)
				virtq_mark_broken(&vq, (enum virtq_err)fz_u8());
			break;
		default:
			fzq_driver_op(&g, fz_u8());
		}
		FZ_CHECK((uint16_t)(vq.last_avail_idx - vq.used_idx) <= vq.size);
	}
	return 0;
}
