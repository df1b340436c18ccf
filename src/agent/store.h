/* The checkpoint agent's memory (level 1): per application, its versions, and per
 * version the node files this agent holds, each in a region registered with libfabric
 * so that the application's processes write (push) and read (pull) it one-sidedly.
 *
 * A version is open while its processes write it and complete once published; only a
 * complete version is ever offered for a restart, and the agent keeps the last
 * CKPTFILES_KEEP complete ones. A complete version is flushed to the file level (the
 * application's checkpoint directory, on the parallel file system) by a thread of its
 * own, in the layout libductile writes when no agent answers (docs/checkpointing.md). */
#ifndef DUCTILE_AGENT_STORE_H
#define DUCTILE_AGENT_STORE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "fabric.h"

/* An application is known by its checkpoint directory (absolute: DIR/APP of
 * dt_ckpt_init), which is also where its versions are flushed. */
#define STORE_APP_MAX 4096
#define STORE_SPARES 8
#define STORE_STOP_WAIT_MS 30000

/* A client's right to one node file's region for one transfer (seed 002's push: the
 * processes write it at a commit, read it at a restart): a registration of its own with
 * its own random key and only that access, given to that client alone and closed when
 * its transfer ends (store_revoke), when the version is published (no write after it) or
 * dropped. The region's own registration (afile_t.mr) is never open to peers. */
typedef struct grant {
    const void *owner; /* the client (its connection) */
    fab_mr_t *mr;
    struct grant *next;
} grant_t;

typedef struct afile {
    long file; /* the node file's number in the version */
    size_t len;
    char *buf;
    bool mapped; /* buf is an anonymous mapping (large regions), not malloc's */
    bool spilled; /* buf maps the node file on the file level (store_put: short of
                   * memory); it does not count in the store's bytes */
    fab_mr_t *mr; /* FAB_LOCAL: the agent's own transfers (pull mode) */
    grant_t *grants;
} afile_t;

typedef struct aver {
    long version;
    bool complete;
    int flushing;  /* 1 while its flush thread runs (its files must stay) */
    int flushed;   /* 1: on the file level; -errno: the flush failed */
    bool stale;    /* of another history (a run went back to an older version): never
                    * offered, its flush does not publish, dropped when nobody uses it */
    int readers;   /* clients reading it (between ck_get and ck_done): not dropped */
    bool said;     /* its failed flush is in the agent's log */
    bool told;     /* and was told to the application */
    long nfiles;   /* node files in the whole version (some may be other agents') */
    json_t *manifest;
    afile_t *files;
    int nheld;
} aver_t;

typedef struct app {
    char name[STORE_APP_MAX];
    bool release; /* its run ended without keeping: versions go once in the files */
    aver_t **v;
    int nv;
} app_t;

typedef struct store {
    fab_t *fab;
    app_t **apps;
    int napps;
    size_t bytes; /* held in all regions, spares included */
    size_t limit; /* the most it may hold (--memory) */
    /* what it moved since it started, for its manager's measurements (store_report) */
    unsigned long long moved;   /* bytes handed out to be written or read */
    unsigned long long commits; /* versions published */
    /* regions of dropped versions, registered still: a steady commit of the same size
     * takes one instead of allocating, touching and registering memory again */
    afile_t spare[STORE_SPARES];
    int nspare;
    /* flush threads report here (the loop prunes and frees) */
    pthread_mutex_t mu;
    /* under mu: the agent was told to stop. A flush that waits for other agents' node
     * files (the holder of node file 0 publishes) then gives up once none has come for
     * stop_wait_ms (0: STORE_STOP_WAIT_MS) */
    bool stopping;
    long stop_wait_ms;
} store_t;

app_t *store_app(store_t *s, const char *name, bool create);
aver_t *store_version(app_t *a, long version);
/* The region of node file `file` of an open version, made on first use; NULL with a
 * message in err when the version is complete or the length differs. When it would pass
 * the store's limit the region is the node file itself on the file level, mapped (seed
 * 002 §4.5: an agent short of memory writes the chunks to the file system as they come):
 * the version stays whole, its flush only syncs that file; NULL when that fails too. */
afile_t *store_put(store_t *s, app_t *a, long version, long file, size_t len, char *err,
                   size_t errlen);
/* Opens node file f's region to one client for one kind of transfer (FAB_REMOTE_WRITE
 * into an open version, FAB_REMOTE_READ of a complete one): the registration whose blob
 * goes to that client alone; NULL with a message in err. */
fab_mr_t *store_grant(store_t *s, afile_t *f, const void *owner, int access, char *err,
                      size_t errlen);
/* Closes every region the client was given: its transfers are over (or it is gone). */
void store_revoke(store_t *s, const void *owner);
/* Completes an open version that holds every file in files[0..n); takes the manifest.
 * Its regions' grants are closed: nobody writes a complete version. */
int store_publish(store_t *s, app_t *a, long version, long nfiles, const long *files, int n,
                  json_t *manifest, char *err, size_t errlen);
/* The newest complete version, or NULL. */
aver_t *store_latest(app_t *a);
afile_t *store_file(aver_t *v, long file);
/* Frees the versions no longer kept (never one being flushed); for a released
 * application, every version that is in the files and any unfinished one. */
void store_prune(store_t *s, app_t *a);
/* Starts flushing a complete version in a thread; `done` runs in that thread at the end. */
int store_flush(store_t *s, app_t *a, aver_t *v, void (*done)(void *), void *arg);
void store_free(store_t *s);

/* Writes what the agent holds and has moved to fd at offset 0, for its manager (the
 * node daemon reads it at each heartbeat: docs/checkpointing.md, "measurements"): one
 * line of STORE_REPORT_LEN bytes, "ductile-agent-report SEQ held=B limit=B moved=B
 * commits=N SEQ", padded with spaces. The sequence number at both ends lets a reader
 * that raced a write see a torn line and keep the previous one. */
#define STORE_REPORT_LEN 160
void store_report(const store_t *s, int fd, unsigned long seq);

#endif
