/* The database loader against damaged copies of a valid database (issue 7): the
 * libFuzzer target tests/fuzz/fuzz_db.c, driven here by a fixed seed so that ctest
 * runs it in both builds. Each case must give an error with a message, or a load with
 * every live job; the target aborts otherwise. */
#include "../fuzz/fuzz_db.c"

#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL; /* fixed seed */

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* One damage record: offset, length (and rarely a truncation), bytes. Offsets are
 * drawn over the whole file, a third of them into its page headers (the first bytes
 * of each 4 KiB page), where a damage changes the structure rather than a value. */
static size_t make_case(uint8_t *buf, size_t cap)
{
    size_t p = 0;
    int nrec = 1 + (int)(next_u32() % 4);
    for (int k = 0; k < nrec && p + 4 + 16 <= cap; k++) {
        uint32_t off = next_u32() % (uint32_t)fz_image_len;
        if (next_u32() % 3 == 0)
            off = (off & ~4095u) + next_u32() % 16;
        uint8_t n = (uint8_t)(next_u32() % 16);
        if (next_u32() % 50 == 0)
            n |= 128;
        buf[p++] = (uint8_t)(off >> 16);
        buf[p++] = (uint8_t)(off >> 8);
        buf[p++] = (uint8_t)off;
        buf[p++] = n;
        for (int i = 0; i <= (n & 15); i++)
            buf[p++] = (uint8_t)next_u32();
    }
    return p;
}

static void damaged_copies(void **state)
{
    (void)state;
    uint8_t none = 0;
    LLVMFuzzerTestOneInput(&none, 0); /* the template, undamaged: loads every job */
    uint8_t buf[128];
    int cases = getenv("DB_FUZZ_CASES") ? atoi(getenv("DB_FUZZ_CASES")) : 400;
    for (int i = 0; i < cases; i++)
        LLVMFuzzerTestOneInput(buf, make_case(buf, sizeof(buf)));
    /* inputs libFuzzer found: a damaged id that still decodes (another job loaded in
     * the place of job 16, then an id stored twice): refused, nothing leaks */
    uint8_t id_damaged[] = {0x00, 0x3f, 0x97, 0x3f, 0x21};
    LLVMFuzzerTestOneInput(id_damaged, sizeof(id_damaged));
    uint8_t id_twice[] = {0x7c, 0xef, 0x43, 0x17, 0x23};
    LLVMFuzzerTestOneInput(id_twice, sizeof(id_twice));
    /* a state that still decodes: 'PD' of a pending row made 'CD', at every place the
     * file holds one (live rows, and dead copies in free space) */
    const char *hay = (const char *)fz_image;
    int found = 0;
    for (size_t i = 0; i + 9 < fz_image_len; i++)
        if (!memcmp(hay + i, "PDPDrigid", 9)) { /* state, final, type of a pending row */
            uint8_t flip[] = {(uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i, 0, 'C'};
            LLVMFuzzerTestOneInput(flip, sizeof(flip));
            found++;
        }
    assert_true(found >= NLIVE);
    /* the same, done consistently (row and index, as a damaged page that still decodes
     * could): the count of live jobs kept by triggers says one is missing */
    char path[160], err[512];
    snprintf(path, sizeof(path), "%s/case.db", fz_dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DROP TRIGGER jobs_live_upd;"
                                      " UPDATE jobs SET state = 'CD' WHERE id = 1", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    ctld_t c;
    assert_int_equal(fz_ctld(&c), 0);
    assert_int_equal(db_open(&c, path, 0, err, sizeof(err)), 0);
    assert_int_equal(db_load(&c, fz_keep, err, sizeof(err)), -EIO);
    assert_non_null(strstr(err, "live jobs are recorded but"));
    fz_ctld_free(&c);
    if (!getenv("FUZZ_DB_KEEP"))
        tu_rmtree(fz_dir);
    free(fz_image);
    free(fz_hwm);
    config_free(&fz_cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(damaged_copies)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
