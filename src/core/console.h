/* The host side of the serial console: stdin to the guest's UART, the
 * terminal in raw mode while the guest runs (restored on every exit path),
 * and the Ctrl-A escape (Ctrl-A x quits, Ctrl-A Ctrl-A sends Ctrl-A), as in
 * QEMU. */
#ifndef SKIFF_CONSOLE_H
#define SKIFF_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#include "devices/uart8250.h"

struct vm;

#define CONSOLE_ESCAPE 0x01 /* Ctrl-A */

enum console_action { CONSOLE_PASS, CONSOLE_QUIT };

/* Escape-sequence filter: feeds one input byte, appends bytes meant for the
 * guest to out (at most 2), sets *out_len. Pure, for testing. */
enum console_action console_escape_feed(int *state, uint8_t c, uint8_t *out, size_t *out_len);

/* Starts forwarding stdin to `uart`; puts a tty in raw mode. */
int console_start(struct vm *vm, struct uart8250 *uart);
/* Restores the terminal if it was changed; safe to call more than once
 * and from a signal handler. */
void console_restore(void);

/* uart_tx_fn writing guest output to stdout. */
void console_tx(void *opaque, const uint8_t *buf, size_t len);

#endif
