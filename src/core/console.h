// SPDX-License-Identifier: Apache-2.0
/* The host side of the serial console: stdin to the guest's UART, the
 * terminal in raw mode while the guest runs (restored on every exit path),
 * and the Ctrl-A escape (Ctrl-A x quits, Ctrl-A Ctrl-A sends Ctrl-A), as in
 * QEMU. */
#ifndef SKIFF_CONSOLE_H
#define SKIFF_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "core/console_filter.h"

struct vm;

#define CONSOLE_ESCAPE 0x01 /* Ctrl-A */

enum console_action { CONSOLE_PASS, CONSOLE_QUIT };

/* Escape-sequence filter: feeds one input byte, appends bytes meant for the
 * guest to out (at most 2), sets *out_len. Pure, for testing. */
enum console_action console_escape_feed(int *state, uint8_t c, uint8_t *out, size_t *out_len);

/* Takes bytes for the guest; returns how many fit (0: try again later). */
typedef size_t (*console_receive_fn)(void *opaque, const uint8_t *buf, size_t len);

/* Starts forwarding stdin to receive() on a thread that ends once the VM
 * is asked to stop (join it then); puts a tty in raw mode; sets the filter
 * console_tx applies (AUTO: safe on a terminal, off otherwise). 0 or
 * -errno. */
int console_start(struct vm *vm, enum console_filter_mode filter, console_receive_fn receive,
		  void *opaque, pthread_t *thread);
/* Restores the terminal if it was changed; safe to call more than once
 * and from a signal handler. */
void console_restore(void);

/* uart_tx_fn writing guest output to stdout through the filter
 * console_start chose (core/console_filter.h). */
void console_tx(void *opaque, const uint8_t *buf, size_t len);

#endif
