/* Errors with codes (src/proto/errors.c): a refusal's words give the code the places
 * that send words only would have given, codes map to errnos and exit statuses and
 * back, and an error reply carries both. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "proto/errors.h"

static void classify(void **state)
{
    (void)state;
    static const struct {
        const char *words;
        proto_err_t code;
    } cases[] = {
        {"permission denied: only operators may drain or resume nodes", PROTO_E_DENIED},
        {"job 12: not yours", PROTO_E_DENIED},
        {"job 999 does not exist", PROTO_E_NOT_FOUND},
        {"unknown node 'n9'", PROTO_E_NOT_FOUND},
        {"cannot save: no space left on device", PROTO_E_CANNOT_SAVE},
        {"the database refused the change: the state is as it was", PROTO_E_CANNOT_SAVE},
        {"job 3 has already ended", PROTO_E_STATE},
        {"too many jobs: MaxJobsPerUser is 10", PROTO_E_LIMIT},
        {"out of memory", PROTO_E_INTERNAL},
        /* a wrong request, even one that says "unknown" of something else */
        {"unknown state (use PD, R, RS or CG, or PENDING, RUNNING...)", PROTO_E_INVALID},
        {"the working directory must be an absolute path", PROTO_E_INVALID},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        proto_err_t got = proto_err_classify(cases[i].words);
        if (got != cases[i].code)
            fail_msg("'%s': %s, not %s", cases[i].words, proto_err_name(got),
                     proto_err_name(cases[i].code));
    }
    assert_int_equal(proto_err_classify(NULL), PROTO_E_INTERNAL);
}

static void round_trips(void **state)
{
    (void)state;
    int exits[32] = {0};
    for (int e = PROTO_E_NONE + 1; e < PROTO_E_COUNT; e++) {
        const char *name = proto_err_name((proto_err_t)e);
        assert_non_null(name);
        assert_int_equal(proto_err_parse(name), e);
        int rc = proto_err_errno((proto_err_t)e);
        assert_true(rc < 0);
        assert_int_equal(proto_err_of_errno(rc), e);
        int x = proto_err_exit((proto_err_t)e);
        assert_true(x == 1 || (x >= 20 && x < 32)); /* not resize's 2 and 3 */
        assert_int_equal(exits[x]++, 0);            /* each its own status */
    }
    assert_int_equal(proto_err_errno(PROTO_E_TRY_LATER), -EBUSY); /* retryable, as before */
    assert_int_equal(proto_err_parse("too_many_connections"), PROTO_E_LIMIT);
    assert_int_equal(proto_err_parse("from a newer server"), PROTO_E_INTERNAL);
    assert_int_equal(proto_err_of_errno(-ECONNREFUSED), PROTO_E_NONE);
}

static void reply_has_both(void **state)
{
    (void)state;
    json_t *r = proto_err_reply(PROTO_E_NONE, "permission denied: not yours");
    assert_non_null(r);
    assert_true(json_is_false(json_object_get(r, "ok")));
    assert_string_equal(json_string_value(json_object_get(r, "code")), "denied");
    assert_string_equal(json_string_value(json_object_get(r, "error")),
                        "permission denied: not yours");
    json_decref(r);
    r = proto_err_reply(PROTO_E_TRY_LATER, "the array is being made");
    assert_string_equal(json_string_value(json_object_get(r, "code")), "try_later");
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify),
        cmocka_unit_test(round_trips),
        cmocka_unit_test(reply_has_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
