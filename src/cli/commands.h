/* The skiff subcommands. Each returns the process exit status. */
#ifndef SKIFF_COMMANDS_H
#define SKIFF_COMMANDS_H

#include <stdint.h>

int cmd_run(int argc, char **argv, uint64_t start_ns);
int cmd_probe(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_stat(int argc, char **argv);

#endif
