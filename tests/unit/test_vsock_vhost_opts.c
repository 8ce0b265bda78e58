// SPDX-License-Identifier: Apache-2.0
/* --vsock's keys for backend=vhost (issue 33.1): the option table and its
 * one-line errors (the reserved CIDs among them), ioeventfd kicks needed,
 * and the API's and config file's way to it: skiff_options on PUT /vsock,
 * with which uds_path may be left out, and GET /vm/config giving it back.
 * The device itself: test_vsock_vhost.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_fc.h"
#include "api/api_model.h"
#include "api/api_req.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "vmm/devmgr.h"

/* ---- the option table ---- */

/* As the device manager takes a spec: its table, then the kind's check. */
static int spec_take(const char *spec, struct vsock_spec *s, char *err, size_t errlen)
{
	vsock_spec_init(s);
	if (opt_parse_spec(&vsock_spec_table, spec, s, err, errlen) < 0)
		return -1;
	return vsock_spec_check(s, err, errlen);
}

static void test_spec(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *err; /* err NULL: accepted */
		int backend;
	} cases[] = {
	    {"cid=3,backend=vhost", NULL, VSOCK_BACKEND_VHOST},
	    {"backend=vhost,cid=4294967294", NULL, VSOCK_BACKEND_VHOST},
	    {"cid=3,uds=/tmp/v.sock", NULL, VSOCK_BACKEND_HYBRID},
	    {"cid=3,uds=/tmp/v.sock,backend=hybrid", NULL, VSOCK_BACKEND_HYBRID},
	    /* the four reserved CIDs, and beyond 32 bits */
	    {"cid=0,backend=vhost", "invalid cid=0", 0},
	    {"cid=1,backend=vhost", "invalid cid=1", 0},
	    {"cid=2,backend=vhost", "invalid cid=2", 0},
	    {"cid=4294967295,backend=vhost", "invalid cid=4294967295", 0},
	    {"cid=4294967296,backend=vhost", "invalid cid=4294967296", 0},
	    {"cid=-1,backend=vhost", "invalid cid=-1", 0},
	    {"backend=vhost", "cid=N is required", 0},
	    {"cid=3,backend=vhost,uds=/tmp/v.sock", "uds= is for backend=hybrid", 0},
	    {"cid=3", "uds=PATH is required", 0},
	    {"cid=3,backend=hybrid", "uds=PATH is required", 0},
	    {"cid=3,backend=kernel", "invalid backend=kernel (use hybrid or vhost)", 0},
	    {"cid=3,backend=vhost,backend=vhost", "backend= given twice", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vsock_spec s;
		char err[256] = "";
		int r = spec_take(cases[i].spec, &s, err, sizeof(err));
		if (!cases[i].err) {
			if (r)
				fail_msg("%s: refused: %s", cases[i].spec, err);
			assert_int_equal(s.backend, cases[i].backend);
			continue;
		}
		if (r != -1 || !strstr(err, cases[i].err))
			fail_msg("%s: %d '%s', want '%s'", cases[i].spec, r, err, cases[i].err);
		assert_null(strchr(err, '\n'));
	}
	/* vhost takes the kicks from KVM's ioeventfds: not without them. */
	char err[256];
	assert_int_equal(devmgr_check("vsock", "cid=3,backend=vhost", false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "backend=vhost needs ioeventfd kicks"));
	assert_int_equal(devmgr_check("vsock", "cid=3,backend=vhost", true, err, sizeof(err)), 0);
	assert_int_equal(devmgr_check("vsock", "cid=3,uds=/tmp/v", false, err, sizeof(err)), 0);
}

/* ---- PUT /vsock, the config file, GET /vm/config ---- */

static int put(const char *body, struct api_req *req, struct api_reply *rep)
{
	return api_route(API_PUT, "PUT", "/vsock", body, strlen(body), req, rep);
}

/* The configured vsock as --vsock takes it: "KEY=VALUE (SPEC)". */
static void vsock_arg(struct fc_vmcfg *c, char *out, size_t len)
{
	const struct dm_kind *k = fc_kind_by_section("vsock");
	struct fc_res_cfg *r = fc_vmcfg_res(c, k);
	struct devmgr_arg a;
	char spec[FC_RES_SPEC_MAX], err[200];
	assert_true(r && r->has);
	assert_int_equal(fc_res_arg(k, &r->r, spec, sizeof(spec), &a, err, sizeof(err)), 0);
	snprintf(out, len, "%s=%s (%s)", a.key ? a.key : "", a.value ? a.value : "", a.spec);
}

/* One PUT, handled: its status, its fault in err ("" if none). */
static int put_handled(struct api_fc *f, const char *body, char *err, size_t len)
{
	static struct api_req req;
	struct api_reply rep = {0};
	err[0] = '\0';
	if (put(body, &req, &rep) == 0)
		api_fc_handle(f, &req, &rep);
	snprintf(err, len, "%s", rep.body ? rep.body : "");
	free(rep.body);
	return rep.status;
}

static void test_put_skiff_options(void **state)
{
	(void)state;
	static struct api_fc f;
	static struct vmm v;
	struct vmm_config base = {0};
	char err[512], arg[300];
	api_fc_init(&f, &v, &base);
	static const struct {
		const char *body, *fault; /* NULL: 204 */
	} cases[] = {
	    /* Firecracker's body still needs uds_path; null is absent */
	    {"{\"guest_cid\":3}", "missing field `uds_path`"},
	    {"{\"guest_cid\":3,\"skiff_options\":null}", "missing field `uds_path`"},
	    {"{\"guest_cid\":3,\"skiff_options\":5}", "invalid type: integer, expected a string"},
	    {"{\"guest_cid\":3,\"skiff_options\":\"backend=hybrid\"}", "uds=PATH is required"},
	    {"{\"guest_cid\":3,\"uds_path\":\"/v\",\"skiff_options\":\"backend=vhost\"}",
	     "uds= is for backend=hybrid"},
	    {"{\"guest_cid\":3,\"skiff_options\":\"backend=vhost,cid=4\"}", "cid= given twice"},
	    {"{\"guest_cid\":3,\"skiff_options\":\"backend=kernel\"}", "invalid backend=kernel"},
	    {"{\"guest_cid\":4294967295,\"skiff_options\":\"backend=vhost\"}",
	     "invalid cid=4294967295"},
	    {"{\"guest_cid\":9,\"skiff_options\":\"backend=vhost\"}", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = put_handled(&f, cases[i].body, err, sizeof(err));
		if (cases[i].fault ? st != 400 || !strstr(err, cases[i].fault) : st != 204)
			fail_msg("%s: %d %s", cases[i].body, st, err);
		assert_null(strchr(err, '\n'));
	}
	vsock_arg(&f.cfg, arg, sizeof(arg));
	assert_string_equal(arg, "= (cid=9,backend=vhost)");
	/* GET /vm/config gives it back as a config file takes it. */
	static struct api_req req;
	static struct fc_vmcfg c;
	struct api_reply rep = {0};
	f.cfg.has_boot = true;
	snprintf(f.cfg.boot.kernel_image_path, sizeof(f.cfg.boot.kernel_image_path), "/k");
	assert_int_equal(api_route(API_GET, "GET", "/vm/config", "", 0, &req, &rep), 0);
	api_fc_handle(&f, &req, &rep);
	if (!strstr(rep.body, "\"vsock\":{\"guest_cid\":9,\"skiff_options\":\"backend=vhost\"}"))
		fail_msg("GET /vm/config: %s", rep.body);
	if (fc_vmcfg_parse_file(&c, rep.body, rep.len, err, sizeof(err)))
		fail_msg("%s: %s", rep.body, err);
	free(rep.body);
	vsock_arg(&c, arg, sizeof(arg));
	assert_string_equal(arg, "= (cid=9,backend=vhost)");
	api_fc_fini(&f);
}

/* A VM the command line made (--vsock cid=5,backend=vhost): /vm/config
 * names backend= in skiff_options, the one field no key of --vsock's
 * table but cid and uds has. */
static void test_vm_config_from_device(void **state)
{
	(void)state;
	const struct dm_kind *k = fc_kind_by_section("vsock");
	static struct devmgr dm;
	static struct fc_vmcfg back;
	memset(&dm, 0, sizeof(dm));
	memset(&back, 0, sizeof(back));
	dm.nr = 1;
	dm.devs[0].kind = k;
	dm.devs[0].arg_spec = "cid=5,backend=vhost";
	fc_vmcfg_from_devices(&back, &dm);
	struct fc_res_cfg *b = fc_vmcfg_res(&back, k);
	assert_true(b->has);
	struct json_object *j = fc_res_json(k, &b->r);
	const char *txt = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	assert_string_equal(txt, "{\"guest_cid\":5,\"skiff_options\":\"backend=vhost\"}");
	json_object_put(j);
	char arg[300];
	vsock_arg(&back, arg, sizeof(arg));
	assert_string_equal(arg, "= (cid=5,backend=vhost)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec),
	    cmocka_unit_test(test_put_skiff_options),
	    cmocka_unit_test(test_vm_config_from_device),
	};
	return cmocka_run_group_tests_name("vsock_vhost_opts", tests, NULL, NULL);
}
