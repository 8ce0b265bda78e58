/* A cache of host-decompressed kernels, keyed by a hash of the bzImage, so
 * the decompression is paid once per kernel, not once per boot. Directory:
 * $SKIFF_CACHE_DIR (empty disables), else $XDG_CACHE_HOME/skiff, else
 * $HOME/.cache/skiff. Entries are written atomically (rename). */
#ifndef SKIFF_KCACHE_H
#define SKIFF_KCACHE_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64-bit: cheap, and collisions only cost a wrong cache hit that
 * vmlinux_check would still have to accept. */
uint64_t kcache_hash(const uint8_t *p, size_t len);

/* Maps the cached vmlinux for `key` read-only; NULL on a miss. */
const uint8_t *kcache_lookup(uint64_t key, size_t *len);
/* Stores a vmlinux for `key`; failures are silent (the cache is optional). */
void kcache_store(uint64_t key, const uint8_t *p, size_t len);
void kcache_release(const uint8_t *p, size_t len);

#endif
