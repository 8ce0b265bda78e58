// SPDX-License-Identifier: Apache-2.0
/* Live migration's stream as the target reads it (vmm/mig_recv.c,
 * vmm/mig_proto.c): the input is the stream, from the source's first
 * byte; RAM at most 64 KiB. Checked beyond ASan/UBSan: a stream that is
 * taken has its state parsed and its RAM as HELLO asked; a refused one
 * says why in one line. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "vmm/mig_proto.h"
#include "vmm/mig_recv.h"

#define MAX_RAM (16 * MIG_PAGE)
#define MAX_IN	(128 * 1024) /* within a socket's buffer: written before it is read */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	if (size > MAX_IN || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	int sz = 2 * MAX_IN;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (size && mig_write_all(sv[0], data, size, 1000) < 0)
		abort();
	close(sv[0]);
	struct mig_rx rx;
	char err[300] = "";
	int r = mig_rx_run(&rx, sv[1], MAX_RAM, NULL, err, sizeof(err));
	if (r == 0 && (!rx.img.nr || !rx.ram_size || rx.ram_size > MAX_RAM))
		abort();
	if (r < 0 && (!err[0] || strchr(err, '\n')))
		abort();
	mig_rx_free(&rx);
	close(sv[1]);
	return 0;
}
