// SPDX-License-Identifier: Apache-2.0
/* The metrics line (src/api/api_metrics.c): Firecracker's groups and
 * field names, parsed back with json-c. Once from a made-up statistics
 * text (every mapping), once through api_fc_flush_metrics with a VM that
 * has a real virtio-blk, an e1000's counters and a vCPU's but runs
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_fc.h"
#include "api/api_metrics.h"
#include "api/api_model.h"
#include "core/vcpu.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "virtio/virtio_dev.h"

/* A group by its name, from the kinds' rows. */
static const struct dev_metrics *kind_group(const char *name)
{
	for (size_t k = 0; k < dm_nr_kinds; k++)
		if (dm_kinds[k]->metrics && !strcmp(dm_kinds[k]->metrics->group, name))
			return dm_kinds[k]->metrics;
	fail_msg("no metrics group %s", name);
	return NULL;
}

/* A kind's own group, by its row's prefix ("e1000-"). */
static const struct dev_metrics *kind_metrics(const char *prefix)
{
	for (size_t k = 0; k < dm_nr_kinds; k++)
		if (!strcmp(dm_kinds[k]->prefix, prefix) && dm_kinds[k]->metrics)
			return dm_kinds[k]->metrics;
	fail_msg("kind %s has no metrics group", prefix);
	return NULL;
}

static struct json_object *group(struct json_object *o, const char *name)
{
	struct json_object *g;
	if (!json_object_object_get_ex(o, name, &g))
		fail_msg("no group \"%s\" in %s", name, json_object_to_json_string(o));
	assert_int_equal(json_object_get_type(g), json_type_object);
	return g;
}

/* An integer field, as Firecracker writes them. */
static int64_t field(struct json_object *o, const char *grp, const char *name)
{
	struct json_object *v;
	if (!json_object_object_get_ex(group(o, grp), name, &v))
		fail_msg("no field %s.%s", grp, name);
	assert_int_equal(json_object_get_type(v), json_type_int);
	return json_object_get_int64(v);
}

static const char flat[] = "wall_s\t1.5\n"
			   "exit io\t10\nexit io_out\t4\nexit mmio\t7\nexit mmio_write\t5\n"
			   "exit shutdown\t0\nexit other\t1\n"
			   "counter virtio-blk0 reads\t3\ncounter virtio-blk0 read bytes\t1536\n"
			   "counter virtio-blk0 writes\t2\ncounter virtio-blk0 write bytes\t4096\n"
			   "counter virtio-blk0 flushes\t1\ncounter virtio-blk0 io errors\t1\n"
			   "counter virtio-blk0 invalid requests\t2\n"
			   "counter virtio-blk0 queue events\t9\n"
			   "counter virtio-blk0 updates\t1\ncounter virtio-blk0 update fails\t1\n"
			   "counter virtio-blk0 config fails\t0\n"
			   "counter virtio-blk1 reads\t5\ncounter virtio-blk1 read bytes\t512\n"
			   "counter virtio-net0 rx packets\t6\ncounter virtio-net0 rx bytes\t600\n"
			   "counter virtio-net0 rx dropped\t1\ncounter virtio-net0 rx errors\t2\n"
			   "counter virtio-net0 rx starved\t3\n"
			   "counter virtio-net0 tx packets\t4\ncounter virtio-net0 tx bytes\t400\n"
			   "counter virtio-net0 tx dropped\t1\ncounter virtio-net0 tx errors\t1\n"
			   "counter e1000-0 rx packets\t10\ncounter e1000-0 rx bytes\t1000\n";

/* Every mapped field, per device and summed; a disk without an API id
 * counts in "block" only. */
static void test_groups(void **state)
{
	(void)state;
	const struct fc_metrics_dev devs[] = {
	    {kind_group("block"), "virtio-blk0", "rootfs"},
	    {kind_group("block"), "virtio-blk1", NULL},
	    {kind_group("net"), "virtio-net0", "eth0"},
	    {kind_metrics("e1000-"), "e1000-0", "eth1"},
	};
	struct json_object *built = fc_metrics_object(flat, devs, 4);
	assert_non_null(built);
	/* What a reader gets: the text, parsed again. */
	struct json_object *o = json_tokener_parse(json_object_to_json_string_ext(
	    built, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(built);
	assert_non_null(o);
	struct json_object *ts;
	assert_true(json_object_object_get_ex(o, "utc_timestamp_ms", &ts));
	assert_true(json_object_get_int64(ts) > 1600000000000LL);
	struct json_object *wall;
	assert_true(json_object_object_get_ex(group(o, "skiff"), "wall_s", &wall));
	assert_true(json_object_get_double(wall) == 1.5);

	static const struct {
		const char *grp, *name;
		int64_t want;
	} want[] = {
	    {"block_rootfs", "read_bytes", 1536},
	    {"block_rootfs", "read_count", 3},
	    {"block_rootfs", "write_bytes", 4096},
	    {"block_rootfs", "write_count", 2},
	    {"block_rootfs", "flush_count", 1},
	    {"block_rootfs", "execute_fails", 1},
	    {"block_rootfs", "invalid_reqs_count", 2},
	    {"block_rootfs", "queue_event_count", 9},
	    {"block_rootfs", "update_count", 1},
	    {"block_rootfs", "update_fails", 1},
	    {"block_rootfs", "activate_fails", 0},
	    {"block_rootfs", "cfg_fails", 0},
	    {"block", "read_count", 8},
	    {"block", "read_bytes", 2048},
	    {"block", "write_bytes", 4096},
	    {"net_eth0", "rx_bytes_count", 600},
	    {"net_eth0", "rx_packets_count", 6},
	    {"net_eth0", "rx_fails", 3},
	    {"net_eth0", "tap_read_fails", 2},
	    {"net_eth0", "no_rx_avail_buffer", 3},
	    {"net_eth0", "tx_bytes_count", 400},
	    {"net_eth0", "tx_packets_count", 4},
	    {"net_eth0", "tx_fails", 1},
	    {"net_eth0", "tx_malformed_frames", 1},
	    {"net_eth1", "rx_packets_count", 10},
	    {"net", "rx_packets_count", 16},
	    {"net", "rx_bytes_count", 1600},
	    {"vcpu", "exit_io_in", 6},
	    {"vcpu", "exit_io_out", 4},
	    {"vcpu", "exit_mmio_read", 2},
	    {"vcpu", "exit_mmio_write", 5},
	    {"vcpu", "failures", 1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (field(o, want[i].grp, want[i].name) != want[i].want)
			fail_msg("%s.%s is %lld, not %lld", want[i].grp, want[i].name,
				 (long long)field(o, want[i].grp, want[i].name),
				 (long long)want[i].want);
	assert_false(json_object_object_get_ex(o, "block_", NULL));
	/* ts, skiff, 2+1 block, 2+1 net, entropy, vsock, balloon, vcpu */
	assert_int_equal(json_object_object_length(o), 11);
	json_object_put(o);
}

/* The VM's virtio-rng under Firecracker's "entropy" (no per-device
 * groups): a refused chain and an empty host source both fail an event. */
static void test_entropy_group(void **state)
{
	(void)state;
	static const char rng[] = "counter virtio-rng0 requests\t7\n"
				  "counter virtio-rng0 bytes\t448\n"
				  "counter virtio-rng0 bad requests\t2\n"
				  "counter virtio-rng0 host rng fails\t1\n"
				  "counter virtio-rng0 rate limiter throttled\t3\n"
				  "counter virtio-rng0 rate limiter events\t4\n";
	const struct fc_metrics_dev devs[] = {{kind_group("entropy"), "virtio-rng0", NULL}};
	struct json_object *o = fc_metrics_object(rng, devs, 1);
	assert_non_null(o);
	assert_int_equal(field(o, "entropy", "entropy_event_count"), 7);
	assert_int_equal(field(o, "entropy", "entropy_bytes"), 448);
	assert_int_equal(field(o, "entropy", "entropy_event_fails"), 3);
	assert_int_equal(field(o, "entropy", "host_rng_fails"), 1);
	assert_int_equal(field(o, "entropy", "entropy_rate_limiter_throttled"), 3);
	assert_int_equal(field(o, "entropy", "rate_limiter_event_count"), 4);
	assert_int_equal(field(o, "entropy", "activate_fails"), 0);
	json_object_put(o);
}

/* The VM's vsock under Firecracker's "vsock": its counters carry
 * Firecracker's names; a refusal is skiff's alone. */
static void test_vsock_group(void **state)
{
	(void)state;
	static const char vs[] = "counter virtio-vsock0 conns_added\t5\n"
				 "counter virtio-vsock0 conns_removed\t4\n"
				 "counter virtio-vsock0 conns_killed\t1\n"
				 "counter virtio-vsock0 rx_bytes_count\t700\n"
				 "counter virtio-vsock0 tx_packets_count\t9\n"
				 "counter virtio-vsock0 conn_event_fails\t2\n"
				 "counter virtio-vsock0 refused\t3\n";
	const struct fc_metrics_dev devs[] = {
	    {kind_metrics("virtio-vsock"), "virtio-vsock0", NULL}};
	struct json_object *o = fc_metrics_object(vs, devs, 1);
	assert_non_null(o);
	assert_int_equal(field(o, "vsock", "conns_added"), 5);
	assert_int_equal(field(o, "vsock", "conns_removed"), 4);
	assert_int_equal(field(o, "vsock", "conns_killed"), 1);
	assert_int_equal(field(o, "vsock", "rx_bytes_count"), 700);
	assert_int_equal(field(o, "vsock", "tx_packets_count"), 9);
	assert_int_equal(field(o, "vsock", "conn_event_fails"), 2);
	assert_int_equal(field(o, "vsock", "muxer_event_fails"), 0);
	assert_int_equal(json_object_object_length(group(o, "vsock")), 21);
	json_object_put(o);
}

/* The balloon under Firecracker's "balloon": queue runs, not pages; an
 * event fails on a bad chain or a refused discard. */
static void test_balloon_group(void **state)
{
	(void)state;
	static const char b[] = "counter virtio-balloon0 inflates\t3\n"
				"counter virtio-balloon0 inflated pages\t768\n"
				"counter virtio-balloon0 deflates\t2\n"
				"counter virtio-balloon0 stats updates\t6\n"
				"counter virtio-balloon0 stats update fails\t1\n"
				"counter virtio-balloon0 bad chains\t1\n"
				"counter virtio-balloon0 discard fails\t2\n"
				"counter virtio-balloon0 reports\t4\n"
				"counter virtio-balloon0 reported bytes\t65536\n";
	const struct fc_metrics_dev devs[] = {
	    {kind_metrics("virtio-balloon"), "virtio-balloon0", NULL}};
	struct json_object *o = fc_metrics_object(b, devs, 1);
	assert_non_null(o);
	assert_int_equal(field(o, "balloon", "inflate_count"), 3);
	assert_int_equal(field(o, "balloon", "deflate_count"), 2);
	assert_int_equal(field(o, "balloon", "stats_updates_count"), 6);
	assert_int_equal(field(o, "balloon", "stats_update_fails"), 1);
	assert_int_equal(field(o, "balloon", "event_fails"), 3);
	assert_int_equal(field(o, "balloon", "free_page_report_count"), 4);
	assert_int_equal(field(o, "balloon", "free_page_report_freed"), 65536);
	assert_int_equal(field(o, "balloon", "activate_fails"), 0);
	json_object_put(o);
}

/* The e1000 counts in "net" through its own table: its drops and refusals
 * are rx_fails and malformed frames; a rate limiter it has not stays 0
 * even where its owner's name says otherwise (virtio-net's table would
 * take it), and the aggregate sums both kinds. */
static void test_e1000_in_net(void **state)
{
	(void)state;
	static const char e[] = "counter e1000-0 rx packets\t10\ncounter e1000-0 rx dropped\t2\n"
				"counter e1000-0 rx errors\t1\ncounter e1000-0 tx dropped\t4\n"
				"counter e1000-0 tx errors\t3\ncounter e1000-0 rx starved\t5\n"
				"counter e1000-0 rx rate limiter throttled\t7\n"
				"counter virtio-net0 rx packets\t6\n"
				"counter virtio-net0 rx rate limiter throttled\t1\n";
	const struct fc_metrics_dev devs[] = {
	    {kind_metrics("virtio-net"), "virtio-net0", NULL},
	    {kind_metrics("e1000-"), "e1000-0", "eth1"},
	};
	struct json_object *o = fc_metrics_object(e, devs, 2);
	assert_non_null(o);
	assert_int_equal(field(o, "net_eth1", "rx_packets_count"), 10);
	assert_int_equal(field(o, "net_eth1", "rx_fails"), 3);
	assert_int_equal(field(o, "net_eth1", "tx_malformed_frames"), 4);
	assert_int_equal(field(o, "net_eth1", "tx_fails"), 3);
	assert_int_equal(field(o, "net_eth1", "no_rx_avail_buffer"), 5);
	assert_int_equal(field(o, "net_eth1", "rx_rate_limiter_throttled"), 0);
	assert_int_equal(field(o, "net", "rx_packets_count"), 16);
	assert_int_equal(field(o, "net", "rx_rate_limiter_throttled"), 1);
	json_object_put(o);
}

/* Rows whose groups share a name list the same fields in the same order:
 * one aggregate adds them up position by position. */
static void test_shared_groups_agree(void **state)
{
	(void)state;
	size_t shared = 0;
	for (size_t a = 0; a < dm_nr_kinds; a++)
		for (size_t b = a + 1; b < dm_nr_kinds; b++) {
			const struct dev_metrics *x = dm_kinds[a]->metrics,
						 *y = dm_kinds[b]->metrics;
			if (!x || !y || strcmp(x->group, y->group))
				continue;
			shared++;
			assert_int_equal(x->n, y->n);
			for (size_t i = 0; i < x->n; i++)
				assert_string_equal(x->fields[i].name, y->fields[i].name);
		}
	assert_true(shared >= 1); /* virtio-net and e1000 */
	for (size_t k = 0; k < dm_nr_kinds; k++)
		assert_true(!dm_kinds[k]->metrics ||
			    dm_kinds[k]->metrics->n <= DEV_METRICS_FIELDS_MAX);
}

static void blk_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	virtio_blk_counters(dev, emit, ctx);
}

static void nothing(void *dev)
{
	(void)dev;
}

/* An e1000's counters, and one no e1000 has (a rate limiter's). */
static void e1000_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	(void)dev;
	emit(ctx, "e1000-0", "rx dropped", 2);
	emit(ctx, "e1000-0", "rx rate limiter throttled", 7);
}

static const struct dev_ops blk_ops = {
    .stop = nothing, .destroy = nothing, .counters = blk_counters};
static const struct dev_ops e1000_ops = {
    .stop = nothing, .destroy = nothing, .counters = e1000_counters};
static const struct dm_kind net_kind = {.option = "net", .prefix = "e1000-", .transport = DM_PCI};
static const struct dev_ops quiet_ops = {.stop = nothing, .destroy = nothing};
static const struct dm_kind disk_kind = {
    .option = "disk", .prefix = "virtio-blk", .transport = DM_PCI};

/* The real path: the drive "data" is the second --disk (the root one is
 * first); its device's counters and the vCPU's exits reach the line
 * under Firecracker's names. */
static void test_flush_line(void **state)
{
	(void)state;
	static struct vmm v;
	static struct api_fc f;
	static struct vcpu cpu;
	char dir[64], a[96], b[96], err[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/skiff-metrics-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.img", dir);
	snprintf(b, sizeof(b), "%s/b.img", dir);
	for (int i = 0; i < 2; i++) {
		int fd = open(i ? b : a, O_RDWR | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 4096), 0);
		close(fd);
	}
	struct virtio_dev *vdev = virtio_blk_create(a, 1, err, sizeof(err));
	assert_non_null(vdev);
	assert_int_equal(virtio_blk_replace(vdev, b, err, sizeof(err)), 0);
	assert_int_equal(virtio_blk_replace(vdev, dir, err, sizeof(err)), -1); /* a directory */
	v.dm.devs[0] =
	    (struct dm_entry){.kind = &disk_kind, .name = "virtio-blk0", .d.ops = &quiet_ops};
	v.dm.devs[1] = (struct dm_entry){.kind = &disk_kind,
					 .name = "virtio-blk1",
					 .d = {.dev = vdev, .ops = &blk_ops, .vdev = vdev}};
	v.dm.devs[2] = (struct dm_entry){.kind = &net_kind, .name = "e1000-0", .d.ops = &e1000_ops};
	v.dm.nr = 3;
	cpu.fd = -1;
	counter_add(&cpu.exits[VCPU_STAT_IO], 10);
	counter_add(&cpu.exits[VCPU_STAT_IO_OUT], 4);
	counter_add(&cpu.exits[VCPU_STAT_MMIO], 3);
	counter_add(&cpu.exits[VCPU_STAT_MMIO_WRITE], 3);
	counter_add(&cpu.exits[VCPU_STAT_SHUTDOWN], 1);
	v.vm.nr_cpus = 1;
	v.vm.vcpus[0] = &cpu;

	struct vmm_config base = {0};
	api_fc_init(&f, &v, &base);
	const struct dm_kind *drives = fc_kind_by_section("drives");
	static const char *const bodies[] = {
	    "{\"drive_id\": \"data\", \"path_on_host\": \"/d\", \"is_root_device\": false}",
	    "{\"drive_id\": \"root\", \"path_on_host\": \"/r\", \"is_root_device\": true}",
	};
	for (int i = 0; i < 2; i++) {
		static struct dev_api_res r;
		assert_int_equal(
		    fc_res_fill_text(drives, bodies[i], strlen(bodies[i]), &r, err, sizeof(err)),
		    0);
		assert_int_equal(
		    fc_coll_put(drives, fc_vmcfg_coll(&f.cfg, drives), &r, err, sizeof(err)), 0);
	}
	f.coll_index[fc_coll_slot(drives)][0] = 1; /* data: after the root drive */
	f.coll_index[fc_coll_slot(drives)][1] = 0;
	f.state = FC_RUNNING;
	struct fc_metrics m = {0};
	snprintf(m.metrics_path, sizeof(m.metrics_path), "%s/metrics", dir);
	assert_int_equal(api_fc_metrics_open(&f, &m, err, sizeof(err)), 0);
	api_fc_flush_metrics(&f);
	api_fc_fini(&f);

	char line[65536];
	FILE *in = fopen(m.metrics_path, "r");
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	fclose(in);
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	assert_int_equal(field(o, "block_data", "update_count"), 1);
	assert_int_equal(field(o, "block_data", "update_fails"), 1);
	assert_int_equal(field(o, "block_root", "update_count"), 0);
	assert_int_equal(field(o, "block", "update_count"), 1);
	assert_int_equal(field(o, "block", "read_count"), 0);
	assert_int_equal(field(o, "net", "rx_bytes_count"), 0);
	/* The --net card is an e1000 by its name: its row's table counts it. */
	assert_int_equal(field(o, "net", "rx_fails"), 2);
	assert_int_equal(field(o, "net", "rx_rate_limiter_throttled"), 0);
	assert_int_equal(field(o, "vcpu", "exit_io_in"), 6);
	assert_int_equal(field(o, "vcpu", "exit_io_out"), 4);
	assert_int_equal(field(o, "vcpu", "exit_mmio_read"), 0);
	assert_int_equal(field(o, "vcpu", "exit_mmio_write"), 3);
	assert_int_equal(field(o, "vcpu", "failures"), 1);
	struct json_object *c;
	assert_true(
	    json_object_object_get_ex(group(o, "skiff"), "counter virtio-blk1 updates", &c));
	assert_int_equal(json_object_get_int(c), 1);
	json_object_put(o);

	virtio_blk_destroy(vdev);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_groups),
	    cmocka_unit_test(test_flush_line),
	    cmocka_unit_test(test_entropy_group),
	    cmocka_unit_test(test_vsock_group),
	    cmocka_unit_test(test_balloon_group),
	    cmocka_unit_test(test_e1000_in_net),
	    cmocka_unit_test(test_shared_groups_agree),
	};
	return cmocka_run_group_tests_name("api_metrics", tests, NULL, NULL);
}
