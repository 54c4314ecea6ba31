/* hw_http.h — a tiny blocking HTTP/1.0 GET client for the CLI.
 *
 * Used to read the nodes' Prometheus endpoints (`hiwater metrics`,
 * `hiwater top`) and to talk to the Prometheus server `cluster up
 * --prometheus` starts (its readiness probe). HTTP/1.0 without keep-alive:
 * the server closes the connection when the body is complete, so the body
 * is everything after the header block. No chunked encoding, no redirects.
 */
#ifndef HW_HTTP_H
#define HW_HTTP_H
#include <netinet/in.h>

/* GET path (e.g. "/metrics", "/-/ready") from a within timeout_ms (the
 * whole exchange). On 0: *status is the HTTP status code and *body_out a
 * malloc'd NUL-terminated body (the caller frees it). Errors: -ECONNREFUSED
 * and other connect errors, -ETIMEDOUT, -EPROTO (no HTTP status line),
 * -ENOMEM, -EIO (the request could not be sent). */
int hw_http_get(struct sockaddr_in a, const char *path, int timeout_ms, int *status, char **body_out);

#endif
