// SPDX-License-Identifier: Apache-2.0
/* A VM whose build fails after KVM_CREATE_VM (here: a tap that does not
 * exist) ends in one line and exit 2, and is destroyed once: the failed
 * start destroys it, and `skiff run` must not again (it hung, or read the
 * freed PCI bus). There is no /dev/kvm here: open("/dev/kvm") and the VM's
 * ioctls are faked with /dev/null, just enough for the build to reach the
 * devices. Found by a hostile review (its harness, made a test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/commands.h"
#include "fake_bzimage.h"
#include "fake_kvm_open.h"

static int vm_fd = -1;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == kvm_fd) {
		switch (req) {
		case KVM_GET_API_VERSION:
			return KVM_API_VERSION;
		case KVM_CREATE_VM:
			return vm_fd = real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
		case KVM_GET_VCPU_MMAP_SIZE:
			return 4096;
		default:
			return 0; /* CHECK_EXTENSION: no */
		}
	}
	if (fd >= 0 && fd == vm_fd)
		return 0; /* TSS, irqchip, PIT, routing, memory slots */
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static void write_kernel(const char *path)
{
	uint8_t *b = fake_bzimage();
	assert_non_null(b);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, FAKE_LEN, f), FAKE_LEN);
	fclose(f);
	free(b);
}

static void hung(int sig)
{
	(void)sig;
	static const char m[] = "test_start_fail: cmd_run hung after a failed build\n";
	if (write(2, m, sizeof(m) - 1) < 0) {
	}
	_exit(4);
}

static void test_failed_build_destroyed_once(void **state)
{
	(void)state;
	char path[] = "/tmp/skiff-start-fail-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_kernel(path);
	char *args[] = {"run",	 "--kernel",	     path,	     "--mem", "256M",
			"--net", "tap=skiffnosuch0", "--no-seccomp", NULL};
	signal(SIGALRM, hung);
	alarm(30);
	int status = cmd_run(8, args, 0);
	alarm(0);
	unlink(path);
	assert_int_equal(status, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failed_build_destroyed_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
