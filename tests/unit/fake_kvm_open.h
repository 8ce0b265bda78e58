// SPDX-License-Identifier: Apache-2.0
/* For tests that run `skiff run` through cmd_run without KVM: open(2)
 * interposed so that /dev/kvm is /dev/null (its fd in kvm_fd, for the
 * test's own ioctl interposer to recognise); every other path is opened
 * for real (real_open: the syscall, past the interposer). Include once,
 * in the test's one translation unit. */
#ifndef SKIFF_FAKE_KVM_OPEN_H
#define SKIFF_FAKE_KVM_OPEN_H

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int kvm_fd = -1;

static int real_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!strcmp(path, "/dev/kvm"))
		return kvm_fd = real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
	return real_open(path, flags, mode);
}

#endif
