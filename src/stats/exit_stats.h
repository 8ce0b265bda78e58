/* Exit accounting: what made the guest leave KVM, printed as a table. */
#ifndef SKIFF_EXIT_STATS_H
#define SKIFF_EXIT_STATS_H

#include <stdio.h>

struct vm;

void exit_stats_print(FILE *out, struct vm *vm);

#endif
