// SPDX-License-Identifier: Apache-2.0
/* A kind's own snapshot section in a unit test: saved into a fresh
 * writer, and refused whenever it is cut (test_kind_snap.c,
 * test_net_kind_snap.c). Needs cmocka's headers first. */
#ifndef SKIFF_TEST_KIND_SNAP_FX_H
#define SKIFF_TEST_KIND_SNAP_FX_H

#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "devices/device.h"

/* Saves dev into a fresh writer; its payload is copied to *out. */
static inline size_t save(const struct dev_ops *ops, void *dev, uint8_t **out)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(ops->save(dev, &w, SNAP_ID_DEVICE, 5, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, 5);
	assert_non_null(s);
	*out = malloc(s->len + 1);
	memcpy(*out, s->data, s->len);
	size_t n = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return n;
}

/* Every shorter payload, and one longer, refused in one line. */
static inline void cuts_refused(const struct dev_ops *ops, void *dev, const uint8_t *p, size_t n)
{
	char err[200];
	uint8_t *longer = calloc(1, n + 1);
	memcpy(longer, p, n);
	for (size_t k = 0; k <= n + 1; k++) {
		if (k == n)
			continue;
		err[0] = '\0';
		assert_int_equal(ops->restore(dev, longer, k, err, sizeof(err)), -1);
		assert_true(err[0] && !strchr(err, '\n'));
	}
	free(longer);
}

#endif
