/* libFuzzer target: arbitrary bytes into the frame decoder, on both sides of a
 * connection and with every authentication mode; every decoded message then goes
 * through the field accessors the daemons use. Nothing may crash or leak. */
#include <stdint.h>
#include <stdlib.h>

#include "proto/proto.h"

static void poke(const json_t *m)
{
    char err[128];
    const char *s;
    int64_t i;
    double d;
    bool b;
    const json_t *a;
    proto_type(m, &s, err, sizeof(err));
    proto_str_opt(m, "name", 256, NULL, &s, err, sizeof(err));
    proto_int_opt(m, "job", 1, INT64_MAX, 0, &i, err, sizeof(err));
    proto_num_opt(m, "time", 0, 1e9, 0, &d, err, sizeof(err));
    proto_bool_opt(m, "requeue", false, &b, err, sizeof(err));
    proto_strarray_opt(m, "env", 4096, 65536, &a, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t key[PROTO_KEY_LEN] = {7};
    for (int mode = 0; mode < 3; mode++)
        for (int role = 1; role <= 2; role++) {
            proto_session_t ss;
            proto_session_init(&ss, (proto_auth_t)mode, (proto_role_t)role, key);
            ss.max_payload = 1 << 20;
            proto_decoder_t d = {0};
            proto_decoder_feed(&d, data, size);
            json_t *m;
            char err[256];
            while (proto_decoder_next(&d, &ss, &m, err, sizeof(err)) == 1) {
                poke(m);
                json_decref(m);
            }
            proto_decoder_free(&d);
        }
    return 0;
}
