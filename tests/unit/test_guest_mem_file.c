// SPDX-License-Identifier: Apache-2.0
/* A snapshot's memory file mapped as guest RAM and cut short after the
 * load: the first touch past its end must end the process with one line
 * and status 1, not a SIGBUS (issue 32). In a child, so the suite lives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/guest_mem.h"

#define RAM (4u << 20)

/* Runs a child that maps a RAM-sized file, cuts it to `keep` bytes and
 * reads the last page; its wait status and its stderr in err. */
static int mapped_then_cut(off_t keep, char *err, size_t errlen)
{
	char path[] = "/tmp/skiff-gm-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, RAM), 0);
	int pipefd[2];
	assert_int_equal(pipe(pipefd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		struct guest_mem gm;
		if (guest_mem_map_file(&gm, RAM, fd) < 0)
			_exit(3);
		if (ftruncate(fd, keep) < 0)
			_exit(4);
		volatile uint8_t *p = guest_mem_ptr(&gm, RAM - 4096, 1);
		uint8_t v = *p;
		_exit(v == 0 ? 0 : 5);
	}
	close(pipefd[1]);
	close(fd);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	ssize_t n = read(pipefd[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	return st;
}

static void test_guest_mem_file_cut_is_one_line(void **state)
{
	(void)state;
	char err[256];
	int st = mapped_then_cut(RAM / 2, err, sizeof(err));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(err, "guest memory file was cut short"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
}

static void test_guest_mem_file_whole_reads(void **state)
{
	(void)state;
	char err[256];
	int st = mapped_then_cut(RAM, err, sizeof(err));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_guest_mem_file_cut_is_one_line),
	    cmocka_unit_test(test_guest_mem_file_whole_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
