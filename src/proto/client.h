/* client: a blocking protocol client for the `ductile` command (one request, one
 * reply; or a stream of messages for `ductile run`). */
#ifndef DUCTILE_CLIENT_H
#define DUCTILE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

typedef struct client client_t;

int client_open_unix(const char *path, client_t **out, char *err, size_t errlen);
/* TCP with AuthType=key (key != NULL) or AuthType=munge (key == NULL). */
int client_open_tcp(const char *host, int port, const uint8_t *key, const char *munge_socket,
                    client_t **out, char *err, size_t errlen);
int client_send(client_t *c, const json_t *msg, char *err, size_t errlen);
/* Next message, waiting at most timeout seconds (< 0: forever). */
int client_recv(client_t *c, json_t **msg, double timeout, char *err, size_t errlen);
/* Send a request and wait for its reply. A reply {"ok": false, "code", "error"} becomes
 * the code's negative errno (errors.h: -EINVAL, -EPERM, -ESRCH, ...) with the
 * controller's words in err; -EBUSY for "try_later" (retryable). */
int client_call(client_t *c, const json_t *req, json_t **reply, double timeout, char *err,
                size_t errlen);
/* True for the failures after which a request may have been lost on the way, or the
 * controller is restarting: the connection broke, was refused or timed out. Only a
 * request that is safe to repeat (a submission with its key) may be retried on them. */
bool client_retryable(int rc);
/* True for a refusal the server sent (any code of errors.h but unreachable). */
bool client_refused(int rc);
/* A request to a server other than the controller that authenticates with key
 * (AuthType=key: a checkpoint agent). With *c NULL, connects first (kept in *c, NULL
 * again on failure). A connection refused or timed out says "cannot connect: ...";
 * one dropped at its first request, "(is the key file the server's key?)" after the
 * reason, since that is what a server with another key does. */
int client_call_keyed(client_t **c, const char *host, int port, const uint8_t *key,
                      const json_t *req, json_t **reply, double timeout, char *err,
                      size_t errlen);
int client_fd(const client_t *c);
void client_close(client_t *c);

#endif
