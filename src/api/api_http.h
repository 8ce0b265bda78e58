// SPDX-License-Identifier: Apache-2.0
/* One HTTP/1.1 connection of the API socket: bytes in through
 * libhttp-parser (nodejs http-parser), complete requests out, with limits
 * on what a client may send. No I/O here: the server reads and writes. */
#ifndef SKIFF_API_HTTP_H
#define SKIFF_API_HTTP_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Firecracker's default --http-api-max-payload-size. */
#define API_BODY_MAX 51200
#define API_URL_MAX  1024
/* What a connection holds between reads: the unparsed tail of a read. */
#define API_IN_MAX 4096

enum api_method { API_GET, API_PUT, API_PATCH, API_OTHER };

struct api_conn {
	http_parser p;
	char url[API_URL_MAX + 1];
	size_t url_len;
	char *body; /* NUL-terminated, API_BODY_MAX + 1 bytes */
	size_t body_len;
	bool complete; /* a whole request is in url/body */
	bool partial;  /* some of a request came */
	/* "Expect: 100-continue" (curl sends it for bodies over 1 KiB): the
	 * server answers 100 once the headers are in, not the client's 1 s. */
	bool hdr_expect, expect_continue, continue_sent;
	bool url_long, body_long; /* over the limits: refused once complete */
	char in[API_IN_MAX];	  /* bytes read but not parsed yet (pipelining) */
	size_t in_len;
};

enum api_feed {
	API_FEED_MORE,	   /* need more bytes */
	API_FEED_REQUEST,  /* a request is complete (api_conn_method, url, body) */
	API_FEED_BAD,	   /* not HTTP: answer 400 and close */
	API_FEED_TOO_LARGE /* body over API_BODY_MAX: answer 400 and close */
};

int api_conn_init(struct api_conn *c);
void api_conn_free(struct api_conn *c);
/* Parses the bytes in c->in (the caller appends to it, at most
 * API_IN_MAX); consumed bytes leave c->in. After API_FEED_REQUEST, handle
 * the request, then api_conn_next before feeding again. */
enum api_feed api_conn_feed(struct api_conn *c);
void api_conn_next(struct api_conn *c);
enum api_method api_conn_method(const struct api_conn *c);
bool api_conn_keep_alive(const struct api_conn *c);

/* The response head and body into out (at most cap bytes): status line,
 * Server, Content-Type (when there is a body), Content-Length, Connection,
 * then extra (whole header lines, "" for none). Its length, or 0 if it did
 * not fit. */
size_t api_http_response(char *out, size_t cap, int status, const char *ctype, const char *body,
			 size_t body_len, bool keep_alive, const char *extra);
const char *api_http_reason(int status);

#endif
