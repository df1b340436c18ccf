/* proto: the wire protocol between the ductile command, the controller, the node
 * daemons and jobs (docs/protocol.md).
 *
 * A frame is a fixed header followed by a JSON object:
 *
 *   magic  u32  "DCT1"
 *   length u32  payload bytes (at most PROTO_MAX_PAYLOAD)
 *   seq    u64  the sender's frame counter on this connection, 1, 2, 3, ...
 *   mac    32 B HMAC-SHA256(key, nonce | sender role | magic | length | seq | payload)
 *
 * all integers big-endian. On TCP the accepting side first sends an unauthenticated
 * "hello" frame (seq 0) carrying a fresh random nonce; every later frame in either
 * direction is authenticated with the cluster key (AuthType=key) or the connection is
 * authenticated once by a MUNGE credential over the nonce (AuthType=munge). The nonce
 * binds frames to one connection and the sequence numbers to one position in it, so a
 * recorded frame cannot be replayed, reordered or reflected. On the local Unix socket
 * the kernel identifies the peer (SO_PEERCRED) and frames carry no MAC. */
#ifndef DUCTILE_PROTO_H
#define DUCTILE_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "errors.h"

#define PROTO_MAGIC 0x44435431u /* "DCT1" */
#define PROTO_HDR_LEN 48
#define PROTO_MAX_PAYLOAD (32u << 20)
#define PROTO_KEY_LEN 32
#define PROTO_NONCE_LEN 32
/* A waiting client (client.c) sends {"type":"keepalive"} after this long without
 * sending anything; servers (conn.c) drop it. A server's IdleTimeout must exceed it. */
#define PROTO_KEEPALIVE_SECONDS 60 /* = CONFIG_KEEPALIVE_SECONDS */

typedef enum proto_auth {
    PROTO_AUTH_NONE = 0, /* local socket: the kernel vouches for the peer */
    PROTO_AUTH_KEY,      /* every frame carries an HMAC with the cluster key */
    PROTO_AUTH_MUNGE,    /* a MUNGE credential over the nonce authenticates the connection */
} proto_auth_t;

typedef enum proto_role { PROTO_ROLE_CLIENT = 1, PROTO_ROLE_SERVER = 2 } proto_role_t;

/* The state of one end of one connection. */
typedef struct proto_session {
    proto_auth_t auth;
    proto_role_t role;              /* this end */
    uint8_t key[PROTO_KEY_LEN];     /* AuthType=key */
    uint8_t nonce[PROTO_NONCE_LEN]; /* from the hello */
    bool have_nonce;
    uint64_t sent, received;        /* last sequence numbers */
    size_t max_payload;             /* what this end accepts; <= PROTO_MAX_PAYLOAD */
} proto_session_t;

void proto_session_init(proto_session_t *ss, proto_auth_t auth, proto_role_t role,
                        const uint8_t *key);
/* Server side: pick a fresh nonce and build the hello frame (malloc'd). */
int proto_hello(proto_session_t *ss, uint8_t **frame, size_t *len);

/* Encode msg as the next frame of this end (malloc'd). */
int proto_encode(proto_session_t *ss, const json_t *msg, uint8_t **frame, size_t *len);

/* An incremental decoder: feed what the socket gave, take out whole messages. */
typedef struct proto_decoder {
    uint8_t *buf;
    size_t len, cap;
} proto_decoder_t;

int proto_decoder_feed(proto_decoder_t *d, const void *data, size_t n);
/* 1: *msg is the next message (caller json_decref's it); 0: need more bytes;
 * < 0: protocol error (bad magic, oversized, bad MAC, replay, not a JSON object):
 * the connection must be closed. A client's decoder consumes the hello itself. */
int proto_decoder_next(proto_decoder_t *d, proto_session_t *ss, json_t **msg, char *err,
                       size_t errlen);
void proto_decoder_free(proto_decoder_t *d);

/* Cluster keys: 64 hex characters in a file that only its owner may read. */
int proto_key_load(const char *path, uint8_t key[PROTO_KEY_LEN], char *err, size_t errlen);
int proto_key_create(const char *path, char *err, size_t errlen);
/* A key given as its 64 hex characters (a message's): 0, or -EINVAL. */
int proto_key_parse(const char *hex, uint8_t key[PROTO_KEY_LEN]);

/* --- checked access to message fields: every field of every message goes through
 * these, so a malformed message is an error reply, never a crash. --- */

/* Required string of 1..maxlen bytes without NUL. */
int proto_str(const json_t *msg, const char *key, size_t maxlen, const char **out, char *err,
              size_t errlen);
/* Optional string: *out = def when absent. */
int proto_str_opt(const json_t *msg, const char *key, size_t maxlen, const char *def,
                  const char **out, char *err, size_t errlen);
/* Integer in [lo, hi]; optional ones take def when absent. */
int proto_int(const json_t *msg, const char *key, int64_t lo, int64_t hi, int64_t *out,
              char *err, size_t errlen);
int proto_int_opt(const json_t *msg, const char *key, int64_t lo, int64_t hi, int64_t def,
                  int64_t *out, char *err, size_t errlen);
/* Number (integer or real) in [lo, hi]. */
int proto_num_opt(const json_t *msg, const char *key, double lo, double hi, double def,
                  double *out, char *err, size_t errlen);
int proto_bool_opt(const json_t *msg, const char *key, bool def, bool *out, char *err,
                   size_t errlen);
/* What a malleable application accepts (dt_set_size_limits, dt_set_offer_interval),
 * as the node daemon forwards it (app_limits, attach) and the controller takes it:
 * min, max, preferred nodes in [0, 2^24], interval seconds in [0, 1e7] and survive
 * (dt_set_survive_loss: 0 or 1); -1 for an absent one. proto_limits_json gives back
 * the present ones. */
typedef struct proto_limits {
    int64_t min, max, preferred, survive;
    double interval;
} proto_limits_t;
int proto_limits(const json_t *msg, proto_limits_t *out, char *err, size_t errlen);
json_t *proto_limits_json(const proto_limits_t *l);
/* Array of at most maxn strings of at most maxlen bytes each (optional: NULL, 0). */
int proto_strarray_opt(const json_t *msg, const char *key, size_t maxn, size_t maxlen,
                       const json_t **out, char *err, size_t errlen);
/* Bytes that may not be UTF-8 (a batch script): set as the string `key` when they are
 * valid UTF-8 (what older peers read), else as base64 in `key`_b64. -ENOMEM on failure. */
int proto_set_bytes(json_t *msg, const char *key, const char *bytes);
/* Reads what proto_set_bytes wrote: `key` or `key`_b64, 1..maxlen bytes without NUL.
 * *out is a new NUL-terminated copy the caller frees. */
int proto_bytes(const json_t *msg, const char *key, size_t maxlen, char **out, char *err,
                size_t errlen);
/* The message type ("type" field). */
int proto_type(const json_t *msg, const char **type, char *err, size_t errlen);

#endif
