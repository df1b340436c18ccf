#include "proto.h"

#include "b64.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

void proto_session_init(proto_session_t *ss, proto_auth_t auth, proto_role_t role,
                        const uint8_t *key)
{
    memset(ss, 0, sizeof(*ss));
    ss->auth = auth;
    ss->role = role;
    if (key)
        memcpy(ss->key, key, PROTO_KEY_LEN);
    ss->max_payload = PROTO_MAX_PAYLOAD;
}

/* MAC over nonce | sender role | header without mac | payload. */
static void mac(const proto_session_t *ss, int sender, const uint8_t *hdr, const uint8_t *payload,
                size_t n, uint8_t out[32])
{
    crypto_auth_hmacsha256_state st;
    uint8_t r = (uint8_t)sender;
    crypto_auth_hmacsha256_init(&st, ss->key, PROTO_KEY_LEN);
    crypto_auth_hmacsha256_update(&st, ss->nonce, PROTO_NONCE_LEN);
    crypto_auth_hmacsha256_update(&st, &r, 1);
    crypto_auth_hmacsha256_update(&st, hdr, 16);
    crypto_auth_hmacsha256_update(&st, payload, n);
    crypto_auth_hmacsha256_final(&st, out);
}

static int frame(proto_session_t *ss, const char *payload, size_t n, uint64_t seq, bool sign,
                 uint8_t **out, size_t *len)
{
    if (n > PROTO_MAX_PAYLOAD)
        return -EMSGSIZE;
    uint8_t *f = malloc(PROTO_HDR_LEN + n);
    if (!f)
        return -ENOMEM;
    put32(f, PROTO_MAGIC);
    put32(f + 4, (uint32_t)n);
    put64(f + 8, seq);
    memcpy(f + PROTO_HDR_LEN, payload, n);
    if (sign)
        mac(ss, ss->role, f, f + PROTO_HDR_LEN, n, f + 16);
    else
        memset(f + 16, 0, 32);
    *out = f;
    *len = PROTO_HDR_LEN + n;
    return 0;
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[b[i] >> 4];
        out[2 * i + 1] = hx[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int from_hex(const char *s, uint8_t *b, size_t n)
{
    if (strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        b[i] = (uint8_t)v;
    }
    return 0;
}

int proto_hello(proto_session_t *ss, uint8_t **out, size_t *len)
{
    if (sodium_init() < 0)
        return -EIO;
    randombytes_buf(ss->nonce, PROTO_NONCE_LEN);
    ss->have_nonce = true;
    char hex[2 * PROTO_NONCE_LEN + 1];
    to_hex(ss->nonce, PROTO_NONCE_LEN, hex);
    const char *mode = ss->auth == PROTO_AUTH_MUNGE ? "munge" : ss->auth == PROTO_AUTH_KEY ? "key" : "none";
    char payload[160];
    int n = snprintf(payload, sizeof(payload), "{\"type\":\"hello\",\"nonce\":\"%s\",\"auth\":\"%s\"}",
                     hex, mode);
    return frame(ss, payload, (size_t)n, 0, false, out, len);
}

int proto_encode(proto_session_t *ss, const json_t *msg, uint8_t **out, size_t *len)
{
    if (ss->auth != PROTO_AUTH_NONE && !ss->have_nonce)
        return -EAGAIN; /* a client must have the hello first */
    char *payload = json_dumps(msg, JSON_COMPACT);
    if (!payload)
        return -ENOMEM;
    int rc = frame(ss, payload, strlen(payload), ss->sent + 1, ss->auth == PROTO_AUTH_KEY, out, len);
    free(payload);
    if (rc == 0)
        ss->sent++;
    return rc;
}

int proto_decoder_feed(proto_decoder_t *d, const void *data, size_t n)
{
    if (n == 0)
        return 0;
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        uint8_t *nb = realloc(d->buf, cap);
        if (!nb)
            return -ENOMEM;
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, data, n);
    d->len += n;
    return 0;
}

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

static int parse_hello(proto_session_t *ss, json_t *msg, char *err, size_t errlen)
{
    const char *type, *nonce;
    if (proto_type(msg, &type, err, errlen) < 0 || strcmp(type, "hello"))
        return FAIL(-EPROTO, "expected a hello first");
    if (proto_str(msg, "nonce", 2 * PROTO_NONCE_LEN, &nonce, err, errlen) < 0 ||
        from_hex(nonce, ss->nonce, PROTO_NONCE_LEN) < 0)
        return FAIL(-EPROTO, "bad nonce in hello");
    ss->have_nonce = true;
    return 0;
}

int proto_decoder_next(proto_decoder_t *d, proto_session_t *ss, json_t **msg, char *err,
                       size_t errlen)
{
    for (;;) {
        *msg = NULL;
        const uint8_t *h = d->buf;
        /* Reject garbage as soon as its first four bytes are in. */
        if (d->len >= 4 && get32(h) != PROTO_MAGIC)
            return FAIL(-EPROTO, "not a ductile frame (bad magic)");
        if (d->len < PROTO_HDR_LEN)
            return 0;
        uint32_t n = get32(h + 4);
        if (n > ss->max_payload)
            return FAIL(-EMSGSIZE, "frame of %u bytes exceeds the limit of %zu", n, ss->max_payload);
        if (d->len < PROTO_HDR_LEN + (size_t)n)
            return 0;
        uint64_t seq = get64(h + 8);
        const uint8_t *payload = h + PROTO_HDR_LEN;
        bool hello = seq == 0;
        if (hello && (ss->role != PROTO_ROLE_CLIENT || ss->have_nonce))
            return FAIL(-EPROTO, "unexpected hello frame");
        if (!hello) {
            if (ss->auth != PROTO_AUTH_NONE && !ss->have_nonce)
                return FAIL(-EPROTO, "frame before the hello");
            if (seq != ss->received + 1)
                return FAIL(-EPROTO, "frame %llu out of sequence (expected %llu): replayed?",
                            (unsigned long long)seq, (unsigned long long)ss->received + 1);
            if (ss->auth == PROTO_AUTH_KEY) {
                uint8_t want[32];
                int peer = ss->role == PROTO_ROLE_CLIENT ? PROTO_ROLE_SERVER : PROTO_ROLE_CLIENT;
                mac(ss, peer, h, payload, n, want);
                if (sodium_memcmp(want, h + 16, 32) != 0)
                    return FAIL(-EACCES, "frame authentication failed (wrong cluster key?)");
            }
        }
        json_error_t jerr;
        /* A NUL inside a string is valid JSON: the message is read, and the accessors
         * (proto_str_opt...) refuse the field with an error the daemon replies with,
         * instead of dropping the connection over one bad field. */
        json_t *m = json_loadb((const char *)payload, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                               &jerr);
        size_t used = PROTO_HDR_LEN + (size_t)n;
        memmove(d->buf, d->buf + used, d->len - used);
        d->len -= used;
        if (!m || !json_is_object(m)) {
            json_decref(m);
            return FAIL(-EPROTO, "payload is not a JSON object%s%s", m ? "" : ": ",
                        m ? "" : jerr.text);
        }
        if (hello) {
            int rc = parse_hello(ss, m, err, errlen);
            json_decref(m);
            if (rc < 0)
                return rc;
            continue;
        }
        ss->received = seq;
        *msg = m;
        return 1;
    }
}

void proto_decoder_free(proto_decoder_t *d)
{
    free(d->buf);
    d->buf = NULL;
    d->len = d->cap = 0;
}

/* --- keys --- */

int proto_key_load(const char *path, uint8_t key[PROTO_KEY_LEN], char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FAIL(-errno, "cannot read the cluster key %s: %s", path, strerror(errno));
    struct stat st;
    char buf[2 * PROTO_KEY_LEN + 2];
    if (fstat(fd, &st) < 0 || (st.st_mode & 077)) {
        close(fd);
        return FAIL(-EPERM, "cluster key %s must be readable by its owner only (chmod 600)", path);
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 2 * PROTO_KEY_LEN)
        return FAIL(-EINVAL, "cluster key %s is too short", path);
    buf[2 * PROTO_KEY_LEN] = '\0';
    if (from_hex(buf, key, PROTO_KEY_LEN) < 0)
        return FAIL(-EINVAL, "cluster key %s is not 64 hex characters", path);
    return 0;
}

int proto_key_parse(const char *hex, uint8_t key[PROTO_KEY_LEN])
{
    if (!hex || strlen(hex) != 2 * PROTO_KEY_LEN || from_hex(hex, key, PROTO_KEY_LEN) < 0)
        return -EINVAL;
    return 0;
}

int proto_key_create(const char *path, char *err, size_t errlen)
{
    if (sodium_init() < 0)
        return FAIL(-EIO, "libsodium failed to initialise");
    uint8_t key[PROTO_KEY_LEN];
    char hex[2 * PROTO_KEY_LEN + 2];
    randombytes_buf(key, sizeof(key));
    to_hex(key, PROTO_KEY_LEN, hex);
    strcat(hex, "\n");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return FAIL(-errno, "cannot create the cluster key %s: %s", path, strerror(errno));
    ssize_t w = write(fd, hex, strlen(hex));
    close(fd);
    sodium_memzero(key, sizeof(key));
    if (w != (ssize_t)strlen(hex))
        return FAIL(-EIO, "cannot write the cluster key %s", path);
    return 0;
}

/* --- field access --- */

int proto_type(const json_t *msg, const char **type, char *err, size_t errlen)
{
    return proto_str(msg, "type", 64, type, err, errlen);
}

int proto_str_opt(const json_t *msg, const char *key, size_t maxlen, const char *def,
                  const char **out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_string(v))
        return FAIL(-EINVAL, "field '%s' must be a string", key);
    size_t n = json_string_length(v);
    if (n > maxlen)
        return FAIL(-EINVAL, "field '%s' is longer than %zu bytes", key, maxlen);
    if (strlen(json_string_value(v)) != n)
        return FAIL(-EINVAL, "field '%s' contains a NUL byte", key);
    *out = json_string_value(v);
    return 0;
}

int proto_str(const json_t *msg, const char *key, size_t maxlen, const char **out, char *err,
              size_t errlen)
{
    int rc = proto_str_opt(msg, key, maxlen, NULL, out, err, errlen);
    if (rc == 0 && (!*out || !**out))
        return FAIL(-EINVAL, "field '%s' is required", key);
    return rc;
}

int proto_set_bytes(json_t *msg, const char *key, const char *bytes)
{
    json_t *v = json_string(bytes); /* NULL when not valid UTF-8 */
    if (v)
        return json_object_set_new(msg, key, v) < 0 ? -ENOMEM : 0;
    size_t n = strlen(bytes);
    char *enc = malloc(b64_encoded_len(n) + 1), k[128];
    if (!enc)
        return -ENOMEM;
    b64_encode(bytes, n, enc);
    snprintf(k, sizeof(k), "%s_b64", key);
    int rc = json_object_set_new(msg, k, json_string(enc)) < 0 ? -ENOMEM : 0;
    free(enc);
    return rc;
}

int proto_bytes(const json_t *msg, const char *key, size_t maxlen, char **out, char *err,
                size_t errlen)
{
    char k[128];
    snprintf(k, sizeof(k), "%s_b64", key);
    const char *text;
    *out = NULL;
    if (!json_object_get(msg, k)) {
        int rc = proto_str(msg, key, maxlen, &text, err, errlen);
        if (rc < 0)
            return rc;
        return (*out = strdup(text)) ? 0 : FAIL(-ENOMEM, "out of memory");
    }
    int rc = proto_str(msg, k, b64_encoded_len(maxlen), &text, err, errlen);
    if (rc < 0)
        return rc;
    char *buf = malloc(strlen(text) / 4 * 3 + 1);
    if (!buf)
        return FAIL(-ENOMEM, "out of memory");
    long n = b64_decode(text, buf);
    if (n < 0) {
        free(buf);
        return FAIL(-EINVAL, "field '%s' is not base64", k);
    }
    if (n == 0 || (size_t)n > maxlen || memchr(buf, 0, (size_t)n)) {
        free(buf);
        return FAIL(-EINVAL, "field '%s': %s", k,
                    n == 0 ? "empty" : (size_t)n > maxlen ? "too long" : "contains a NUL byte");
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

int proto_int_opt(const json_t *msg, const char *key, int64_t lo, int64_t hi, int64_t def,
                  int64_t *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(v))
        return FAIL(-EINVAL, "field '%s' must be an integer", key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return FAIL(-ERANGE, "field '%s' = %lld out of range [%lld, %lld]", key, (long long)x,
                    (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

int proto_int(const json_t *msg, const char *key, int64_t lo, int64_t hi, int64_t *out,
              char *err, size_t errlen)
{
    if (!json_object_get(msg, key))
        return FAIL(-EINVAL, "field '%s' is required", key);
    return proto_int_opt(msg, key, lo, hi, 0, out, err, errlen);
}

int proto_num_opt(const json_t *msg, const char *key, double lo, double hi, double def,
                  double *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v))
        return FAIL(-EINVAL, "field '%s' must be a number", key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return FAIL(-ERANGE, "field '%s' = %g out of range [%g, %g]", key, x, lo, hi);
    *out = x;
    return 0;
}

int proto_bool_opt(const json_t *msg, const char *key, bool def, bool *out, char *err,
                   size_t errlen)
{
    const json_t *v = json_object_get(msg, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v))
        return FAIL(-EINVAL, "field '%s' must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

int proto_strarray_opt(const json_t *msg, const char *key, size_t maxn, size_t maxlen,
                       const json_t **out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(msg, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return FAIL(-EINVAL, "field '%s' must be an array of strings", key);
    if (json_array_size(v) > maxn)
        return FAIL(-EINVAL, "field '%s' has more than %zu entries", key, maxn);
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e) || json_string_length(e) > maxlen ||
            strlen(json_string_value(e)) != json_string_length(e))
            return FAIL(-EINVAL, "field '%s'[%zu] must be a string of at most %zu bytes", key, i,
                        maxlen);
    }
    *out = v;
    return 0;
}

int proto_limits(const json_t *msg, proto_limits_t *out, char *err, size_t errlen)
{
    if (proto_int_opt(msg, "min", 0, 1 << 24, -1, &out->min, err, errlen) < 0 ||
        proto_int_opt(msg, "max", 0, 1 << 24, -1, &out->max, err, errlen) < 0 ||
        proto_int_opt(msg, "preferred", 0, 1 << 24, -1, &out->preferred, err, errlen) < 0 ||
        proto_int_opt(msg, "survive", 0, 1, -1, &out->survive, err, errlen) < 0 ||
        proto_num_opt(msg, "interval", 0, 1e7, -1, &out->interval, err, errlen) < 0)
        return -EINVAL;
    return 0;
}

json_t *proto_limits_json(const proto_limits_t *l)
{
    json_t *x = json_object();
    if (l->min >= 0)
        json_object_set_new(x, "min", json_integer(l->min));
    if (l->max >= 0)
        json_object_set_new(x, "max", json_integer(l->max));
    if (l->preferred >= 0)
        json_object_set_new(x, "preferred", json_integer(l->preferred));
    if (l->interval >= 0)
        json_object_set_new(x, "interval", json_real(l->interval));
    if (l->survive >= 0)
        json_object_set_new(x, "survive", json_integer(l->survive));
    return x;
}
