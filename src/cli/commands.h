// SPDX-License-Identifier: Apache-2.0
/* The skiff subcommands. Each returns the process exit status. */
#ifndef SKIFF_COMMANDS_H
#define SKIFF_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

int cmd_run(int argc, char **argv, uint64_t start_ns);
int cmd_probe(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_stat(int argc, char **argv);
/* help.c: `skiff help [--man|--bash-completion]`, `skiff version`. */
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
/* The list of commands, for `skiff --help`. */
void cli_usage(FILE *out);

#endif
