// SPDX-License-Identifier: Apache-2.0
/* The device kinds' API resources (devices/dev_api.h, api/api_kind.c):
 * every row's table agrees with its option table, and PUT /vsock, the
 * config file's "vsock" and GET /vm/config's go through it with
 * Firecracker's words (issue 33.0 and 33.1). No VM: a PUT is checked
 * through --vsock's table, which never binds the socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_fc.h"
#include "api/api_model.h"
#include "api/api_req.h"

static int put(const char *url, const char *body, struct api_req *req, struct api_reply *rep)
{
	return api_route(API_PUT, "PUT", url, body, strlen(body), req, rep);
}

static void expect_fault(struct api_reply *rep, int status, const char *words)
{
	assert_int_equal(rep->status, status);
	assert_non_null(rep->body);
	if (!strstr(rep->body, words))
		fail_msg("'%s' lacks '%s'", rep->body, words);
	free(rep->body);
	rep->body = NULL;
}

static struct fc_res_cfg *vsock_of(struct fc_vmcfg *c)
{
	struct fc_res_cfg *r = fc_vmcfg_res(c, fc_kind_by_section("vsock"));
	assert_non_null(r);
	return r->has ? r : NULL;
}

/* The configured vsock as --vsock takes it: "uds=PATH (SPEC)". */
static void vsock_arg(struct fc_vmcfg *c, char *out, size_t len)
{
	struct fc_res_cfg *r = vsock_of(c);
	struct devmgr_arg a;
	char spec[FC_RES_SPEC_MAX], err[200];
	assert_non_null(r);
	assert_int_equal(fc_res_arg(fc_kind_by_section("vsock"), &r->r, spec, sizeof(spec), &a, err,
				    sizeof(err)),
			 0);
	assert_string_equal(a.option, "vsock");
	snprintf(out, len, "%s=%s (%s)", a.key ? a.key : "", a.value ? a.value : "", a.spec);
}

/* Each row's resource maps onto keys its own option table has: a field
 * the spec cannot take would fail only when a VM is built. Routes and
 * sections are unique, and every table fits the resource. */
static void test_rows_agree(void **state)
{
	(void)state;
	size_t with_api = 0;
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct dm_kind *k = dm_kinds[i];
		if (!k->api)
			continue;
		with_api++;
		assert_true(k->api->nr_fields <= DEV_API_FIELDS_MAX);
		assert_ptr_equal(fc_kind_by_route(k->api->route), k);
		assert_ptr_equal(fc_kind_by_section(k->api->section), k);
		for (size_t j = 0; j < k->api->nr_fields; j++) {
			const struct dev_api_field *f = &k->api->fields[j];
			/* a field without a key is no spec key (an id, a drive's
			 * partuuid: the API's own) */
			if ((f->type != DEV_API_STR && f->type != DEV_API_UINT &&
			     f->type != DEV_API_BOOL && f->type != DEV_API_FLAG &&
			     f->type != DEV_API_ENUM) ||
			    !f->key)
				continue;
			bool found = false;
			for (size_t o = 0; o < k->spec->n; o++)
				found |= !strcmp(k->spec->opts[o].name, f->key);
			if (!found)
				fail_msg("%s: %s maps onto %s=, which --%s has not", k->api->route,
					 f->name, f->key, k->option);
		}
	}
	assert_true(with_api >= 5 && with_api <= FC_RES_MAX);
	assert_non_null(fc_kind_by_route("/vsock"));
	/* Firecracker's drives and interfaces are their kinds' too (issue
	 * 33.0: src/api names no kind). */
	assert_non_null(fc_kind_by_route("/drives"));
	assert_non_null(fc_kind_by_route("/network-interfaces"));
}

/* PUT /vsock: Firecracker's body, its strict parsing, skiff's checks of
 * the CID and the path before any VM; a second PUT replaces the first;
 * after the start it is refused. */
static void test_vsock_put(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char arg[300], body[400];
	api_fc_init(&f, &v, &base);
	assert_int_equal(put("/vsock", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Empty PUT request.");
	assert_int_equal(put("/vsock", "{\"guest_cid\":3}", &req, &rep), 1);
	expect_fault(&rep, 400,
		     "An error occurred when deserializing the json body of a request: missing "
		     "field `uds_path`");
	assert_int_equal(put("/vsock", "{\"guest_cid\":\"3\",\"uds_path\":\"/v\"}", &req, &rep), 1);
	expect_fault(&rep, 400, "invalid type: string, expected u32");
	assert_int_equal(
	    put("/vsock", "{\"guest_cid\":4294967296,\"uds_path\":\"/v\"}", &req, &rep), 1);
	expect_fault(&rep, 400, "invalid value: integer `4294967296`, expected u32");
	assert_int_equal(
	    put("/vsock", "{\"guest_cid\":3,\"uds_path\":\"/v\",\"cid\":3}", &req, &rep), 1);
	expect_fault(&rep, 400, "unknown field `cid`, expected one of `guest_cid`, `uds_path`");
	/* Parsed, then refused by --vsock's own table: nothing configured. */
	static const char *const refused[][2] = {
	    {"{\"guest_cid\":2,\"uds_path\":\"/v\"}", "invalid cid=2"},
	    {"{\"guest_cid\":0,\"uds_path\":\"/v\"}", "invalid cid=0"},
	    {"{\"guest_cid\":3,\"uds_path\":\"\"}", "empty uds path"},
	    /* VMADDR_CID_ANY: a u32, but no guest's CID (virtio 1.2 5.10.4) */
	    {"{\"guest_cid\":4294967295,\"uds_path\":\"/v\"}", "invalid cid=4294967295"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(put("/vsock", refused[i][0], &req, &rep), 0);
		assert_int_equal(req.op, OP_KIND_PUT);
		api_fc_handle(&f, &req, &rep);
		expect_fault(&rep, 400, "Cannot create backend for vsock device: ");
		assert_int_equal(put("/vsock", refused[i][0], &req, &rep), 0);
		api_fc_handle(&f, &req, &rep);
		expect_fault(&rep, 400, refused[i][1]);
		assert_null(vsock_of(&f.cfg));
	}
	/* sun_path is 108 bytes, and "_<port>" goes after the path. */
	snprintf(body, sizeof(body), "{\"guest_cid\":3,\"uds_path\":\"/%0*d\"}", 96, 0);
	assert_int_equal(put("/vsock", body, &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "uds path longer than 96 bytes");
	assert_null(vsock_of(&f.cfg));
	/* A comma is part of the path: it goes apart, whole. */
	assert_int_equal(put("/vsock",
			     "{\"vsock_id\":\"v\",\"guest_cid\":3,\"uds_path\":\"/a,cid=9\"}", &req,
			     &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	vsock_arg(&f.cfg, arg, sizeof(arg));
	assert_string_equal(arg, "uds=/a,cid=9 (cid=3)");
	assert_int_equal(
	    put("/vsock", "{\"guest_cid\":4294967294,\"uds_path\":\"/w\"}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	vsock_arg(&f.cfg, arg, sizeof(arg));
	assert_string_equal(arg, "uds=/w (cid=4294967294)");
	f.state = FC_RUNNING;
	assert_int_equal(put("/vsock", "{\"guest_cid\":5,\"uds_path\":\"/x\"}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400,
		     "The requested operation is not supported after starting the microVM.");
	vsock_arg(&f.cfg, arg, sizeof(arg));
	assert_string_equal(arg, "uds=/w (cid=4294967294)");
	api_fc_fini(&f);
}

/* GET /vm/config's vsock (null until configured) is a config file's: read
 * back, it gives the same --vsock. */
static void test_vsock_vm_config(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct fc_vmcfg c;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char err[400], a1[300], a2[300];
	api_fc_init(&f, &v, &base);
	assert_int_equal(api_route(API_GET, "GET", "/vm/config", "", 0, &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_non_null(strstr(rep.body, "\"vsock\":null"));
	free(rep.body);
	assert_int_equal(
	    put("/vsock", "{\"guest_cid\":7,\"uds_path\":\"/run/v.sock\"}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	f.cfg.has_boot = true;
	snprintf(f.cfg.boot.kernel_image_path, sizeof(f.cfg.boot.kernel_image_path), "/k");
	assert_int_equal(api_route(API_GET, "GET", "/vm/config", "", 0, &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 200);
	/* vsock_id not given: left out, as Firecracker's Option. */
	if (!strstr(rep.body, "\"vsock\":{\"guest_cid\":7,\"uds_path\":\"/run/v.sock\"}"))
		fail_msg("GET /vm/config: %s", rep.body);
	if (fc_vmcfg_parse_file(&c, rep.body, rep.len, err, sizeof(err)))
		fail_msg("%s: %s", rep.body, err);
	free(rep.body);
	vsock_arg(&f.cfg, a1, sizeof(a1));
	vsock_arg(&c, a2, sizeof(a2));
	assert_string_equal(a1, a2);
	assert_string_equal(a2, "uds=/run/v.sock (cid=7)");
	api_fc_fini(&f);
}

/* --config-file's "vsock": the same table and checks, "vsock: " first. */
static void test_vsock_config_file(void **state)
{
	(void)state;
	static struct fc_vmcfg c;
	char err[400], arg[300];
	static const char *const head =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],";
	static const char *const cases[][2] = {
	    {"\"vsock\":{\"guest_cid\":3,\"uds_path\":\"/v\"}}", NULL},
	    {"\"vsock\":null}", NULL},
	    {"\"vsock\":{\"uds_path\":\"/v\"}}", "vsock: missing field `guest_cid`"},
	    {"\"vsock\":{\"guest_cid\":3,\"uds_path\":\"/v\",\"x\":1}}",
	     "vsock: unknown field `x`, expected one of `guest_cid`, `uds_path`, `vsock_id`"},
	    {"\"vsock\":{\"guest_cid\":1,\"uds_path\":\"/v\"}}",
	     "vsock: Cannot create backend for vsock device: --vsock uds=/v (cid=1): invalid "
	     "cid=1"},
	    {"\"vsock\":[]}", "vsock: invalid type: sequence, expected struct Vsock"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char file[300];
		snprintf(file, sizeof(file), "%s%s", head, cases[i][0]);
		int r = fc_vmcfg_parse_file(&c, file, strlen(file), err, sizeof(err));
		if (!cases[i][1]) {
			if (r)
				fail_msg("%s: %s", file, err);
			continue;
		}
		assert_int_equal(r, -1);
		if (strncmp(err, cases[i][1], strlen(cases[i][1])))
			fail_msg("%s: '%s', not '%s'", file, err, cases[i][1]);
	}
	char file[300];
	snprintf(file, sizeof(file), "%s%s", head, cases[0][0]);
	assert_int_equal(fc_vmcfg_parse_file(&c, file, strlen(file), err, sizeof(err)), 0);
	vsock_arg(&c, arg, sizeof(arg));
	assert_string_equal(arg, "uds=/v (cid=3)");
}

/* After a snapshot load the API knows the restored devices' resources:
 * what a PUT /balloon made comes back from the spec it became (GET and
 * PATCH /balloon then find it), and a kind with no device stays unset. */
static void test_res_from_devices(void **state)
{
	(void)state;
	const struct dm_kind *k = fc_kind_by_section("balloon");
	assert_non_null(k);
	static struct fc_vmcfg put, back; /* 754 KB each: not on the stack */
	memset(&put, 0, sizeof(put));
	memset(&back, 0, sizeof(back));
	struct fc_res_cfg *r = fc_vmcfg_res(&put, k);
	char err[200], spec[FC_RES_SPEC_MAX];
	const char *body = "{\"amount_mib\": 32, \"deflate_on_oom\": true, "
			   "\"stats_polling_interval_s\": 5}";
	assert_int_equal(fc_res_fill_text(k, body, strlen(body), &r->r, err, sizeof(err)), 0);
	struct devmgr_arg a;
	assert_int_equal(fc_res_arg(k, &r->r, spec, sizeof(spec), &a, err, sizeof(err)), 0);
	static struct devmgr dm;
	memset(&dm, 0, sizeof(dm));
	dm.nr = 1;
	dm.devs[0].kind = k;
	dm.devs[0].arg_spec = (char *)a.spec;
	fc_vmcfg_from_devices(&back, &dm);
	struct fc_res_cfg *b = fc_vmcfg_res(&back, k);
	assert_true(b->has);
	assert_int_equal(*fc_res_int(k, &b->r, "amount_mib"), 32);
	assert_int_equal(*fc_res_int(k, &b->r, "stats_polling_interval_s"), 5);
	assert_false(fc_vmcfg_res(&back, fc_kind_by_section("vsock"))->has);
	struct json_object *j = fc_res_json(k, &b->r);
	const char *txt = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	assert_non_null(strstr(txt, "\"deflate_on_oom\":true"));
	json_object_put(j);
}

/* The balloon's GET, PATCH and statistics come from its row: the routes
 * find the kind and the PATCH's own table, its body becomes the spec the
 * running device takes and then the configured values; the statistics
 * are the device's counters under the kind's names. */
static void test_row_endpoints(void **state)
{
	(void)state;
	static struct api_req req;
	struct api_reply rep = {0};
	const struct dm_kind *k = fc_kind_by_section("balloon");
	char spec[FC_RES_SPEC_MAX], err[200];
	const char *body = "{\"stats_polling_interval_s\": 2}";
	assert_int_equal(
	    api_route(API_PATCH, "PATCH", "/balloon/statistics", body, strlen(body), &req, &rep),
	    0);
	assert_int_equal(req.op, OP_KIND_PATCH);
	assert_ptr_equal(req.kind, k);
	const struct dev_api_patch *p = &k->api->patch[req.patch];
	assert_int_equal(fc_patch_spec(p, &req.u.res, spec, sizeof(spec), err, sizeof(err)), 0);
	assert_string_equal(spec, "stats=2");
	struct dev_api_res cur;
	const char *put_body = "{\"amount_mib\": 32, \"deflate_on_oom\": true}";
	assert_int_equal(fc_res_fill_text(k, put_body, strlen(put_body), &cur, err, sizeof(err)),
			 0);
	fc_patch_apply(k, &cur, p, &req.u.res);
	assert_int_equal(*fc_res_int(k, &cur, "stats_polling_interval_s"), 2);
	assert_int_equal(*fc_res_int(k, &cur, "amount_mib"), 32);
	/* The other PATCH is the target's, with its own table. */
	body = "{\"stats_polling_interval_s\": 2}";
	assert_int_equal(api_route(API_PATCH, "PATCH", "/balloon", body, strlen(body), &req, &rep),
			 1);
	expect_fault(&rep, 400, "unknown field `stats_polling_interval_s`, expected `amount_mib`");
	assert_int_equal(api_route(API_GET, "GET", "/balloon/statistics", "", 0, &req, &rep), 0);
	assert_int_equal(req.op, OP_KIND_STATS);
	assert_int_equal(api_route(API_GET, "GET", "/vsock", "", 0, &req, &rep), 1);
	expect_fault(&rep, 400, "Invalid request method and/or path");
}

static void handle_ok(struct api_fc *f, const char *m, const char *url, const char *body)
{
	static struct api_req req;
	struct api_reply rep = {0};
	enum api_method e = !strcmp(m, "PUT") ? API_PUT : API_PATCH;
	assert_int_equal(api_route(e, m, url, body, strlen(body), &req, &rep), 0);
	api_fc_handle(f, &req, &rep);
	if (rep.status != 204)
		fail_msg("%s %s: %d %s", m, url, rep.status, rep.body ? rep.body : "");
}

/* A collection at InstanceStart: the boot entry (the root drive) is its
 * kind's first device and gives the command line its words; each entry's
 * device index and id follow (metrics, PATCH). The start itself fails
 * here (no kernel, no KVM), after the devices were laid out. */
static void test_coll_start(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct vmm v;
	struct vmm_config base = {0};
	char dir[64], img[96], body[400], err[400];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/skiff-coll-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/img", dir);
	FILE *fp = fopen(img, "w");
	assert_non_null(fp);
	fclose(fp);
	api_fc_init(&f, &v, &base);
	snprintf(body, sizeof(body), "{\"kernel_image_path\": \"%s\"}", img);
	handle_ok(&f, "PUT", "/boot-source", body);
	snprintf(body, sizeof(body),
		 "{\"drive_id\": \"data\", \"path_on_host\": \"%s\", \"is_root_device\": false}",
		 img);
	handle_ok(&f, "PUT", "/drives/data", body);
	snprintf(body, sizeof(body),
		 "{\"drive_id\": \"root\", \"path_on_host\": \"%s\", \"is_root_device\": true, "
		 "\"is_read_only\": true, \"partuuid\": \"0eaa-01\"}",
		 img);
	handle_ok(&f, "PUT", "/drives/root", body);
	handle_ok(&f, "PUT", "/network-interfaces/eth0",
		  "{\"iface_id\": \"eth0\", \"host_dev_name\": \"skiff-no-tap\"}");
	assert_int_equal(api_fc_start(&f, NULL, err, sizeof(err)), -1);
	if (!strstr(f.cmdline, " root=PARTUUID=0eaa-01 ro"))
		fail_msg("cmdline: %s", f.cmdline);
	const struct dm_kind *drives = fc_kind_by_section("drives");
	assert_int_equal(f.coll_index[fc_coll_slot(drives)][0], 1); /* data: after root */
	assert_int_equal(f.coll_index[fc_coll_slot(drives)][1], 0);
	assert_string_equal(api_fc_dev_id(&f, "disk", 0), "root");
	assert_string_equal(api_fc_dev_id(&f, "disk", 1), "data");
	assert_string_equal(api_fc_dev_id(&f, "net", 0), "eth0");
	assert_null(api_fc_dev_id(&f, "net", 1));
	api_fc_fini(&f);
	unlink(img);
	rmdir(dir);
}

/* skiff's /skiff/vfio/ID from VFIO's row: taken at PUT without looking at
 * the host (checked when the VM is built), up to four, listed in GET
 * /vm/config only when there is one, and read back from the config file. */
static void test_vfio_coll(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct vmm v;
	static struct api_req req;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char url[64], body[160], err[300];
	api_fc_init(&f, &v, &base);
	struct json_object *o = fc_vmcfg_json(&f.cfg);
	assert_false(json_object_object_get_ex(o, "skiff-vfio", NULL));
	json_object_put(o);
	for (int i = 0; i < 4; i++) {
		snprintf(url, sizeof(url), "/skiff/vfio/g%d", i);
		snprintf(body, sizeof(body),
			 "{\"vfio_id\": \"g%d\", \"skiff_options\": \"0000:00:0%d.0,mmap=off\"}", i,
			 i + 4);
		handle_ok(&f, "PUT", url, body);
	}
	const char *fifth = "{\"vfio_id\": \"g9\", \"skiff_options\": \"0000:00:09.0\"}";
	assert_int_equal(put("/skiff/vfio/g9", fifth, &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "skiff takes at most 4 VFIO devices");
	assert_int_equal(put("/skiff/vfio/g9", "{\"vfio_id\": \"g9\"}", &req, &rep), 1);
	expect_fault(&rep, 400, "missing field `skiff_options`");
	o = fc_vmcfg_json(&f.cfg);
	const char *j = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (!strstr(j, "\"skiff-vfio\":[{\"vfio_id\":\"g0\",\"skiff_options\":"
		       "\"0000:00:04.0,mmap=off\"},"))
		fail_msg("GET /vm/config: %s", j);
	json_object_put(o);
	api_fc_fini(&f);
	static struct fc_vmcfg c;
	const char *file =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],"
	    "\"skiff-vfio\":[{\"vfio_id\":\"a\",\"skiff_options\":\"0000:00:05.0\"}]}";
	assert_int_equal(fc_vmcfg_parse_file(&c, file, strlen(file), err, sizeof(err)), 0);
	assert_int_equal(fc_vmcfg_coll(&c, fc_kind_by_section("skiff-vfio"))->n, 1);
}

struct stat_seen {
	char names[8][32];
	uint64_t v[8];
	int n;
};

static void stat_put(void *ctx, const char *name, uint64_t value)
{
	struct stat_seen *s = ctx;
	assert_true(s->n < 8);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->v[s->n++] = value;
}

static void test_balloon_stats_map(void **state)
{
	(void)state;
	dev_api_stat_fn map = fc_kind_by_section("balloon")->api->stats.map;
	struct stat_seen s = {0};
	map("actual pages", 512, stat_put, &s);
	map("stat swap_in", 7, stat_put, &s);
	map("inflated pages", 9, stat_put, &s); /* not a statistic */
	assert_int_equal(s.n, 3);
	assert_string_equal(s.names[0], "actual_pages");
	assert_int_equal(s.v[0], 512);
	assert_string_equal(s.names[1], "actual_mib");
	assert_int_equal(s.v[1], 2);
	assert_string_equal(s.names[2], "swap_in");
	assert_int_equal(s.v[2], 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_agree),	      cmocka_unit_test(test_vsock_put),
	    cmocka_unit_test(test_vsock_vm_config),   cmocka_unit_test(test_vsock_config_file),
	    cmocka_unit_test(test_res_from_devices),  cmocka_unit_test(test_row_endpoints),
	    cmocka_unit_test(test_balloon_stats_map), cmocka_unit_test(test_coll_start),
	    cmocka_unit_test(test_vfio_coll),
	};
	return cmocka_run_group_tests_name("api_kinds", tests, NULL, NULL);
}
