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

struct vm;

#define CONSOLE_ESCAPE 0x01 /* Ctrl-A */

enum console_action { CONSOLE_PASS, CONSOLE_QUIT };

/* Escape-sequence filter: feeds one input byte, appends bytes meant for the
 * guest to out (at most 2), sets *out_len. Pure, for testing. */
enum console_action console_escape_feed(int *state, uint8_t c, uint8_t *out, size_t *out_len);

/* Takes bytes for the guest; returns how many fit (0: try again later). */
typedef size_t (*console_receive_fn)(void *opaque, const uint8_t *buf, size_t len);

/* Starts forwarding stdin to receive() on a thread that ends once the VM
 * is asked to stop (join it then); puts a tty in raw mode. 0 or -errno. */
int console_start(struct vm *vm, console_receive_fn receive, void *opaque, pthread_t *thread);
/* Restores the terminal if it was changed; safe to call more than once
 * and from a signal handler. */
void console_restore(void);

/* Copies guest output to out (room for 2 * len bytes) with every control
 * byte except \n \r \t \b, and DEL, in caret notation (ESC -> "^[");
 * returns the bytes written. Pure, for testing. */
size_t console_sanitize(const uint8_t *in, size_t len, uint8_t *out);

/* uart_tx_fn writing guest output to stdout: sanitized when stdout is a
 * terminal (decided by console_start), byte for byte otherwise. */
void console_tx(void *opaque, const uint8_t *buf, size_t len);

#endif
