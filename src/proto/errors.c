/* Errors with codes: names, errnos, exit statuses, and the classification of a
 * refusal given in words only (errors.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "errors.h"

static const struct {
    const char *name;
    int err;  /* negative errno */
    int exit; /* ductile's exit status */
} codes[PROTO_E_COUNT] = {
    [PROTO_E_NONE] = {NULL, 0, 0},
    [PROTO_E_INVALID] = {"invalid", -EINVAL, 1},
    [PROTO_E_DENIED] = {"denied", -EPERM, 20},
    [PROTO_E_NOT_FOUND] = {"not_found", -ESRCH, 21},
    [PROTO_E_STATE] = {"state", -EALREADY, 22},
    [PROTO_E_LIMIT] = {"limit", -EDQUOT, 23},
    [PROTO_E_TRY_LATER] = {"try_later", -EBUSY, 24},
    [PROTO_E_CANNOT_SAVE] = {"cannot_save", -ENOSPC, 25},
    [PROTO_E_INTERNAL] = {"internal", -EREMOTE, 26},
    [PROTO_E_UNREACHABLE] = {"unreachable", -EHOSTUNREACH, 27},
};

const char *proto_err_name(proto_err_t e)
{
    return e > PROTO_E_NONE && e < PROTO_E_COUNT ? codes[e].name : NULL;
}

proto_err_t proto_err_parse(const char *name)
{
    if (name && !strcmp(name, "too_many_connections")) /* conn.c's, older than the codes */
        return PROTO_E_LIMIT;
    for (int e = 1; name && e < PROTO_E_COUNT; e++)
        if (!strcmp(name, codes[e].name))
            return (proto_err_t)e;
    return PROTO_E_INTERNAL;
}

int proto_err_errno(proto_err_t e)
{
    return e > PROTO_E_NONE && e < PROTO_E_COUNT ? codes[e].err : -EREMOTE;
}

proto_err_t proto_err_of_errno(int rc)
{
    for (int e = 1; rc < 0 && e < PROTO_E_COUNT; e++)
        if (codes[e].err == rc)
            return (proto_err_t)e;
    return PROTO_E_NONE;
}

int proto_err_exit(proto_err_t e)
{
    return e > PROTO_E_NONE && e < PROTO_E_COUNT ? codes[e].exit : 1;
}

static bool starts(const char *s, const char *prefix)
{
    return !strncasecmp(s, prefix, strlen(prefix));
}

proto_err_t proto_err_classify(const char *w)
{
    if (!w)
        return PROTO_E_INTERNAL;
    /* "job 12: ..." names the object first */
    static const char *const not_found[] = {
        "no such ", "unknown job", "unknown node", "unknown account", "unknown user",
        "unknown partition", "unknown reservation", "unknown step", "not found",
        "does not exist", "no job ",
    };
    static const char *const state[] = {
        "already ", "is not running", "not running", "has ended", "has already",
        "is not pending", "not pending", "is not held", "is completing",
    };
    static const char *const limit[] = {
        "MaxJobs", "MaxSubmit", "MaxArraySize", "--max-submit", "MaxConnections",
        "too many ", "limit of ", "over its limit", "exceeds",
    };
    if (starts(w, "permission denied") || strstr(w, "not yours") || strstr(w, "only operators") ||
        strstr(w, "only root"))
        return PROTO_E_DENIED;
    if (starts(w, "cannot save") || starts(w, "cannot delete") || strstr(w, "no space left") ||
        strstr(w, "database refused"))
        return PROTO_E_CANNOT_SAVE;
    if (starts(w, "out of memory") || starts(w, "cannot read the database") ||
        strstr(w, "not loaded") || starts(w, "internal"))
        return PROTO_E_INTERNAL;
    for (size_t i = 0; i < sizeof(not_found) / sizeof(*not_found); i++)
        if (strstr(w, not_found[i]))
            return PROTO_E_NOT_FOUND;
    for (size_t i = 0; i < sizeof(limit) / sizeof(*limit); i++)
        if (strstr(w, limit[i]))
            return PROTO_E_LIMIT;
    for (size_t i = 0; i < sizeof(state) / sizeof(*state); i++)
        if (strstr(w, state[i]))
            return PROTO_E_STATE;
    return PROTO_E_INVALID;
}

json_t *proto_err_reply(proto_err_t code, const char *words)
{
    if (code == PROTO_E_NONE)
        code = proto_err_classify(words);
    return json_pack("{s:b,s:s,s:s}", "ok", 0, "code", proto_err_name(code), "error",
                     words ? words : "");
}
