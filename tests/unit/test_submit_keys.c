/* The controller's submission keys (issue 7, defect 12), against a database in a
 * temporary directory: a key is found only by its own user, and its row belongs to the batch
 * transaction of its job (rolled back with it, visible inside it). */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld/ctld.h"

static void keys(void **state)
{
    (void)state;
    ctld_t c;
    memset(&c, 0, sizeof(c));
    char err[256], dir[] = "/tmp/ductile-keys-XXXXXX", path[300], cmd[400];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/ductile.db", dir);
    if (db_open(&c, path, 0, err, sizeof(err)) != 0)
        fail_msg("db_open: %s", err);
    int64_t job = 0;
    /* a database that never stored a key (no table yet) */
    assert_int_equal(db_submit_key_find(&c, 1000, "k1", &job), 0);

    assert_int_equal(db_write_begin(&c), 0);
    assert_int_equal(db_submit_key_put(&c, 1000, "k1", 7, 100.0), 0);
    /* inside the batch, before its commit: a repeat in the same batch finds it */
    assert_int_equal(db_submit_key_find(&c, 1000, "k1", &job), 1);
    assert_int_equal(job, 7);
    assert_true(db_submit_key_put(&c, 1000, "k1", 8, 100.0) < 0); /* one job per key */
    assert_int_equal(db_commit(&c), 0);
    job = 0;
    assert_int_equal(db_submit_key_find(&c, 1000, "k1", &job), 1);
    assert_int_equal(job, 7);
    /* per user: the same key of another user is another key */
    assert_int_equal(db_submit_key_find(&c, 1001, "k1", &job), 0);
    assert_int_equal(db_write_begin(&c), 0);
    assert_int_equal(db_submit_key_put(&c, 1001, "k1", 9, 100.0), 0);
    assert_int_equal(db_commit(&c), 0);
    assert_int_equal(db_submit_key_find(&c, 1001, "k1", &job), 1);
    assert_int_equal(job, 9);
    assert_int_equal(db_submit_key_find(&c, 1000, "k1", &job), 1);
    assert_int_equal(job, 7);

    /* a batch that does not commit takes its keys with it */
    assert_int_equal(db_write_begin(&c), 0);
    assert_int_equal(db_submit_key_put(&c, 1000, "lost", 10, 100.0), 0);
    assert_int_equal(sqlite3_exec(c.db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    c.in_batch = false;
    assert_int_equal(db_submit_key_find(&c, 1000, "lost", &job), 0);

    /* keys older than a week go when new ones come */
    assert_int_equal(db_write_begin(&c), 0);
    assert_int_equal(db_submit_key_put(&c, 1000, "new", 11, 100.0 + 8 * 86400), 0);
    assert_int_equal(db_commit(&c), 0);
    assert_int_equal(db_submit_key_find(&c, 1000, "k1", &job), 0);
    assert_int_equal(db_submit_key_find(&c, 1000, "new", &job), 1);
    db_close(&c);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
