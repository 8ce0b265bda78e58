// SPDX-License-Identifier: Apache-2.0
#include "stats/kvm_stats.h"

#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void counter_add(struct kvm_counters *k, const char *name, uint64_t v)
{
	for (unsigned int i = 0; i < k->n; i++) {
		if (!strcmp(k->c[i].name, name)) {
			k->c[i].value += v;
			return;
		}
	}
	if (k->n == KVM_STATS_MAX)
		return;
	struct kvm_counter *c = &k->c[k->n++];
	snprintf(c->name, sizeof(c->name), "%.63s", name);
	c->value = v;
}

int kvm_stats_collect(int fd, struct kvm_counters *out)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);
	if (sfd < 0)
		return -1;
	int ret = -1;
	struct kvm_stats_header h;
	char *descs = NULL;
	if (pread(sfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.num_desc > 4096 ||
	    h.name_size > 256)
		goto out;
	size_t dsize = sizeof(struct kvm_stats_desc) + h.name_size;
	descs = malloc(dsize * h.num_desc);
	if (!descs ||
	    pread(sfd, descs, dsize * h.num_desc, h.desc_offset) != (ssize_t)(dsize * h.num_desc))
		goto out;
	for (uint32_t i = 0; i < h.num_desc; i++) {
		struct kvm_stats_desc *d = (struct kvm_stats_desc *)(descs + i * dsize);
		uint32_t type = d->flags & KVM_STATS_TYPE_MASK;
		if (type != KVM_STATS_TYPE_CUMULATIVE || d->size != 1)
			continue;
		uint64_t v;
		if (pread(sfd, &v, sizeof(v), h.data_offset + d->offset) != (ssize_t)sizeof(v))
			continue;
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(h.name_size < 63 ? h.name_size : 63),
			 d->name);
		counter_add(out, name, v);
	}
	ret = 0;
out:
	free(descs);
	close(sfd);
	return ret;
}

uint64_t kvm_stats_get(const struct kvm_counters *k, const char *name)
{
	for (unsigned int i = 0; i < k->n; i++)
		if (!strcmp(k->c[i].name, name))
			return k->c[i].value;
	return 0;
}
