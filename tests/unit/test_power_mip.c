/* The power model's MIP helpers (src/sched/power_mip.c) on random small MIPs whose
 * integer solutions can be enumerated: the bound is below every solution, every Gomory
 * cut keeps every solution, a dive ends on a solution, branch-and-cut on the optimum.
 * A wrong cut or bound would let the power model call a solution optimal too soon;
 * test_power_model sees that only when it changes an answer. */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

#include "sched/power_mip.h"

#define MAXC 6
#define MAXR 4
/* The enumeration's solutions keep the rows within EXACT; the cuts must keep them
 * within TOL (a cut through a vertex of the rows can amplify a hair outside them) */
#define EXACT 1e-9
#define TOL 1e-6
#define SLACK 1e-4

typedef struct mip {
    int nc, nr;            /* columns 1..nc-1 integer, nc continuous */
    int ub[MAXC + 1];      /* integer columns: 0..ub */
    double cub;            /* continuous column: 0..cub */
    double a[MAXR + 1][MAXC + 1], lo[MAXR + 1], hi[MAXR + 1];
    double obj[MAXC + 1];
} mip_t;

static double frand(int n)
{
    double v = rand() % n;
    return v + (rand() % 2 ? (rand() % 100) / 97.0 : 0);
}

/* Integer coefficients in the first row (an equality or a narrow range), fractions
 * elsewhere */
static void random_mip(mip_t *m)
{
    m->nc = 3 + rand() % (MAXC - 2);
    m->nr = 2 + rand() % (MAXR - 1);
    m->cub = 1 + rand() % 5;
    for (int c = 1; c <= m->nc; c++) {
        m->ub[c] = 1 + rand() % 4;
        m->obj[c] = frand(7) - 3;
    }
    for (int r = 1; r <= m->nr; r++) {
        double lo = 0, hi = 0;
        for (int c = 1; c <= m->nc; c++) {
            m->a[r][c] = r == 1 ? rand() % 7 - 3 : frand(9) - 4;
            if (r == 1 && c == m->nc && rand() % 2)
                m->a[r][c] = 0; /* then an integer row */
            double top = c < m->nc ? m->ub[c] : m->cub;
            lo += fmin(0, m->a[r][c] * top);
            hi += fmax(0, m->a[r][c] * top);
        }
        /* a window inside the row's range, narrow enough to bite */
        double x = lo + (hi - lo) * (rand() % 100) / 100.0;
        m->lo[r] = r == 1 ? floor(x) : x;
        m->hi[r] = r == 1 ? (rand() % 2 ? m->lo[r] : m->lo[r] + 2) : x + (hi - lo) * 0.3;
    }
}

static glp_prob *load(const mip_t *m)
{
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, m->nc);
    glp_add_rows(lp, m->nr);
    for (int c = 1; c <= m->nc; c++) {
        glp_set_col_kind(lp, c, c < m->nc ? GLP_IV : GLP_CV);
        glp_set_col_bnds(lp, c, GLP_DB, 0, c < m->nc ? m->ub[c] : m->cub);
        glp_set_obj_coef(lp, c, m->obj[c]);
    }
    for (int r = 1; r <= m->nr; r++) {
        int ind[MAXC + 1];
        double val[MAXC + 1];
        for (int c = 1; c <= m->nc; c++)
            ind[c] = c, val[c] = m->a[r][c];
        glp_set_mat_row(lp, r, m->nc, ind, val);
        glp_set_row_bnds(lp, r, m->lo[r] < m->hi[r] ? GLP_DB : GLP_FX, m->lo[r], m->hi[r]);
    }
    return lp;
}

/* For the integer part x[1..nc-1]: the interval of the continuous column that keeps
 * every row of lp (the original rows and any cut) within tol. 0 if empty. */
static int cont_range(glp_prob *lp, int nc, double *x, double *ylo, double *yhi, double tol)
{
    *ylo = glp_get_col_lb(lp, nc);
    *yhi = glp_get_col_ub(lp, nc);
    for (int r = 1; r <= glp_get_num_rows(lp); r++) {
        int ind[MAXC + 1], n = glp_get_mat_row(lp, r, ind, NULL);
        double val[MAXC + 1], s = 0, ay = 0;
        glp_get_mat_row(lp, r, ind, val);
        for (int k = 1; k <= n; k++)
            if (ind[k] == nc)
                ay = val[k];
            else
                s += val[k] * x[ind[k]];
        int t = glp_get_row_type(lp, r);
        double lo = t == GLP_LO || t == GLP_DB || t == GLP_FX ? glp_get_row_lb(lp, r) : -INFINITY;
        double hi = t == GLP_UP || t == GLP_DB || t == GLP_FX ? glp_get_row_ub(lp, r) : INFINITY;
        /* lo - tol <= s + ay y <= hi + tol */
        if (fabs(ay) < 1e-12) {
            if (s < lo - tol || s > hi + tol)
                return 0;
            continue;
        }
        double y1 = (lo - tol - s) / ay, y2 = (hi + tol - s) / ay;
        *ylo = fmax(*ylo, fmin(y1, y2));
        *yhi = fmin(*yhi, fmax(y1, y2));
    }
    return *ylo <= *yhi;
}

/* The optimum over every integer point of the original rows (INFINITY: none); with
 * `cuts`, each point's interval checked against the rows lp has now as well. */
static double enumerate(const mip_t *m, glp_prob *orig, glp_prob *cut)
{
    double x[MAXC + 1] = {0}, best = INFINITY;
    for (;;) {
        double ylo, yhi;
        if (cont_range(orig, m->nc, x, &ylo, &yhi, EXACT)) {
            double cy = m->obj[m->nc], v = 0;
            for (int c = 1; c < m->nc; c++)
                v += m->obj[c] * x[c];
            best = fmin(best, v + fmin(cy * ylo, cy * yhi));
            if (cut) {
                /* each end of the interval is a solution: the cuts keep both */
                double clo, chi;
                for (int e = 0; e < 2; e++) {
                    x[m->nc] = e ? yhi : ylo;
                    int okc = cont_range(cut, m->nc, x, &clo, &chi, TOL);
                    assert_true(okc);
                    assert_true(clo <= x[m->nc] + 1e-6 && x[m->nc] <= chi + 1e-6);
                }
            }
        }
        int c = 1;
        while (c < m->nc && x[c] == m->ub[c])
            x[c++] = 0;
        if (c == m->nc)
            return best;
        x[c]++;
    }
}

static void random_mips(void **state)
{
    (void)state;
    srand(3);
    int solved = 0, cut = 0;
    for (int round = 0; round < 400; round++) {
        mip_t m = {0};
        random_mip(&m);
        glp_term_out(GLP_OFF);
        glp_prob *orig = load(&m), *lp = load(&m);
        double opt = enumerate(&m, orig, NULL);
        mip_dual_start(lp);
        int st = mip_lp(lp, 0);
        if (st != GLP_OPT) {
            assert_true(isinf(opt)); /* no LP solution: no integer one */
            glp_delete_prob(orig), glp_delete_prob(lp);
            continue;
        }
        assert_true(mip_bound(lp) <= glp_get_obj_val(lp) + 1e-6);
        assert_true(isinf(opt) || mip_bound(lp) <= opt + SLACK);
        double x[MAXC + 1], y[MAXC + 1];
        int dove = mip_dive(lp, x, 20);
        for (int c = 1; c <= m.nc; c++) /* the bounds are back */
            assert_true(glp_get_col_ub(lp, c) == (c < m.nc ? m.ub[c] : m.cub));
        if (dove) {
            double ylo, yhi, v = 0;
            assert_true(cont_range(orig, m.nc, x, &ylo, &yhi, TOL));
            for (int c = 1; c <= m.nc; c++)
                v += m.obj[c] * x[c];
            assert_true(v >= opt - SLACK);
        }
        assert_int_equal(mip_lp(lp, 0), GLP_OPT);
        if (mip_cuts(lp, 3) == GLP_OPT)
            assert_true(isinf(opt) || mip_bound(lp) <= opt + SLACK);
        else
            assert_true(isinf(opt)); /* cuts that keep every solution */
        if (glp_get_num_rows(lp) > m.nr)
            cut++;
        if (!isinf(opt))
            enumerate(&m, orig, lp); /* the cuts keep every solution */
        mip_del_rows(lp, m.nr);
        assert_int_equal(glp_get_num_rows(lp), m.nr);
        int proven;
        if (mip_lp(lp, 0) == GLP_OPT && mip_intopt(lp, dove ? x : NULL, 2000, y, &proven)) {
            double v = 0;
            for (int c = 1; c <= m.nc; c++)
                v += m.obj[c] * y[c];
            assert_true(proven);
            assert_true(fabs(v - opt) < SLACK);
            solved++;
        } else {
            assert_true(isinf(opt));
        }
        glp_delete_prob(orig), glp_delete_prob(lp);
    }
    /* the instances do exercise what they test */
    assert_true(solved > 100);
    assert_true(cut > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_mips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
