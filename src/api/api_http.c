// SPDX-License-Identifier: Apache-2.0
#include "api/api_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int on_message_begin(http_parser *p)
{
	struct api_conn *c = p->data;
	c->url_len = c->body_len = 0;
	c->url_long = c->body_long = false;
	c->expect_continue = c->continue_sent = false;
	c->partial = true;
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct api_conn *c = p->data;
	if (len > API_URL_MAX - c->url_len) {
		c->url_long = true;
		return 0;
	}
	memcpy(c->url + c->url_len, at, len);
	c->url_len += len;
	c->url[c->url_len] = '\0';
	return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct api_conn *c = p->data;
	c->hdr_expect = len == 6 && !strncasecmp(at, "expect", 6);
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct api_conn *c = p->data;
	if (c->hdr_expect && len == 12 && !strncasecmp(at, "100-continue", 12))
		c->expect_continue = true;
	return 0;
}

/* A declared length over the limit is refused before its bytes come. */
static int on_headers_complete(http_parser *p)
{
	struct api_conn *c = p->data;
	if ((p->flags & F_CONTENTLENGTH) && p->content_length > API_BODY_MAX)
		c->body_long = true;
	return c->body_long ? -1 : 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct api_conn *c = p->data;
	if (len > API_BODY_MAX - c->body_len) {
		c->body_long = true;
		return -1;
	}
	memcpy(c->body + c->body_len, at, len);
	c->body_len += len;
	c->body[c->body_len] = '\0';
	return 0;
}

/* One request at a time: the parser stops here until the answer is out. */
static int on_message_complete(http_parser *p)
{
	struct api_conn *c = p->data;
	c->complete = true;
	c->partial = false;
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings api_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

int api_conn_init(struct api_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->body = malloc(API_BODY_MAX + 1);
	if (!c->body)
		return -1;
	c->body[0] = '\0';
	http_parser_init(&c->p, HTTP_REQUEST);
	c->p.data = c;
	return 0;
}

void api_conn_free(struct api_conn *c)
{
	free(c->body);
	c->body = NULL;
}

enum api_feed api_conn_feed(struct api_conn *c)
{
	if (c->complete)
		return API_FEED_REQUEST;
	size_t n = http_parser_execute(&c->p, &api_settings, c->in, c->in_len);
	enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
	if (c->body_long)
		return API_FEED_TOO_LARGE;
	if (e != HPE_OK && e != HPE_PAUSED)
		return API_FEED_BAD;
	if (n > c->in_len)
		n = c->in_len;
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	return c->complete ? API_FEED_REQUEST : API_FEED_MORE;
}

void api_conn_next(struct api_conn *c)
{
	c->complete = false;
	http_parser_pause(&c->p, 0);
}

enum api_method api_conn_method(const struct api_conn *c)
{
	switch (c->p.method) {
	case HTTP_GET:
		return API_GET;
	case HTTP_PUT:
		return API_PUT;
	case HTTP_PATCH:
		return API_PATCH;
	default:
		return API_OTHER;
	}
}

bool api_conn_keep_alive(const struct api_conn *c)
{
	return http_should_keep_alive(&c->p);
}

const char *api_http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 204:
		return "No Content";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	default:
		return "Internal Server Error";
	}
}

size_t api_http_response(char *out, size_t cap, int status, const char *ctype, const char *body,
			 size_t body_len, bool keep_alive, const char *extra)
{
	int n = snprintf(out, cap,
			 "HTTP/1.1 %d %s\r\nServer: skiff API\r\n%s%s%sContent-Length: %zu\r\n"
			 "Connection: %s\r\n%s\r\n",
			 status, api_http_reason(status), body_len ? "Content-Type: " : "",
			 body_len ? ctype : "", body_len ? "\r\n" : "", body_len,
			 keep_alive ? "keep-alive" : "close", extra);
	if (n < 0 || (size_t)n >= cap || body_len > cap - (size_t)n)
		return 0;
	if (body_len)
		memcpy(out + n, body, body_len);
	return (size_t)n + body_len;
}
