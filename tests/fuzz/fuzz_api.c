// SPDX-License-Identifier: Apache-2.0
/* The API's request parsing (src/api/): bytes as a client sends them, cut
 * into reads of the sizes byte 0 picks, through the HTTP framing
 * (libhttp-parser with skiff's limits), the route table, the strict JSON
 * objects, and the controller's handlers for requests that touch no file
 * and build no VM; the body also goes through the --config-file parser.
 *
 * Checked beyond ASan/UBSan: every reply is 200, 204 or 400; a 400 is a
 * JSON object with a fault_message string; a 204 has no body; the
 * connection's buffered bytes never exceed its buffer. */
#include <string.h>

#include "api/api_fc.h"
#include "api/api_http.h"
#include "api/api_req.h"
#include "fuzz_common.h"

static void check_reply(const struct api_reply *rep)
{
	FZ_CHECK(!(rep->status == 204 && rep->body));
	FZ_CHECK(rep->status == 200 || rep->status == 204 || rep->status == 400);
	if (rep->status != 400)
		return;
	struct json_object *o = json_tokener_parse(rep->body);
	struct json_object *m = NULL;
	FZ_CHECK(o && json_object_object_get_ex(o, "fault_message", &m) &&
		 json_object_get_type(m) == json_type_string);
	json_object_put(o);
}

/* Handlers that open files (logger, metrics, snapshots) or build a VM
 * (actions, a snapshot's load) are left out: the fuzzer must not create
 * or read files or touch /dev/kvm. */
static bool safe(enum api_op op)
{
	return op != OP_METRICS && op != OP_LOGGER && op != OP_ACTION && op != OP_SNAPSHOT_CREATE &&
	       op != OP_SNAPSHOT_LOAD;
}

static void serve(struct api_conn *c)
{
	static struct api_fc f;
	static struct vmm v;
	static struct api_req req;
	static struct fc_vmcfg file;
	struct vmm_config base = {0};
	struct api_reply rep = {0};
	char err[400];
	api_fc_init(&f, &v, &base);
	if (api_route(api_conn_method(c), http_method_str(c->p.method), c->url, c->body,
		      c->body_len, &req, &rep) == 0) {
		if (safe(req.op))
			api_fc_handle(&f, &req, &rep);
		else
			api_reply_none(&rep);
	}
	check_reply(&rep);
	free(rep.body);
	fc_vmcfg_parse_file(&file, c->body, c->body_len, err, sizeof(err));
	api_fc_fini(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api_conn c;
	if (!size || api_conn_init(&c) < 0)
		return 0;
	size_t step = data[0] ? data[0] : 1, pos = 1;
	bool open = true;
	while (open && pos < size) {
		size_t n = size - pos < step ? size - pos : step;
		if (n > sizeof(c.in) - c.in_len)
			n = sizeof(c.in) - c.in_len;
		memcpy(c.in + c.in_len, data + pos, n);
		c.in_len += n;
		pos += n;
		for (;;) {
			enum api_feed r = api_conn_feed(&c);
			FZ_CHECK(c.in_len <= sizeof(c.in));
			if (r == API_FEED_MORE)
				break;
			if (r != API_FEED_REQUEST) {
				open = false;
				break;
			}
			serve(&c);
			api_conn_next(&c);
		}
	}
	api_conn_free(&c);
	return 0;
}
