// SPDX-License-Identifier: Apache-2.0
/* e1000: names for statistics and exit accounting: the device's counters
 * ("tx packets") and its registers ("TDT write", "ICR read"). */
#include <stdatomic.h>
#include <stdio.h>

#include "devices/e1000/e1000_priv.h"

_Static_assert(E1000_NR_COUNTERS == 18, "one name per counter in struct e1000_stats");
static const char *const counter_names[E1000_NR_COUNTERS] = {
    "tx packets",  "tx bytes",	  "tx dropped", "tx errors",	 "tx tso",    "rx packets",
    "rx bytes",	   "rx filtered", "rx dropped", "rx starved",	 "rx errors", "dma errors",
    "ring errors", "irqs",	  "flushes",	"irqs deferred", "rx tso",    "rx tso segments",
};

unsigned int e1000_counter_count(void)
{
	return E1000_NR_COUNTERS;
}

const char *e1000_counter_name(unsigned int i)
{
	return i < E1000_NR_COUNTERS ? counter_names[i] : NULL;
}

const counter_t *e1000_counter(const struct e1000 *d, unsigned int i)
{
	return i < E1000_NR_COUNTERS ? (const counter_t *)&d->stats + i : NULL;
}

static const struct {
	uint32_t off;
	const char *name;
} reg_names[] = {
    {E1000_CTRL, "CTRL"},   {E1000_STATUS, "STATUS"},	  {E1000_EECD, "EECD"},
    {E1000_EERD, "EERD"},   {E1000_CTRL_EXT, "CTRL_EXT"}, {E1000_VET, "VET"},
    {E1000_MDIC, "MDIC"},   {E1000_ICR, "ICR"},		  {E1000_ITR, "ITR"},
    {E1000_ICS, "ICS"},	    {E1000_IMS, "IMS"},		  {E1000_IMC, "IMC"},
    {E1000_RCTL, "RCTL"},   {E1000_TCTL, "TCTL"},	  {E1000_TIPG, "TIPG"},
    {E1000_RDBAL, "RDBAL"}, {E1000_RDBAH, "RDBAH"},	  {E1000_RDLEN, "RDLEN"},
    {E1000_RDH, "RDH"},	    {E1000_RDT, "RDT"},		  {E1000_RDTR, "RDTR"},
    {E1000_RADV, "RADV"},   {E1000_TDBAL, "TDBAL"},	  {E1000_TDBAH, "TDBAH"},
    {E1000_TDLEN, "TDLEN"}, {E1000_TDH, "TDH"},		  {E1000_TDT, "TDT"},
    {E1000_TIDV, "TIDV"},   {E1000_TADV, "TADV"},	  {E1000_RXCSUM, "RXCSUM"},
    {E1000_MANC, "MANC"},
};

/* "TDT write", "ICR read": the accounting adds the device name. */
const char *e1000_reg_name(void *opaque, uint64_t off, bool is_write)
{
	(void)opaque;
	static const char *const ranges[][2] = {{"stats read", "stats write"},
						{"MTA read", "MTA write"},
						{"RA read", "RA write"},
						{"VFTA read", "VFTA write"}};
	static char names[sizeof(reg_names) / sizeof(reg_names[0])][2][20];
	static _Atomic int ready;
	if (!atomic_load(&ready)) {
		/* Idempotent: two threads racing write the same bytes. */
		for (size_t i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++) {
			snprintf(names[i][0], sizeof(names[i][0]), "%s read", reg_names[i].name);
			snprintf(names[i][1], sizeof(names[i][1]), "%s write", reg_names[i].name);
		}
		atomic_store(&ready, 1);
	}
	for (size_t i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (reg_names[i].off == (off & ~3ull))
			return names[i][is_write];
	int r = off >= E1000_STATS && off < E1000_STATS_END ? 0
		: off >= E1000_MTA && off < E1000_RA	    ? 1
		: off >= E1000_RA && off < E1000_RA + 0x80  ? 2
		: off >= E1000_VFTA && off < E1000_WUC	    ? 3
							    : -1;
	return r < 0 ? NULL : ranges[r][is_write];
}

const char *e1000_name(const struct e1000 *d)
{
	return d->name;
}
