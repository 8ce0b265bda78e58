// SPDX-License-Identifier: Apache-2.0
/* A disk image's lock across a live migration's switch
 * (blk_backend_lock, virtio-blk's dev_ops.handover): while the source
 * holds it a target's open is refused; released, the target opens it and
 * the source cannot take it back until the target lets go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/block/blk_backend.h"

static void test_handover(void **state)
{
	(void)state;
	char path[] = "/tmp/skiff-lock-XXXXXX", err[300];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	struct blk_backend src, tgt;
	assert_int_equal(blk_backend_open(&src, path, false, false, err, sizeof(err)), 0);
	/* Another process's open file of the image: refused while held. */
	assert_int_equal(blk_backend_open(&tgt, path, false, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is in use"));
	assert_int_equal(blk_backend_lock(&src, false), 0);
	assert_int_equal(blk_backend_open(&tgt, path, false, false, err, sizeof(err)), 0);
	/* The target has it: the source's take-back fails, never both. */
	assert_int_equal(blk_backend_lock(&src, true), -EWOULDBLOCK);
	blk_backend_close(&tgt);
	assert_int_equal(blk_backend_lock(&src, true), 0);
	assert_int_equal(blk_backend_open(&tgt, path, false, false, err, sizeof(err)), -1);
	blk_backend_close(&src);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_handover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
