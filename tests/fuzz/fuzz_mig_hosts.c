// SPDX-License-Identifier: Apache-2.0
/* The hosts file parser of tcp: migration URLs (vmm/mig_hosts.c): the
 * first byte (mod 64) is the name's length, then the name, then the
 * file's text, given in a block of exactly its size (a read past it is
 * ASan's). Checked beyond ASan/UBSan: for a valid name and a text without
 * NUL bytes, the addresses found are those of a second parser written
 * apart (strtok_r over a copy, as hosts(5) reads), in the file's order. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vmm/mig_hosts.h"

static int oracle(char *t, const char *name, struct mig_host_addr *out, int max)
{
	int n = 0;
	char *sl, *sf;
	for (char *line = strtok_r(t, "\n", &sl); line && n < max;
	     line = strtok_r(NULL, "\n", &sl)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *f = strtok_r(line, " \t\r", &sf);
		struct mig_host_addr a = {0};
		if (!f || strlen(f) >= INET6_ADDRSTRLEN)
			continue;
		if (inet_pton(AF_INET, f, &a.a.v4) == 1)
			a.family = AF_INET;
		else if (inet_pton(AF_INET6, f, &a.a.v6) == 1)
			a.family = AF_INET6;
		else
			continue;
		while ((f = strtok_r(NULL, " \t\r", &sf)))
			if (!strcasecmp(f, name)) {
				out[n++] = a;
				break;
			}
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[64];
	size_t nl = size ? data[0] % 64 : 0;
	if (!size || size < 1 + nl)
		return 0;
	memcpy(name, data + 1, nl);
	name[nl] = '\0';
	size_t len = size - 1 - nl;
	char *text = malloc(len ? len : 1), *copy = malloc(len + 1);
	if (!text || !copy)
		abort();
	memcpy(text, data + 1 + nl, len);
	struct mig_host_addr out[MIG_HOSTS_ADDRS_MAX], ref[MIG_HOSTS_ADDRS_MAX];
	bool ok = strlen(name) == nl && mig_host_name_ok(name);
	int n = mig_hosts_find(text, len, name, out, MIG_HOSTS_ADDRS_MAX);
	if (n < 0 || n > MIG_HOSTS_ADDRS_MAX)
		abort();
	if (ok && !memchr(text, 0, len)) {
		memcpy(copy, text, len);
		copy[len] = '\0';
		if (oracle(copy, name, ref, MIG_HOSTS_ADDRS_MAX) != n)
			abort();
		for (int i = 0; i < n; i++)
			if (out[i].family != ref[i].family ||
			    memcmp(&out[i].a, &ref[i].a, out[i].family == AF_INET ? 4 : 16))
				abort();
	}
	free(text);
	free(copy);
	return 0;
}
