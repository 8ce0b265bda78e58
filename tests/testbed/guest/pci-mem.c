// SPDX-License-Identifier: Apache-2.0
/* pci-mem: reads, or writes then reads back, one 64-bit word of a PCI
 * memory BAR through its sysfs file (/sys/bus/pci/devices/ADDR/resourceN).
 *
 *   pci-mem FILE OFFSET          prints the word at OFFSET
 *   pci-mem FILE OFFSET VALUE    writes VALUE there, then prints it back
 *
 * Why a program: a memory BAR's resource file answers mmap only (read and
 * write are for I/O BARs), and busybox's devmem takes physical addresses,
 * which the testbed would have to look up and /dev/mem may refuse. One
 * page around OFFSET is mapped, so an 8 GiB BAR costs nothing. Prints
 * 0x%016llx, or one line saying why not and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int number(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long off, val = 0;
	if (argc < 3 || argc > 4 || number(argv[2], &off) < 0 ||
	    (argc == 4 && number(argv[3], &val) < 0) || off % 8) {
		fprintf(stderr, "usage: pci-mem FILE OFFSET [VALUE] (OFFSET a multiple of 8)\n");
		return 1;
	}
	int fd = open(argv[1], argc == 4 ? O_RDWR | O_SYNC : O_RDONLY | O_SYNC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "pci-mem: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (off + 8 > (unsigned long long)st.st_size) {
		fprintf(stderr, "pci-mem: offset 0x%llx is past %s's %lld bytes\n", off, argv[1],
			(long long)st.st_size);
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long base = off & ~(unsigned long long)(page - 1);
	void *p = mmap(NULL, (size_t)page, argc == 4 ? PROT_READ | PROT_WRITE : PROT_READ,
		       MAP_SHARED, fd, (off_t)base);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pci-mem: mmap %s at 0x%llx: %s\n", argv[1], base, strerror(errno));
		return 1;
	}
	volatile uint64_t *w = (volatile uint64_t *)((char *)p + (off - base));
	if (argc == 4)
		*w = val;
	printf("0x%016llx\n", (unsigned long long)*w);
	munmap(p, (size_t)page);
	close(fd);
	return 0;
}
