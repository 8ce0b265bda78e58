// SPDX-License-Identifier: Apache-2.0
/* A cache of host-decompressed kernels, keyed by a hash of the bzImage, so
 * the decompression is paid once per kernel, not once per boot. Directory:
 * $SKIFF_CACHE_DIR (empty disables), else $XDG_CACHE_HOME/skiff, else
 * $HOME/.cache/skiff. Entries are written atomically (rename). */
#ifndef SKIFF_KCACHE_H
#define SKIFF_KCACHE_H

#include <stddef.h>
#include <stdint.h>

/* XXH3, 64-bit (libxxhash): the bzImage is hashed on every boot, and a
 * byte-at-a-time hash (FNV-1a, before) cost ~11 ms of an 8 MiB kernel on a
 * native host. Not a security boundary: whoever can write the kernel file
 * or the cache can choose the kernel anyway. */
uint64_t kcache_hash(const uint8_t *p, size_t len);

/* Maps the cached vmlinux for `key` read-only; NULL on a miss. */
const uint8_t *kcache_lookup(uint64_t key, size_t *len);
/* Stores a vmlinux for `key`; failures are silent (the cache is optional). */
void kcache_store(uint64_t key, const uint8_t *p, size_t len);
void kcache_release(const uint8_t *p, size_t len);

#endif
