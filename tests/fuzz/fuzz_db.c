/* libFuzzer target: the controller's database loader (db_open + db_load) on a damaged
 * copy of a valid database.
 *
 *   scripts/fuzz.sh builds it with the controller's sources (see there).
 *
 * Once: a database with live (pending) and finished jobs is made with the controller's
 * own writer. Each input is a list of damages applied to a copy of that file: records
 * of (3-byte offset, 1 byte: length-1 in the low 4 bits, "truncate here" in the high
 * bit, then the bytes). The loader must then either fail with a message, or succeed
 * with exactly the live jobs that were written: a crash, a leak, or a load that
 * "succeeds" without some of them (a silent loss) aborts. tests/unit/test_db_fuzz.c
 * runs this with a fixed seed in ctest. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NLIVE 24
#define NDONE 12

static char fz_dir[64];
static config_t fz_cfg;
static unsigned char *fz_image, *fz_hwm;
static size_t fz_image_len, fz_hwm_len;
static int64_t fz_live[NLIVE];

static unsigned char *fz_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int fz_spill(const char *path, const unsigned char *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static int fz_ctld(ctld_t *c)
{
    char err[256];
    memset(c, 0, sizeof(*c));
    c->cfg = fz_cfg; /* shared, read only */
    nodes_init(c);
    c->jobs = idmap_create();
    c->placed = idmap_create();
    return c->nodes && c->jobs && sched_create(c->nnodes, "easy", &c->sched, err, sizeof(err)) == 0
               ? 0 : -1;
}

static void fz_free_job(int64_t id, void *val, void *arg)
{
    (void)id;
    (void)arg;
    job_free(val);
}

static void fz_ctld_free(ctld_t *c)
{
    if (c->db)
        db_close(c);
    else if (c->store) /* db_open failed before the handle: db_close frees the rest */
        db_close(c);
    idmap_foreach(c->jobs, fz_free_job, NULL);
    idmap_destroy(c->jobs);
    idmap_destroy(c->placed);
    sched_destroy(c->sched);
    nodes_free(c);
}

static void fz_keep(ctld_t *c, job_t *j) { idmap_put(c->jobs, j->id, j); }

static void fz_fatal(const char *what)
{
    fprintf(stderr, "fuzz_db setup: %s\n", what);
    abort();
}

/* The temporary directory goes at exit (libFuzzer never says when it is done). */
static void fz_cleanup(void)
{
    static const char *const names[] = {"t.db", "t.db.hwm", "t.db-wal", "t.db-shm", "case.db",
                                        "case.db.hwm", "case.db-wal", "case.db-shm"};
    char path[128];
    if (!fz_dir[0] || getenv("FUZZ_DB_KEEP"))
        return;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", fz_dir, names[i]);
        unlink(path);
    }
    rmdir(fz_dir);
}

/* The template: NLIVE pending jobs and NDONE finished ones that ran on two nodes. */
static void fz_setup(void)
{
    char err[512], path[128];
    snprintf(fz_dir, sizeof(fz_dir), "/tmp/fuzz-db-XXXXXX");
    if (!mkdtemp(fz_dir))
        fz_fatal("mkdtemp");
    atexit(fz_cleanup);
    char conf[256];
    snprintf(conf, sizeof(conf), "Nodes = n[1-4]\nStateDir = %s\n", fz_dir);
    if (config_parse_string(conf, "/etc/ductile/ductile.conf", &fz_cfg, err, sizeof(err)) < 0)
        fz_fatal(err);
    ctld_t c;
    if (fz_ctld(&c) < 0)
        fz_fatal("ctld");
    snprintf(path, sizeof(path), "%s/t.db", fz_dir);
    if (db_open(&c, path, 0, err, sizeof(err)) < 0 || db_load(&c, fz_keep, err, sizeof(err)) < 0)
        fz_fatal(err);
    char script[600];
    memset(script, '#', sizeof(script) - 1);
    script[sizeof(script) - 1] = '\0';
    int nlive = 0;
    for (int i = 0; i < NLIVE + NDONE; i++) {
        job_t *j = job_new();
        if (!j)
            fz_fatal("oom");
        j->name = strdup("job");
        j->user = strdup("alice");
        j->script = strdup(script);
        j->cwd = strdup("/home/alice");
        j->env = json_pack("[s]", "PATH=/bin");
        j->nodes = 2;
        j->submit = 1e9 + i;
        snprintf(j->reason, sizeof(j->reason), "Priority");
        if (db_job_insert(&c, j) < 0)
            fz_fatal("insert");
        if (i % 3 == 2 && i / 3 < NDONE) { /* finished */
            j->alloc = malloc(2 * sizeof(int));
            j->alloc[0] = 0;
            j->alloc[1] = 3;
            j->nalloc = 2;
            j->state = JS_COMPLETED;
            j->exit_code = 0;
            j->start = j->submit + 1;
            j->end = j->submit + 2;
            if (db_job_save(&c, j) < 0)
                fz_fatal("save");
        } else {
            fz_live[nlive++] = j->id;
        }
        db_job_event(&c, j->id, j->submit, "submit", 0, 0, NULL, 0, NULL);
        job_free(j);
    }
    if (nlive != NLIVE || db_commit(&c) < 0)
        fz_fatal("commit");
    fz_ctld_free(&c); /* the last close checkpoints the WAL into the file */
    fz_image = fz_slurp(path, &fz_image_len);
    snprintf(path, sizeof(path), "%s/t.db.hwm", fz_dir);
    fz_hwm = fz_slurp(path, &fz_hwm_len);
    if (!fz_image || !fz_hwm || fz_image_len < 4096)
        fz_fatal("template");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_image)
        fz_setup();
    unsigned char *img = malloc(fz_image_len);
    if (!img)
        return 0;
    memcpy(img, fz_image, fz_image_len);
    size_t len = fz_image_len;
    for (size_t p = 0, k = 0; p + 4 <= size && k < 8; k++) {
        size_t off = ((size_t)data[p] << 16 | (size_t)data[p + 1] << 8 | data[p + 2]) % len;
        size_t n = (size_t)(data[p + 3] & 15) + 1;
        bool truncate = data[p + 3] & 128;
        p += 4;
        if (truncate) {
            len = off;
            if (len == 0)
                break;
            continue;
        }
        for (size_t i = 0; i < n && p < size && off + i < len; i++)
            img[off + i] = data[p++];
    }
    char path[128], aux[160], err[1024] = "";
    snprintf(path, sizeof(path), "%s/case.db", fz_dir);
    snprintf(aux, sizeof(aux), "%s-wal", path);
    unlink(aux);
    snprintf(aux, sizeof(aux), "%s-shm", path);
    unlink(aux);
    snprintf(aux, sizeof(aux), "%s.hwm", path);
    if (fz_spill(path, img, len) < 0 || fz_spill(aux, fz_hwm, fz_hwm_len) < 0)
        abort();
    free(img);
    ctld_t c;
    if (fz_ctld(&c) < 0)
        abort();
    /* stderr: the loader's reports; quiet unless FUZZ_DB_VERBOSE is set */
    int saved = -1;
    if (!getenv("FUZZ_DB_VERBOSE")) {
        fflush(stderr);
        saved = dup(2);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, 2);
            close(nul);
        }
    }
    int rc = db_open(&c, path, 0, err, sizeof(err));
    if (rc == 0)
        rc = db_load(&c, fz_keep, err, sizeof(err));
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    if (getenv("FUZZ_DB_VERBOSE"))
        fprintf(stderr, "fuzz_db: %s\n", rc < 0 ? err : "loaded");
    if (rc < 0) {
        if (!memchr(err, '\0', sizeof(err)) || err[0] == '\0')
            abort(); /* every refusal explains itself */
    } else {
        /* Success means every live job that was written is there, and nothing else. */
        if ((int64_t)idmap_count(c.jobs) != NLIVE) {
            fprintf(stderr, "fuzz_db: the load succeeded with %zu of %d live jobs\n",
                    (size_t)idmap_count(c.jobs), NLIVE);
            abort();
        }
        for (int i = 0; i < NLIVE; i++) {
            job_t *j = idmap_get(c.jobs, fz_live[i]);
            if (j && j->state != JS_PENDING) {
                fprintf(stderr, "fuzz_db: job %lld was loaded %s\n", (long long)j->id,
                        jstate_code(j->state));
                abort();
            }
            if (!j) {
                fprintf(stderr, "fuzz_db: the load succeeded without job %lld\n",
                        (long long)fz_live[i]);
                abort();
            }
        }
        /* and reading the history does not crash either */
        json_t *h = json_array();
        hist_cursor_t cur = {0, 0};
        db_history(&c, NULL, NULL, 0, 0, 1000, stats_clock() + 1e6, &cur, h, err, sizeof(err));
        json_decref(h);
    }
    fz_ctld_free(&c);
    return 0;
}
