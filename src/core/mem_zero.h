// SPDX-License-Identifier: Apache-2.0
/* Zeroing a large object without making it resident. */
#ifndef SKIFF_CORE_MEM_ZERO_H
#define SKIFF_CORE_MEM_ZERO_H

#include <stddef.h>

/* Zeroes N bytes at P, writing only the pages that are not zero already.
 * A page never written reads as the kernel's shared zero page and stays
 * out of the resident set; memset would give each one a page of its own
 * (the API's 870 KiB model, static and still zero at its init, was most
 * of a VM's memory beyond guest RAM). */
void mem_zero(void *p, size_t n);

#endif
