/* Errors with codes (issue 35): every refusal the controller sends is
 * {"ok": false, "code": CODE, "error": WORDS}. The words are for people; the code is
 * for programs: the client returns it as a negative errno, `ductile` exits with its
 * status and prints it with --json (docs/protocol.md, "Errors"). */
#ifndef DUCTILE_ERRORS_H
#define DUCTILE_ERRORS_H

#include <jansson.h>

typedef enum proto_err {
    PROTO_E_NONE = 0,
    PROTO_E_INVALID,     /* the request is wrong: fix it */
    PROTO_E_DENIED,      /* not yours, or not an operator */
    PROTO_E_NOT_FOUND,   /* no such job, node, account, ... */
    PROTO_E_STATE,       /* not in this state: already ended, not running, ... */
    PROTO_E_LIMIT,       /* a limit or quota: fewer, or later */
    PROTO_E_TRY_LATER,   /* nothing done, not now: the same request later */
    PROTO_E_CANNOT_SAVE, /* the controller could not save it (a full disk) */
    PROTO_E_INTERNAL,    /* the controller's fault (out of memory) */
    PROTO_E_UNREACHABLE, /* client side: no controller answered */
    PROTO_E_COUNT
} proto_err_t;

/* "invalid", "denied", ...; NULL for PROTO_E_NONE */
const char *proto_err_name(proto_err_t e);
/* the code named so; PROTO_E_INTERNAL for a name this version does not know */
proto_err_t proto_err_parse(const char *name);
/* The code of a refusal's words, for the places that give only words: "permission
 * denied: ..." is denied, "cannot save ..." cannot_save, and so on; else invalid. */
proto_err_t proto_err_classify(const char *words);
/* The reply {"ok": false, "code", "error"}; code PROTO_E_NONE: classified from words. */
json_t *proto_err_reply(proto_err_t code, const char *words);
/* As a negative errno (client_call's return): -EINVAL, -EPERM, -ESRCH, -EALREADY,
 * -EDQUOT, -EBUSY, -ENOSPC, -EREMOTE, -EHOSTUNREACH. None of them is retryable but
 * -EBUSY (client_retryable). */
int proto_err_errno(proto_err_t e);
/* And back: PROTO_E_NONE for an errno that is none of these */
proto_err_t proto_err_of_errno(int rc);
/* The exit status of `ductile` for it: 1 invalid (and any other failure, as before the
 * codes), 20 denied, 21 not_found, 22 state, 23 limit, 24 try_later, 25 cannot_save,
 * 26 internal, 27 unreachable: above the small statuses commands give of their own
 * (`ductile resize`'s 2 and 3). */
int proto_err_exit(proto_err_t e);

#endif
