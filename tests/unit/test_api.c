// SPDX-License-Identifier: Apache-2.0
/* The API layer without a VM: HTTP framing and its limits, strict JSON,
 * the route table, the controller's refusals after start, and the
 * controller channel's close (what lets skiff stop while a request
 * waits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api_ctl.h"
#include "api/api_fc.h"
#include "api/api_http.h"
#include "api/api_json.h"
#include "api/api_model.h"
#include "api/api_req.h"
#include "api/api_server.h"
#include "core/log.h"

static enum api_feed feed(struct api_conn *c, const char *s)
{
	size_t n = strlen(s);
	assert_true(c->in_len + n <= sizeof(c->in));
	memcpy(c->in + c->in_len, s, n);
	c->in_len += n;
	return api_conn_feed(c);
}

/* A request in pieces, then two pipelined: each whole, in order. */
static void test_http_framing(void **state)
{
	(void)state;
	struct api_conn c;
	assert_int_equal(api_conn_init(&c), 0);
	assert_int_equal(feed(&c, "PUT /actions HTTP/1.1\r\nContent-Le"), API_FEED_MORE);
	assert_int_equal(feed(&c, "ngth: 4\r\n\r\n{}"), API_FEED_MORE);
	assert_int_equal(feed(&c, "  "), API_FEED_REQUEST);
	assert_int_equal(api_conn_method(&c), API_PUT);
	assert_string_equal(c.url, "/actions");
	assert_string_equal(c.body, "{}  ");
	api_conn_next(&c);
	assert_int_equal(feed(&c, "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"),
			 API_FEED_REQUEST);
	assert_string_equal(c.url, "/a");
	assert_int_equal(c.body_len, 0);
	api_conn_next(&c);
	assert_int_equal(api_conn_feed(&c), API_FEED_REQUEST);
	assert_string_equal(c.url, "/b");
	assert_true(api_conn_keep_alive(&c));
	api_conn_free(&c);
}

/* Over the limit by declaration or by chunks, or not HTTP: refused. */
static void test_http_limits(void **state)
{
	(void)state;
	struct api_conn c;
	assert_int_equal(api_conn_init(&c), 0);
	assert_int_equal(feed(&c, "PUT / HTTP/1.1\r\nContent-Length: 51201\r\n\r\n"),
			 API_FEED_TOO_LARGE);
	api_conn_free(&c);
	assert_int_equal(api_conn_init(&c), 0);
	assert_int_equal(feed(&c, "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
			 API_FEED_MORE);
	enum api_feed f = API_FEED_MORE;
	char chunk[1100];
	memset(chunk, 'x', sizeof(chunk));
	memcpy(chunk, "400\r\n", 5);
	memcpy(chunk + 5 + 0x400, "\r\n", 3);
	for (int i = 0; i < 60 && f == API_FEED_MORE; i++)
		f = feed(&c, chunk);
	assert_int_equal(f, API_FEED_TOO_LARGE);
	api_conn_free(&c);
	assert_int_equal(api_conn_init(&c), 0);
	assert_int_equal(feed(&c, "\x16\x03\x01 hello\r\n\r\n"), API_FEED_BAD);
	api_conn_free(&c);
	char out[256];
	size_t n = api_http_response(out, sizeof(out), 204, NULL, NULL, 0, true, "");
	assert_true(n > 0);
	assert_memory_equal(out, "HTTP/1.1 204 No Content\r\n", 25);
	assert_int_equal(api_http_response(out, 8, 200, "application/json", "{}", 2, true, ""), 0);
}

static int fill(const struct api_object *o, const char *text, void *target, char *err)
{
	return api_json_fill_text(o, text, strlen(text), target, err, 300);
}

/* A collection's entry (drives, network-interfaces: the kinds' rows) from
 * JSON, and its field by name. */
static int fill_entry(const char *section, const char *text, struct dev_api_res *r, char *err)
{
	return fc_res_fill_text(fc_kind_by_section(section), text, strlen(text), r, err, 300);
}

static struct dev_api_val *field_of(const char *section, struct dev_api_res *r, const char *name)
{
	const struct dev_api *a = fc_kind_by_section(section)->api;
	for (size_t i = 0; i < a->nr_fields; i++)
		if (!strcmp(a->fields[i].name, name))
			return &r->v[i];
	fail_msg("%s has no field %s", section, name);
	return NULL;
}

/* An entry from JSON into the configuration, as PUT and the config file
 * put it: 0, or -1 with why in err. */
static int put_entry(struct fc_vmcfg *c, const char *section, const char *text, char *err)
{
	static struct dev_api_res r;
	const struct dm_kind *k = fc_kind_by_section(section);
	assert_int_equal(fill_entry(section, text, &r, err), 0);
	return fc_coll_put(k, fc_vmcfg_coll(c, k), &r, err, 300);
}

static struct fc_coll *coll_of(struct fc_vmcfg *c, const char *section)
{
	struct fc_coll *s = fc_vmcfg_coll(c, fc_kind_by_section(section));
	assert_non_null(s);
	return s;
}

static void test_json_strict(void **state)
{
	(void)state;
	char err[300];
	struct fc_machine m;
	fc_machine_defaults(&m);
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":2,\"mem_size_mib\":512}", &m, err),
			 0);
	assert_int_equal(m.vcpu_count, 2);
	assert_int_equal(m.mem_size_mib, 512);
	assert_int_equal(m.seen, 3);
	assert_int_equal(
	    fill(&fc_machine_obj, "{\"vcpu_count\":2,\"mem_size_mib\":1,\"x\":1}", &m, err), -1);
	assert_non_null(strstr(err, "unknown field `x`"));
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":true,\"mem_size_mib\":1}", &m, err),
			 -1);
	assert_string_equal(err, "invalid type: boolean, expected u8");
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":256,\"mem_size_mib\":1}", &m, err),
			 -1);
	assert_non_null(strstr(err, "invalid value: integer `256`"));
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":1}", &m, err), -1);
	assert_string_equal(err, "missing field `mem_size_mib` at line 1 column 16");
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":1,\"mem_size_mib\":1} x", &m, err),
			 -1);
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":1,", &m, err), -1);
	assert_int_equal(fill(&fc_machine_obj, "[]", &m, err), -1);
	struct fc_boot b = {0};
	assert_int_equal(
	    fill(&fc_boot_obj, "{\"kernel_image_path\":\"k\",\"initrd_path\":null}", &b, err), 0);
	assert_string_equal(b.initrd_path, "");
	char longpath[FC_PATH_MAX + 40];
	snprintf(longpath, sizeof(longpath), "{\"kernel_image_path\":\"%0*d\"}", FC_PATH_MAX, 0);
	assert_int_equal(fill(&fc_boot_obj, longpath, &b, err), -1);
}

/* Issue 32: what json-c lets through and serde refuses is refused, with
 * the place; numbers are quoted as sent. */
static void test_json_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text, *words;
	} bad[] = {
	    {"{\"vcpu_count\":1,\"mem_size_mib\":2,\"vcpu_count\":3}",
	     "duplicate field `vcpu_count` at line 1 column 45"},
	    {"{\"vcpu_count\":1,\"mem_size_mib\":2,\"vcpu\\u005fcount\":3}",
	     "duplicate field `vcpu_count`"},
	    {"{\"kernel_image_path\":\"/a\\u0000b\"}", "string contains NUL (\\u0000)"},
	    {"{\"kernel_image_path\":\"/a\\ud800\"}", "lone leading surrogate"},
	    {"{\"kernel_image_path\":\"/a\\ud800\\u0041\"}", "lone leading surrogate"},
	    {"{\"kernel_image_path\":\"/a\\udc00\"}", "lone trailing surrogate"},
	    {"{\"kernel_image_path\":\"/a\xff\"}",
	     "invalid unicode code point at line 1 column 25"},
	    {"{\"kernel_image_path\":\"/a\xc0\xaf\"}", "invalid unicode code point"},
	    {"{\"kernel_image_path\":\"/a\xed\xa0\x80\"}", "invalid unicode code point"},
	    {"{\"kernel_image_path\":\"/k\",\n \"boot_args\":\"\xf4\x90\x80\x80\"}",
	     "invalid unicode code point at line 2 column 15"},
	};
	char err[300];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fc_boot b = {0};
		struct fc_machine m;
		fc_machine_defaults(&m);
		bool boot = strstr(bad[i].text, "kernel_image_path") != NULL;
		assert_int_equal(fill(boot ? &fc_boot_obj : &fc_machine_obj, bad[i].text,
				      boot ? (void *)&b : (void *)&m, err),
				 -1);
		if (!strstr(err, bad[i].words))
			fail_msg("%zu: '%s' lacks '%s'", i, err, bad[i].words);
	}
	/* The same keys in different objects, and valid escapes, are fine. */
	static struct dev_api_res d;
	assert_int_equal(
	    fill_entry("drives",
		       "{\"drive_id\":\"x\",\"is_root_device\":false,\"path_on_host\":"
		       "\"/\\u00e9\\ud83d\\ude00\xc3\xa9\",\"rate_limiter\":{\"bandwidth\":"
		       "{\"size\":1,\"refill_time\":1},\"ops\":{\"size\":1,\"refill_time\":1}}}",
		       &d, err),
	    0);
	assert_string_equal(field_of("drives", &d, "path_on_host")->s,
			    "/\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9");
	/* A nested object's missing field: where that object ends. */
	assert_int_equal(
	    fill_entry("drives",
		       "{\"drive_id\":\"x\",\"is_root_device\":false,\n\"rate_limiter\":"
		       "{\"ops\":{\"size\":1}}}",
		       &d, err),
	    -1);
	assert_string_equal(err, "missing field `refill_time` at line 2 column 32");
	struct fc_machine m;
	fc_machine_defaults(&m);
	assert_int_equal(fill(&fc_machine_obj,
			      "{\"vcpu_count\":1,\"mem_size_mib\":18446744073709551616}", &m, err),
			 -1);
	assert_string_equal(err,
			    "invalid type: floating point `18446744073709551616`, expected usize");
	assert_int_equal(fill(&fc_machine_obj,
			      "{\"vcpu_count\":300000000000000000000,\"mem_size_mib\":1}", &m, err),
			 -1);
	assert_non_null(strstr(err, "floating point `300000000000000000000`"));
	assert_int_equal(
	    fill(&fc_machine_obj, "{\"vcpu_count\":2.5e0,\"mem_size_mib\":1}", &m, err), -1);
	assert_string_equal(err, "invalid type: floating point `2.5e0`, expected u8");
	assert_int_equal(
	    fill(&fc_machine_obj, "{\"vcpu_count\":-0300,\"mem_size_mib\":1}", &m, err), -1);
	assert_int_equal(fill(&fc_machine_obj, "{\"vcpu_count\":-300,\"mem_size_mib\":1}", &m, err),
			 -1);
	assert_string_equal(err, "invalid value: integer `-300`, expected u8");
}

static int route(const char *m, const char *url, const char *body, struct api_req *req,
		 struct api_reply *rep)
{
	enum api_method e = !strcmp(m, "GET")	  ? API_GET
			    : !strcmp(m, "PUT")	  ? API_PUT
			    : !strcmp(m, "PATCH") ? API_PATCH
						  : API_OTHER;
	return api_route(e, m, url, body, strlen(body), req, rep);
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

static void test_routes(void **state)
{
	(void)state;
	static struct api_req req;
	struct api_reply rep = {0};
	assert_int_equal(route("GET", "/machine-config?x=1", "", &req, &rep), 0);
	assert_int_equal(req.op, OP_MACHINE_GET);
	assert_int_equal(route("PUT", "/drives/root",
			       "{\"drive_id\":\"root\",\"is_root_device\":true}", &req, &rep),
			 0);
	assert_int_equal(req.op, OP_KIND_PUT);
	assert_ptr_equal(req.kind, fc_kind_by_section("drives"));
	assert_string_equal(req.desc, "Put request on \"/drives/root\"");
	assert_int_equal(
	    route("PUT", "/drives/a", "{\"drive_id\":\"b\",\"is_root_device\":true}", &req, &rep),
	    1);
	expect_fault(&rep, 400, "does not match");
	assert_int_equal(route("PUT", "/drives/a.b",
			       "{\"drive_id\":\"a.b\",\"is_root_device\":true}", &req, &rep),
			 1);
	expect_fault(&rep, 400, "alphanumeric");
	assert_int_equal(
	    route("PUT", "/drives", "{\"drive_id\":\"\",\"is_root_device\":true}", &req, &rep), 1);
	expect_fault(&rep, 400, "The ID cannot be empty.");
	assert_int_equal(route("PUT", "/boot-source", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Empty PUT request.");
	assert_int_equal(route("DELETE", "/vm", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Invalid request method and/or path: DELETE /vm.");
	assert_int_equal(route("GET", "/vm", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Invalid request method and/or path");
	/* PATCH /machine-config takes any subset. */
	assert_int_equal(route("PATCH", "/machine-config", "{\"smt\":true}", &req, &rep), 0);
	assert_int_equal(req.u.machine.seen, 1u << 2);
}

/* Issue 32.3: smt either takes effect or is refused (skiff: refused),
 * cpu_template "None" is taken with Firecracker's Deprecation header, and
 * GET /machine-config shows Firecracker's fields only. */
static void test_machine_features(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	api_fc_init(&f, &v, &base);
	static const char *const cases[][2] = {
	    {"{\"vcpu_count\":2,\"mem_size_mib\":256,\"smt\":true}", "skiff has no simultaneous"},
	    {"{\"vcpu_count\":2,\"mem_size_mib\":256,\"cpu_template\":\"C3\"}", "CPU templates"},
	    {"{\"vcpu_count\":2,\"mem_size_mib\":256,\"cpu_template\":\"Fast\"}",
	     "unknown variant `Fast`"},
	    {"{\"vcpu_count\":2,\"mem_size_mib\":256,\"huge_pages\":\"2M\"}", "huge pages"},
	    {"{\"vcpu_count\":2,\"mem_size_mib\":256,\"huge_pages\":\"1G\"}",
	     "unknown variant `1G`"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(route("PUT", "/machine-config", cases[i][0], &req, &rep), 0);
		api_fc_handle(&f, &req, &rep);
		expect_fault(&rep, 400, cases[i][1]);
	}
	assert_false(f.cfg.machine.smt);
	assert_int_equal(route("PUT", "/machine-config",
			       "{\"vcpu_count\":2,\"mem_size_mib\":256,\"cpu_template\":\"None\","
			       "\"track_dirty_pages\":true,\"smt\":false}",
			       &req, &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_true(rep.deprecated);
	assert_true(f.cfg.machine.track_dirty_pages);
	assert_int_equal(route("PATCH", "/machine-config", "{\"vcpu_count\":4}", &req, &rep), 0);
	rep.deprecated = false;
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_false(rep.deprecated);
	char out[256];
	size_t n =
	    api_http_response(out, sizeof(out), 204, NULL, NULL, 0, true, "Deprecation: true\r\n");
	const char *dep = "\r\nDeprecation: true\r\n\r\n";
	assert_non_null(memmem(out, n, dep, strlen(dep)));
	/* Firecracker's fields only, unless skiff's own were given. */
	struct fc_machine m;
	fc_machine_defaults(&m);
	struct json_object *o = api_json_from(&fc_machine_obj, &m);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"vcpu_count\":1,\"mem_size_mib\":128,\"smt\":false,"
			    "\"track_dirty_pages\":false,\"huge_pages\":\"None\"}");
	json_object_put(o);
	api_fc_fini(&f);
}

/* Issue 32.3: GET /vm/config writes what was not given as Firecracker's
 * serde does: null (or its default), every section present. */
static void test_vmcfg_nulls(void **state)
{
	(void)state;
	static struct fc_vmcfg c;
	char err[300];
	fc_vmcfg_init(&c);
	assert_int_equal(
	    put_entry(&c, "drives",
		      "{\"drive_id\":\"r\",\"path_on_host\":\"/r\",\"is_root_device\":true,"
		      "\"rate_limiter\":{\"ops\":{\"size\":1,\"refill_time\":2}}}",
		      err),
	    0);
	assert_int_equal(put_entry(&c, "network-interfaces",
				   "{\"iface_id\":\"e\",\"host_dev_name\":\"t\"}", err),
			 0);
	/* Issue 32.3: a second interface on the same tap is refused, and an
	 * interface updated onto it is gone, as in Firecracker. */
	assert_int_equal(put_entry(&c, "network-interfaces",
				   "{\"iface_id\":\"f\",\"host_dev_name\":\"t\"}", err),
			 -1);
	assert_non_null(strstr(err, "Could not create the network device"));
	assert_int_equal(put_entry(&c, "network-interfaces",
				   "{\"iface_id\":\"f\",\"host_dev_name\":\"u\"}", err),
			 0);
	assert_int_equal(put_entry(&c, "network-interfaces",
				   "{\"iface_id\":\"f\",\"host_dev_name\":\"t\"}", err),
			 -1);
	assert_int_equal(coll_of(&c, "network-interfaces")->n, 1);
	assert_string_equal(fc_coll_id(&coll_of(&c, "network-interfaces")->item[0]), "e");
	struct json_object *o = fc_vmcfg_json(&c);
	const char *j = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	static const char *const want[] = {
	    "\"cpu-config\":null",
	    "\"balloon\":null",
	    "\"logger\":null",
	    "\"metrics\":null",
	    "\"pmem\":[]",
	    "\"partuuid\":null",
	    "\"cache_type\":\"Unsafe\"",
	    "\"socket\":null",
	    "\"rate_limiter\":{\"bandwidth\":null,\"ops\":{\"size\":1,\"one_time_burst\":null,"
	    "\"refill_time\":2}}",
	    "\"guest_mac\":null",
	    "\"mtu\":null",
	    "\"rx_rate_limiter\":null",
	    "\"machine-config\":{\"vcpu_count\":1,\"mem_size_mib\":128,\"smt\":false,"
	    "\"track_dirty_pages\":false,\"huge_pages\":\"None\"}",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(j, want[i]))
			fail_msg("%s lacks %s", j, want[i]);
	assert_null(strstr(j, "skiff_options"));
	json_object_put(o);
}

/* After InstanceStart, Firecracker's refusals; the machine stays as it was. */
static void test_refused_after_start(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	api_fc_init(&f, &v, &base);
	f.state = FC_RUNNING;
	static const char *const refused[][3] = {
	    {"PUT", "/boot-source", "{\"kernel_image_path\":\"/k\"}"},
	    {"PUT", "/drives/d", "{\"drive_id\":\"d\",\"is_root_device\":false}"},
	    {"PUT", "/network-interfaces/n", "{\"iface_id\":\"n\",\"host_dev_name\":\"t\"}"},
	    {"PUT", "/machine-config", "{\"vcpu_count\":4,\"mem_size_mib\":64}"},
	    {"PATCH", "/machine-config", "{\"vcpu_count\":4}"},
	    {"PUT", "/metrics", "{\"metrics_path\":\"/m\"}"},
	    {"PUT", "/logger", "{\"log_path\":\"/l\"}"},
	    {"PUT", "/actions", "{\"action_type\":\"InstanceStart\"}"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(route(refused[i][0], refused[i][1], refused[i][2], &req, &rep), 0);
		api_fc_handle(&f, &req, &rep);
		expect_fault(
		    &rep, 400,
		    "The requested operation is not supported after starting the microVM.");
	}
	assert_int_equal(f.cfg.machine.vcpu_count, 1);
	char err[300];
	assert_int_equal(put_entry(&f.cfg, "drives",
				   "{\"drive_id\":\"root\",\"path_on_host\":\"/r\","
				   "\"is_root_device\":true}",
				   err),
			 0);
	struct dev_api_res *root = &coll_of(&f.cfg, "drives")->item[0];
	assert_int_equal(route("PATCH", "/drives/root",
			       "{\"drive_id\":\"root\",\"path_on_host\":\"/other\"}", &req, &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	/* No VM runs here: the swap fails, and the old path stays. */
	expect_fault(&rep, 400, "Unable to patch the block device");
	assert_string_equal(field_of("drives", root, "path_on_host")->s, "/r");
	/* An empty limiter changes nothing; a bucket needs the running
	 * disk, which is not here: refused, and the configuration stays. */
	assert_int_equal(route("PATCH", "/drives/root",
			       "{\"drive_id\":\"root\",\"rate_limiter\":{}}", &req, &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_int_equal(route("PATCH", "/drives/root",
			       "{\"drive_id\":\"root\",\"rate_limiter\":{\"ops\":"
			       "{\"size\":5,\"refill_time\":100}}}",
			       &req, &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Unable to update the rate limiter");
	assert_int_equal(field_of("drives", root, "rate_limiter")->rl.seen, 0);
	assert_int_equal(route("PATCH", "/drives/root", "{\"drive_id\":\"root\"}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_int_equal(route("PATCH", "/drives/gone", "{\"drive_id\":\"gone\"}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Device not found");
	assert_int_equal(route("GET", "/", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 200);
	assert_non_null(strstr(rep.body, "\"state\":\"Running\""));
	free(rep.body);
	api_fc_fini(&f);
}

/* A kind's configured resource (NULL if none) and its spec. */
static struct fc_res_cfg *res_of(struct fc_vmcfg *c, const char *section)
{
	struct fc_res_cfg *r = fc_vmcfg_res(c, fc_kind_by_section(section));
	assert_non_null(r);
	return r->has ? r : NULL;
}

static const char *res_spec(struct fc_vmcfg *c, const char *section, char *spec, size_t len)
{
	struct devmgr_arg a;
	char err[200];
	struct fc_res_cfg *r = res_of(c, section);
	assert_non_null(r);
	assert_int_equal(
	    fc_res_arg(fc_kind_by_section(section), &r->r, spec, len, &a, err, sizeof(err)), 0);
	return spec;
}

/* PUT /entropy: Firecracker's body, shown by GET /vm/config, turned into
 * --rng's keys, refused after the start; the config file's "entropy". */
static void test_entropy(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char spec[FC_RL_SPEC_MAX], err[400];
	api_fc_init(&f, &v, &base);
	assert_int_equal(route("PUT", "/entropy", "{\"rate\":1}", &req, &rep), 1);
	expect_fault(&rep, 400,
		     "An error occurred when deserializing the json body of a request: unknown "
		     "field `rate`, expected `rate_limiter`.");
	assert_int_equal(route("PUT", "/entropy", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Empty PUT request.");
	assert_int_equal(route("GET", "/entropy", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Invalid request method and/or path: GET /entropy.");
	assert_int_equal(route("PUT", "/vm/config", "", &req, &rep), 1);
	expect_fault(&rep, 400, "Invalid request method and/or path");
	assert_int_equal(route("GET", "/vm/config", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	/* none configured: null, as Firecracker shows it */
	assert_non_null(strstr(rep.body, "\"entropy\":null"));
	free(rep.body);
	assert_int_equal(route("PUT", "/entropy", "{}", &req, &rep), 0);
	assert_int_equal(req.op, OP_KIND_PUT);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_string_equal(res_spec(&f.cfg, "entropy", spec, sizeof(spec)), "");
	assert_int_equal(route("PUT", "/entropy",
			       "{\"rate_limiter\":{\"bandwidth\":{\"size\":1000,"
			       "\"one_time_burst\":0,\"refill_time\":100},\"ops\":null}}",
			       &req, &rep),
			 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	assert_string_equal(res_spec(&f.cfg, "entropy", spec, sizeof(spec)), "bw=1000:100:0");
	assert_int_equal(devmgr_check("rng", spec, true, err, sizeof(err)), 0);
	assert_int_equal(route("GET", "/vm/config", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 200);
	if (!strstr(rep.body, "\"entropy\":{\"rate_limiter\":{\"bandwidth\":{\"size\":1000,"
			      "\"one_time_burst\":0,\"refill_time\":100},\"ops\":null}}"))
		fail_msg("GET /vm/config: %s", rep.body);
	free(rep.body);
	f.state = FC_RUNNING;
	assert_int_equal(route("PUT", "/entropy", "{}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400,
		     "The requested operation is not supported after starting the microVM.");
	api_fc_fini(&f);

	static struct fc_vmcfg c;
	const char *file =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"entropy\":"
	    "{\"rate_limiter\":{\"ops\":{\"size\":5,\"refill_time\":100}}}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, file, strlen(file), err, sizeof(err)), 0);
	assert_string_equal(res_spec(&c, "entropy", spec, sizeof(spec)), "ops=5:100:0");
	const char *bad =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"entropy\":{\"x\":1}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, bad, strlen(bad), err, sizeof(err)), -1);
	assert_string_equal(err, "entropy: unknown field `x`, expected `rate_limiter`");
}

/* Issue 33.3: the balloon's endpoints as Firecracker's, before and after
 * the start, GET /vm/config's balloon, the config file's. */
static void test_balloon(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct api_req req;
	static struct vmm v;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char spec[96], err[400];
	api_fc_init(&f, &v, &base);
	assert_int_equal(route("GET", "/balloon", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Balloon config error: No balloon device found.");
	assert_int_equal(route("PUT", "/balloon", "{}", &req, &rep), 1);
	expect_fault(&rep, 400,
		     "An error occurred when deserializing the json body of a request: missing "
		     "field `amount_mib`");
	assert_int_equal(route("PUT", "/balloon",
			       "{\"amount_mib\":1,\"deflate_on_oom\":false,"
			       "\"stats_polling_interval_s\":70000}",
			       &req, &rep),
			 1);
	expect_fault(&rep, 400, "u16");
	/* More than the machine's 128 MiB. */
	assert_int_equal(
	    route("PUT", "/balloon", "{\"amount_mib\":129,\"deflate_on_oom\":false}", &req, &rep),
	    0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Balloon config error: Amount of pages requested is too large.");
	assert_null(res_of(&f.cfg, "balloon"));
	assert_int_equal(
	    route("PUT", "/balloon",
		  "{\"amount_mib\":1,\"deflate_on_oom\":false,\"free_page_hinting\":true}", &req,
		  &rep),
	    0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "free page hinting");
	assert_int_equal(route("PUT", "/balloon",
			       "{\"amount_mib\":64,\"deflate_on_oom\":true,"
			       "\"stats_polling_interval_s\":1,\"free_page_reporting\":true}",
			       &req, &rep),
			 0);
	assert_int_equal(req.op, OP_KIND_PUT);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 204);
	res_spec(&f.cfg, "balloon", spec, sizeof(spec));
	assert_string_equal(spec, "amount=64,deflate-on-oom=on,stats=1,reporting=on");
	assert_int_equal(devmgr_check("balloon", spec, true, err, sizeof(err)), 0);
	assert_int_equal(route("GET", "/balloon", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	assert_int_equal(rep.status, 200);
	if (!strstr(rep.body, "\"amount_mib\":64,\"deflate_on_oom\":true,"
			      "\"stats_polling_interval_s\":1"))
		fail_msg("GET /balloon: %s", rep.body);
	free(rep.body);
	assert_int_equal(route("GET", "/vm/config", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	if (!strstr(rep.body, "\"balloon\":{\"amount_mib\":64,"))
		fail_msg("GET /vm/config: %s", rep.body);
	free(rep.body);
	/* Before the start: the rest is refused, as Firecracker's. */
	static const char *const post[][3] = {
	    {"PATCH", "/balloon", "{\"amount_mib\":1}"},
	    {"GET", "/balloon/statistics", ""},
	    {"PATCH", "/balloon/statistics", "{\"stats_polling_interval_s\":2}"},
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(route(post[i][0], post[i][1], post[i][2], &req, &rep), 0);
		api_fc_handle(&f, &req, &rep);
		expect_fault(&rep, 400,
			     "The requested operation is not supported before starting the "
			     "microVM.");
	}
	assert_int_equal(route("PATCH", "/balloon", "{\"deflate_on_oom\":true}", &req, &rep), 1);
	expect_fault(&rep, 400, "unknown field `deflate_on_oom`, expected `amount_mib`");
	/* After it: PUT refused; PATCH reaches the device (no VM here). */
	f.state = FC_RUNNING;
	assert_int_equal(
	    route("PUT", "/balloon", "{\"amount_mib\":1,\"deflate_on_oom\":false}", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400,
		     "The requested operation is not supported after starting the microVM.");
	assert_int_equal(route("PATCH", "/balloon", "{\"amount_mib\":8}", &req, &rep), 0);
	assert_int_equal(req.op, OP_KIND_PATCH);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Balloon config error: the VM is not running");
	const struct dm_kind *bk = fc_kind_by_section("balloon");
	struct fc_res_cfg *b = res_of(&f.cfg, "balloon");
	assert_int_equal(*fc_res_int(bk, &b->r, "amount_mib"), 64); /* unchanged */
	*fc_res_int(bk, &b->r, "stats_polling_interval_s") = 0;
	assert_int_equal(route("GET", "/balloon/statistics", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400,
		     "Balloon config error: Statistics for the balloon device are not enabled");
	b->has = false;
	assert_int_equal(route("GET", "/balloon/statistics", "", &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	expect_fault(&rep, 400, "Balloon config error: No balloon device found.");
	api_fc_fini(&f);

	static struct fc_vmcfg c;
	const char *file = "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],"
			   "\"balloon\":{\"amount_mib\":200,\"deflate_on_oom\":false},"
			   "\"machine-config\":{\"vcpu_count\":1,\"mem_size_mib\":256}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, file, strlen(file), err, sizeof(err)), 0);
	assert_non_null(res_of(&c, "balloon"));
	res_spec(&c, "balloon", spec, sizeof(spec));
	assert_string_equal(spec, "amount=200,deflate-on-oom=off");
	const char *big = "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],"
			  "\"balloon\":{\"amount_mib\":200,\"deflate_on_oom\":false}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, big, strlen(big), err, sizeof(err)), -1);
	assert_string_equal(
	    err, "balloon: Balloon config error: Amount of pages requested is too large.");
}

struct caller {
	struct api_ctl *ctl;
	struct api_req req;
	struct api_reply rep;
};

static void *call_thread(void *arg)
{
	struct caller *c = arg;
	api_ctl_call(c->ctl, &c->req, &c->rep);
	return NULL;
}

static void handle_ok(void *opaque, const struct api_req *req, struct api_reply *rep)
{
	(void)opaque;
	(void)req;
	api_reply_none(rep);
}

/* A served request gets its handler's reply; one waiting when skiff
 * stops gets a 500 and returns, so the API thread can be joined. */
static void test_ctl_close(void **state)
{
	(void)state;
	static struct api_ctl ctl;
	static struct caller c;
	assert_int_equal(api_ctl_init(&ctl), 0);
	c.ctl = &ctl;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, call_thread, &c), 0);
	uint64_t n;
	while (read(ctl.efd, &n, sizeof(n)) < 0)
		usleep(1000);
	assert_int_equal(write(ctl.efd, &n, sizeof(n)), sizeof(n)); /* put it back */
	api_ctl_serve(&ctl, handle_ok, NULL);
	pthread_join(t, NULL);
	assert_int_equal(c.rep.status, 204);

	assert_int_equal(pthread_create(&t, NULL, call_thread, &c), 0);
	while (read(ctl.efd, &n, sizeof(n)) < 0)
		usleep(1000);
	api_ctl_close(&ctl);
	pthread_join(t, NULL);
	expect_fault(&c.rep, 500, "shutting down");
	api_ctl_call(&ctl, &c.req, &c.rep); /* after close: at once */
	expect_fault(&c.rep, 500, "shutting down");
	api_ctl_destroy(&ctl);
}

static int client_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c >= 0 && connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(c);
		return -1;
	}
	return c;
}

/* The server answers through the controller; once the controller is
 * closed and the server closed, a request waiting gets its 500, the
 * thread is joined and the socket's file is gone: nothing is left to
 * read the VM when it is freed. */
static void test_server_stop(void **state)
{
	(void)state;
	static struct api_ctl ctl;
	static struct api_server srv;
	char path[108], err[256], buf[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/skiff-api-%d.sock", tmp && *tmp ? tmp : "/tmp", getpid());
	assert_int_equal(api_ctl_init(&ctl), 0);
	assert_int_equal(api_server_open(&srv, path, &ctl, err, sizeof(err)), 0);
	assert_int_equal(api_server_start(&srv), 0);
	int c = client_connect(path);
	assert_true(c >= 0);
	static const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(write(c, get, sizeof(get) - 1), sizeof(get) - 1);
	struct pollfd p = {.fd = ctl.efd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 5000), 1);
	api_ctl_serve(&ctl, handle_ok, NULL);
	ssize_t n = read(c, buf, sizeof(buf) - 1);
	assert_true(n > 12);
	assert_memory_equal(buf, "HTTP/1.1 204", 12);
	/* A second request waits in the controller while skiff stops. */
	assert_int_equal(write(c, get, sizeof(get) - 1), sizeof(get) - 1);
	assert_int_equal(poll(&p, 1, 5000), 1);
	api_ctl_close(&ctl);
	n = read(c, buf, sizeof(buf) - 1);
	assert_true(n > 12);
	assert_memory_equal(buf, "HTTP/1.1 500", 12);
	api_server_close(&srv);
	assert_false(srv.running);
	assert_int_equal(read(c, buf, sizeof(buf)), 0); /* closed */
	close(c);
	assert_int_equal(client_connect(path), -1);
	assert_int_equal(access(path, F_OK), -1);
	api_ctl_destroy(&ctl);
}

/* --config-file: the same objects, strictly. */
static void test_config_file(void **state)
{
	(void)state;
	static struct fc_vmcfg c;
	char err[400];
	const char *ok =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\",\"boot_args\":\"console=ttyS0\"},"
	    "\"drives\":[{\"drive_id\":\"rootfs\",\"path_on_host\":\"/r\",\"is_root_device\":true,"
	    "\"is_read_only\":false}],\"network-interfaces\":[{\"iface_id\":\"eth0\","
	    "\"host_dev_name\":\"tap0\",\"guest_mac\":\"06:00:AC:10:00:02\"}],"
	    "\"machine-config\":{\"vcpu_count\":2,\"mem_size_mib\":256,\"skiff_iothreads\":2}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(coll_of(&c, "drives")->n, 1);
	assert_int_equal(coll_of(&c, "network-interfaces")->n, 1);
	assert_int_equal(c.machine.skiff_iothreads, 2);
	assert_false(c.machine.seen & (FC_MACHINE_SEEN_CPU_PM | FC_MACHINE_SEEN_HALT_POLL));
	/* skiff's idle fields: given, they are marked seen (api_start then
	 * prefers them to --cpu-pm / --halt-poll). */
	const char *pm =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"machine-config\":"
	    "{\"vcpu_count\":2,\"mem_size_mib\":256,\"skiff_cpu_pm\":true,"
	    "\"skiff_halt_poll_us\":50}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, pm, strlen(pm), err, sizeof(err)), 0);
	assert_true(c.machine.skiff_cpu_pm);
	assert_int_equal(c.machine.skiff_halt_poll_us, 50);
	assert_int_equal(c.machine.seen & (FC_MACHINE_SEEN_CPU_PM | FC_MACHINE_SEEN_HALT_POLL),
			 FC_MACHINE_SEEN_CPU_PM | FC_MACHINE_SEEN_HALT_POLL);
	const char *far =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"machine-config\":"
	    "{\"vcpu_count\":2,\"mem_size_mib\":256,\"skiff_halt_poll_us\":1000001}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, far, strlen(far), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "expected an integer from 0 to 1000000"));
	const char *notbool =
	    "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"machine-config\":"
	    "{\"vcpu_count\":2,\"mem_size_mib\":256,\"skiff_cpu_pm\":\"on\"}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, notbool, strlen(notbool), err, sizeof(err)), -1);
	/* A section skiff has no device for is refused (balloon has one now:
	 * issue 33.3; its body's own rules apply). */
	const char *bad = "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],"
			  "\"mmds-config\":{}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, bad, strlen(bad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mmds-config: The requested operation is not supported"));
	bad = "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],"
	      "\"balloon\":{}}";
	assert_int_equal(fc_vmcfg_parse_file(&c, bad, strlen(bad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "balloon: missing field `amount_mib`"));
	/* Issue 32.3: Firecracker's VmmConfig: unknown keys ignored, null for
	 * an optional section, drives required, duplicate keys refused. */
	static const char *const files[][2] = {
	    {"{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"frob\":{\"x\":1},"
	     "\"logger\":null,\"metrics\":null,\"machine-config\":null,\"balloon\":null,"
	     "\"network-interfaces\":null}",
	     NULL},
	    {"{\"boot-source\":{\"kernel_image_path\":\"/k\"}}", "missing field `drives`"},
	    {"{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":null}",
	     "drives: invalid type: null, expected a sequence"},
	    {"{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":[],\"drives\":[]}",
	     "duplicate field `drives`"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int r = fc_vmcfg_parse_file(&c, files[i][0], strlen(files[i][0]), err, sizeof(err));
		if (r != (files[i][1] ? -1 : 0) || (files[i][1] && !strstr(err, files[i][1])))
			fail_msg("file %zu: %d '%s'", i, r, r ? err : "");
	}
	assert_false(c.has_logger);
	const char *two = "{\"boot-source\":{\"kernel_image_path\":\"/k\"},\"drives\":["
			  "{\"drive_id\":\"a\",\"path_on_host\":\"/a\",\"is_root_device\":true},"
			  "{\"drive_id\":\"b\",\"path_on_host\":\"/b\",\"is_root_device\":true}]}";
	assert_int_equal(fc_vmcfg_parse_file(&c, two, strlen(two), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "A root block device already exists!"));
}

/* A log line is one line: a client's path_on_host (PATCH /drives logs
 * it) with a newline or an escape must not forge a second line or reach a
 * terminal following the log. */
static void test_log_one_line(void **state)
{
	(void)state;
	struct api_fc f;
	struct vmm_config base;
	memset(&base, 0, sizeof(base));
	api_fc_init(&f, NULL, &base);
	int p[2];
	assert_int_equal(pipe(p), 0);
	f.log_fd = p[1];
	api_fc_log(&f, "Info", "Drive %s now has %s.", "rootfs",
		   "/img\n2026-01-01T00:00:00.000000000 [anonymous-instance:main:ERROR] x\033[2J");
	api_fc_fini(&f);
	char buf[1024];
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_ptr_equal(strchr(buf, '\n'), buf + n - 1);
	assert_null(strchr(buf, '\033'));
	assert_non_null(strstr(buf, "Drive rootfs now has /img?2026"));
}

/* Issue 35.4: PUT /logger's level is skiff's one level (core/log.h), for
 * stderr and the log file alike; Trace is Debug, Off silences both. */
static void test_logger_level(void **state)
{
	(void)state;
	struct api_fc f;
	struct vmm_config base;
	memset(&base, 0, sizeof(base));
	api_fc_init(&f, NULL, &base);
	static const struct {
		const char *name;
		enum log_level level;
	} map[] = {{"Error", LOG_ERROR}, {"Warning", LOG_WARN}, {"Info", LOG_INFO},
		   {"Debug", LOG_DEBUG}, {"Trace", LOG_DEBUG},	{"Off", LOG_OFF}};
	char err[200];
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		struct fc_logger l = {0};
		snprintf(l.level, sizeof(l.level), "%s", map[i].name);
		assert_int_equal(fc_logger_check(&l, err, sizeof(err)), 0);
		assert_int_equal(api_fc_logger_open(&f, &l, err, sizeof(err)), 0);
		assert_int_equal(log_get_level(), map[i].level);
	}
	struct fc_logger bad = {.level = "Loud"};
	assert_int_equal(fc_logger_check(&bad, err, sizeof(err)), -1);
	assert_string_equal(err, "Logger error: Invalid level: Loud");
	/* The file follows it: at Error, an Info line is filtered. */
	struct fc_logger l = {.level = "Error"};
	assert_int_equal(api_fc_logger_open(&f, &l, err, sizeof(err)), 0);
	int p[2];
	assert_int_equal(pipe(p), 0);
	f.log_fd = p[1];
	api_fc_log(&f, "Info", "hidden");
	api_fc_log(&f, "Error", "shown");
	api_fc_fini(&f);
	log_set_level(LOG_DEFAULT_LEVEL);
	char buf[1024];
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_null(strstr(buf, "hidden"));
	assert_non_null(strstr(buf, "shown"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_framing),     cmocka_unit_test(test_http_limits),
	    cmocka_unit_test(test_json_strict),	     cmocka_unit_test(test_json_refused),
	    cmocka_unit_test(test_machine_features), cmocka_unit_test(test_vmcfg_nulls),
	    cmocka_unit_test(test_routes),	     cmocka_unit_test(test_refused_after_start),
	    cmocka_unit_test(test_ctl_close),	     cmocka_unit_test(test_config_file),
	    cmocka_unit_test(test_server_stop),	     cmocka_unit_test(test_log_one_line),
	    cmocka_unit_test(test_entropy),	     cmocka_unit_test(test_logger_level),
	    cmocka_unit_test(test_balloon),
	};
	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
