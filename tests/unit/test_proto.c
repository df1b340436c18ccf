/* The wire protocol: framing, authentication, replay protection, field checks. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/proto.h"

static const uint8_t KEY[PROTO_KEY_LEN] = "0123456789abcdef0123456789abcde";

typedef struct pair {
    proto_session_t srv, cli;
    proto_decoder_t dsrv, dcli; /* what each side has received */
} pair_t;

static void pair_init(pair_t *p, proto_auth_t auth, const uint8_t *cli_key)
{
    memset(p, 0, sizeof(*p));
    proto_session_init(&p->srv, auth, PROTO_ROLE_SERVER, KEY);
    proto_session_init(&p->cli, auth, PROTO_ROLE_CLIENT, cli_key);
    uint8_t *f;
    size_t n;
    assert_int_equal(proto_hello(&p->srv, &f, &n), 0);
    assert_int_equal(proto_decoder_feed(&p->dcli, f, n), 0);
    free(f);
    json_t *m;
    char err[256];
    assert_int_equal(proto_decoder_next(&p->dcli, &p->cli, &m, err, sizeof(err)), 0);
    assert_true(p->cli.have_nonce);
    assert_memory_equal(p->cli.nonce, p->srv.nonce, PROTO_NONCE_LEN);
}

static void pair_free(pair_t *p)
{
    proto_decoder_free(&p->dsrv);
    proto_decoder_free(&p->dcli);
}

static uint8_t *enc(proto_session_t *ss, const char *json, size_t *n)
{
    json_t *m = json_loads(json, 0, NULL);
    uint8_t *f;
    assert_int_equal(proto_encode(ss, m, &f, n), 0);
    json_decref(m);
    return f;
}

static void roundtrip_with_key(void **state)
{
    (void)state;
    pair_t p;
    pair_init(&p, PROTO_AUTH_KEY, KEY);
    size_t n;
    uint8_t *f = enc(&p.cli, "{\"type\":\"ping\",\"x\":1}", &n);
    /* fed one byte at a time: nothing until the frame is whole */
    json_t *m = NULL;
    char err[256];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), 0);
        proto_decoder_feed(&p.dsrv, f + i, 1);
    }
    assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), 1);
    const char *type;
    assert_int_equal(proto_type(m, &type, err, sizeof(err)), 0);
    assert_string_equal(type, "ping");
    json_decref(m);
    free(f);
    /* and back */
    f = enc(&p.srv, "{\"type\":\"pong\"}", &n);
    proto_decoder_feed(&p.dcli, f, n);
    assert_int_equal(proto_decoder_next(&p.dcli, &p.cli, &m, err, sizeof(err)), 1);
    json_decref(m);
    free(f);
    pair_free(&p);
}

static void rejects_wrong_key_tamper_replay_reflection(void **state)
{
    (void)state;
    char err[256];
    json_t *m;
    size_t n;
    /* wrong key */
    uint8_t other[PROTO_KEY_LEN] = {1};
    pair_t p;
    pair_init(&p, PROTO_AUTH_KEY, other);
    uint8_t *f = enc(&p.cli, "{\"type\":\"ping\"}", &n);
    proto_decoder_feed(&p.dsrv, f, n);
    assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), -EACCES);
    assert_non_null(strstr(err, "authentication failed"));
    free(f);
    pair_free(&p);
    /* tampered payload */
    pair_init(&p, PROTO_AUTH_KEY, KEY);
    f = enc(&p.cli, "{\"type\":\"cancel\",\"job\":1}", &n);
    f[n - 2] = '2';
    proto_decoder_feed(&p.dsrv, f, n);
    assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), -EACCES);
    free(f);
    pair_free(&p);
    /* replay of a genuine frame */
    pair_init(&p, PROTO_AUTH_KEY, KEY);
    f = enc(&p.cli, "{\"type\":\"cancel\",\"job\":1}", &n);
    proto_decoder_feed(&p.dsrv, f, n);
    proto_decoder_feed(&p.dsrv, f, n);
    assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), 1);
    json_decref(m);
    assert_int_equal(proto_decoder_next(&p.dsrv, &p.srv, &m, err, sizeof(err)), -EPROTO);
    assert_non_null(strstr(err, "out of sequence"));
    /* the same frame on another connection (another nonce) */
    pair_t q;
    pair_init(&q, PROTO_AUTH_KEY, KEY);
    proto_decoder_feed(&q.dsrv, f, n);
    assert_int_equal(proto_decoder_next(&q.dsrv, &q.srv, &m, err, sizeof(err)), -EACCES);
    pair_free(&q);
    /* reflection: the client's own frame sent back to it */
    proto_decoder_feed(&p.dcli, f, n);
    assert_int_equal(proto_decoder_next(&p.dcli, &p.cli, &m, err, sizeof(err)), -EACCES);
    free(f);
    pair_free(&p);
}

static void rejects_malformed(void **state)
{
    (void)state;
    char err[256];
    json_t *m;
    proto_session_t ss;
    proto_decoder_t d = {0};
    proto_session_init(&ss, PROTO_AUTH_NONE, PROTO_ROLE_SERVER, NULL);
    proto_decoder_feed(&d, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    assert_int_equal(proto_decoder_next(&d, &ss, &m, err, sizeof(err)), -EPROTO);
    assert_non_null(strstr(err, "magic"));
    proto_decoder_free(&d);
    /* oversized length */
    uint8_t h[PROTO_HDR_LEN] = {0x44, 0x43, 0x54, 0x31, 0x7f, 0xff, 0xff, 0xff};
    ss.max_payload = 1024;
    proto_decoder_feed(&d, h, sizeof(h));
    assert_int_equal(proto_decoder_next(&d, &ss, &m, err, sizeof(err)), -EMSGSIZE);
    proto_decoder_free(&d);
    /* valid frame, payload not an object */
    proto_session_init(&ss, PROTO_AUTH_NONE, PROTO_ROLE_SERVER, NULL);
    proto_session_t cli;
    proto_session_init(&cli, PROTO_AUTH_NONE, PROTO_ROLE_CLIENT, NULL);
    json_t *arr = json_pack("[i]", 1);
    uint8_t *f;
    size_t n;
    assert_int_equal(proto_encode(&cli, arr, &f, &n), 0);
    json_decref(arr);
    proto_decoder_feed(&d, f, n);
    assert_int_equal(proto_decoder_next(&d, &ss, &m, err, sizeof(err)), -EPROTO);
    free(f);
    proto_decoder_free(&d);
    /* an unsolicited hello on the server side */
    proto_session_t s2;
    proto_session_init(&s2, PROTO_AUTH_KEY, PROTO_ROLE_SERVER, KEY);
    assert_int_equal(proto_hello(&s2, &f, &n), 0);
    proto_decoder_feed(&d, f, n);
    assert_int_equal(proto_decoder_next(&d, &ss, &m, err, sizeof(err)), -EPROTO);
    free(f);
    proto_decoder_free(&d);
}

/* A NUL inside a string is valid JSON: the frame decodes, and the field's accessor
 * refuses it with an error the server replies with; the connection stays (it used to
 * be dropped as "not a JSON object"). */
static void nul_in_string_decodes(void **state)
{
    (void)state;
    char err[256];
    json_t *m = NULL;
    proto_session_t srv, cli;
    proto_decoder_t d = {0};
    proto_session_init(&srv, PROTO_AUTH_NONE, PROTO_ROLE_SERVER, NULL);
    proto_session_init(&cli, PROTO_AUTH_NONE, PROTO_ROLE_CLIENT, NULL);
    const char payload[] = "{\"type\":\"queue\",\"user\":\"ro\\u0000ot\"}";
    uint8_t h[PROTO_HDR_LEN] = {0x44, 0x43, 0x54, 0x31, 0, 0, 0, sizeof(payload) - 1};
    h[15] = 1; /* seq 1 */
    proto_decoder_feed(&d, h, sizeof(h));
    proto_decoder_feed(&d, payload, sizeof(payload) - 1);
    assert_int_equal(proto_decoder_next(&d, &srv, &m, err, sizeof(err)), 1);
    const char *s;
    assert_int_equal(proto_str(m, "user", 64, &s, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "field 'user' contains a NUL byte");
    json_decref(m);
    /* the next frame on the same stream is read as usual */
    size_t n;
    uint8_t *f = enc(&cli, "{\"type\":\"status\"}", &n);
    f[15] = 2;
    proto_decoder_feed(&d, f, n);
    free(f);
    assert_int_equal(proto_decoder_next(&d, &srv, &m, err, sizeof(err)), 1);
    assert_string_equal(json_string_value(json_object_get(m, "type")), "status");
    json_decref(m);
    proto_decoder_free(&d);
}

static void field_checks(void **state)
{
    (void)state;
    char err[256];
    json_t *m = json_loads("{\"type\":\"submit\",\"nodes\":4,\"name\":\"abc\",\"bad\":\"x\\u0000y\","
                           "\"f\":1.5,\"b\":true,\"arr\":[\"a\",\"b\"],\"big\":99999999999}",
                           JSON_ALLOW_NUL, NULL);
    assert_non_null(m);
    int64_t i;
    const char *s;
    double d;
    bool b;
    const json_t *a;
    assert_int_equal(proto_int(m, "nodes", 1, 100, &i, err, sizeof(err)), 0);
    assert_int_equal(i, 4);
    assert_int_equal(proto_int(m, "big", 1, 1000, &i, err, sizeof(err)), -ERANGE);
    assert_int_equal(proto_int(m, "name", 1, 1000, &i, err, sizeof(err)), -EINVAL);
    assert_int_equal(proto_int(m, "missing", 1, 1000, &i, err, sizeof(err)), -EINVAL);
    assert_int_equal(proto_int_opt(m, "missing", 1, 1000, 7, &i, err, sizeof(err)), 0);
    assert_int_equal(i, 7);
    assert_int_equal(proto_str(m, "name", 3, &s, err, sizeof(err)), 0);
    assert_int_equal(proto_str(m, "name", 2, &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(proto_str(m, "bad", 100, &s, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "NUL"));
    assert_int_equal(proto_num_opt(m, "f", 0, 2, 0, &d, err, sizeof(err)), 0);
    assert_true(d == 1.5);
    assert_int_equal(proto_bool_opt(m, "b", false, &b, err, sizeof(err)), 0);
    assert_true(b);
    assert_int_equal(proto_strarray_opt(m, "arr", 2, 10, &a, err, sizeof(err)), 0);
    assert_int_equal(proto_strarray_opt(m, "arr", 1, 10, &a, err, sizeof(err)), -EINVAL);
    json_decref(m);
}

/* Batch scripts are bytes: UTF-8 goes as a string (what older peers read), anything
 * else as base64, and both come back exactly (issue 7, defect 11). */
static void script_bytes(void **state)
{
    (void)state;
    const char *scripts[] = {"#!/bin/sh\necho caf\xc3\xa9\n", "#!/bin/sh\n# \xff\xfe\xc3\x28\n",
                             "\x80", "ab\xe2\x82"};
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
        json_t *m = json_object();
        assert_int_equal(proto_set_bytes(m, "script", scripts[i]), 0);
        assert_true((json_object_get(m, "script") != NULL) == (i == 0));
        /* through the encoder's text form, as on the wire */
        char *text = json_dumps(m, JSON_COMPACT);
        assert_non_null(text);
        json_t *back = json_loads(text, 0, NULL);
        assert_non_null(back);
        char *out = NULL, err[128];
        assert_int_equal(proto_bytes(back, "script", 1024, &out, err, sizeof(err)), 0);
        assert_string_equal(out, scripts[i]);
        free(out);
        size_t n = strlen(scripts[i]);
        if (n > 1) { /* one byte above the limit */
            assert_true(proto_bytes(back, "script", n - 1, &out, err, sizeof(err)) < 0);
            assert_null(out);
        }
        free(text);
        json_decref(back);
        json_decref(m);
    }
    char *out = NULL, err[128];
    json_t *m = json_pack("{s:s}", "script_b64", "AGE="); /* "\0a": a NUL byte */
    assert_true(proto_bytes(m, "script", 1024, &out, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "NUL"));
    json_decref(m);
    m = json_pack("{s:s}", "script_b64", "not base64!");
    assert_true(proto_bytes(m, "script", 1024, &out, err, sizeof(err)) < 0);
    json_decref(m);
    m = json_object();
    assert_true(proto_bytes(m, "script", 1024, &out, err, sizeof(err)) < 0); /* missing */
    json_decref(m);
}

static void key_files(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[4096], err[256];
    snprintf(path, sizeof(path), "%s/key", dir);
    assert_int_equal(proto_key_create(path, err, sizeof(err)), 0);
    assert_true(proto_key_create(path, err, sizeof(err)) < 0); /* never overwritten */
    uint8_t k[PROTO_KEY_LEN];
    assert_int_equal(proto_key_load(path, k, err, sizeof(err)), 0);
    chmod(path, 0644);
    assert_int_equal(proto_key_load(path, k, err, sizeof(err)), -EPERM);
    tu_rmtree(dir);
    free(dir);
}

/* An application's limits: absent fields are -1, bad ones refused, present ones kept */
static void app_limits(void **state)
{
    (void)state;
    char err[128];
    proto_limits_t l;
    json_t *m = json_pack("{s:i,s:f}", "max", 4, "interval", 2.5);
    assert_int_equal(proto_limits(m, &l, err, sizeof(err)), 0);
    assert_int_equal(l.min, -1);
    assert_int_equal(l.max, 4);
    assert_int_equal(l.preferred, -1);
    assert_true(l.interval == 2.5);
    json_t *back = proto_limits_json(&l);
    assert_int_equal(json_object_size(back), 2);
    assert_int_equal(json_integer_value(json_object_get(back, "max")), 4);
    json_decref(back);
    json_decref(m);
    m = json_pack("{s:i}", "min", -3);
    assert_int_not_equal(proto_limits(m, &l, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "min"));
    json_decref(m);
    m = json_pack("{s:s}", "preferred", "two");
    assert_int_not_equal(proto_limits(m, &l, err, sizeof(err)), 0);
    json_decref(m);
    m = json_pack("{s:f}", "interval", 1e9);
    assert_int_not_equal(proto_limits(m, &l, err, sizeof(err)), 0);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip_with_key),
        cmocka_unit_test(rejects_wrong_key_tamper_replay_reflection),
        cmocka_unit_test(rejects_malformed),
        cmocka_unit_test(nul_in_string_decodes),
        cmocka_unit_test(field_checks),
        cmocka_unit_test(key_files),
        cmocka_unit_test(script_bytes),
        cmocka_unit_test(app_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
