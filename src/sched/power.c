/* The power corridor's node-redistribution model (seed 002 Eq. 5.3, fixed as
 * docs/power.md says), built and solved with GLPK's branch-and-cut (glp_intopt).
 *
 * A variable job's size is c0 + sum(coef * x) over columns of its own:
 *   no constraint    one integer column in [min, max]           (c0 0, coef 1)
 *   even / odd       k = 2z (+1): one integer column z          (c0 0 or 1, coef 2)
 *   pof2, ncube, square  one binary per valid size v, sum = 1   (c0 0, coef v)
 * so that any size the solver picks is one the job can run on. Each variable job also
 * has a continuous column d >= |size - current| (two rows), and the objective is
 * W * idle + sum(d) with W = 2N + 1: one idle node fewer always outweighs any number of
 * moved nodes (at most 2N), which makes the choice among optimal vectors deterministic.
 *
 * Phase 1 solves with the corridor as hard rows. If that has no solution, phase 2
 * adds slack columns below the lower and above the upper bound and minimises their sum
 * (the watts outside); phase 3 keeps that sum at its minimum and minimises the
 * objective of phase 1. */
#include "power.h"

#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"

#define MIP_TIME_LIMIT_MS 2000

typedef struct model {
    glp_prob *lp;
    int ncols;
    /* per variable job: its first column, how many, its constant part, its d column */
    int *first, *count, *dcol;
    double *c0;
    double *coef;  /* per column (1-based): its contribution to the job's size */
    int idle, slo, shi; /* columns */
    /* triplets */
    int *ia, *ja;
    double *ar;
    int ne, cap;
} model_t;

static int push(model_t *m, int row, int col, double v)
{
    if (m->ne + 1 >= m->cap) {
        int ncap = m->cap ? 2 * m->cap : 256;
        int *ia = realloc(m->ia, (size_t)ncap * sizeof(int));
        if (ia)
            m->ia = ia;
        int *ja = realloc(m->ja, (size_t)ncap * sizeof(int));
        if (ja)
            m->ja = ja;
        double *ar = realloc(m->ar, (size_t)ncap * sizeof(double));
        if (ar)
            m->ar = ar;
        if (!ia || !ja || !ar)
            return -ENOMEM;
        m->cap = ncap;
    }
    m->ne++;
    m->ia[m->ne] = row;
    m->ja[m->ne] = col;
    m->ar[m->ne] = v;
    return 0;
}

static int add_col(model_t *m, int kind, double lo, double hi, double coef)
{
    int c = glp_add_cols(m->lp, 1);
    glp_set_col_kind(m->lp, c, kind);
    if (kind != GLP_BV) {
        if (isinf(hi))
            glp_set_col_bnds(m->lp, c, GLP_LO, lo, 0);
        else if (lo == hi)
            glp_set_col_bnds(m->lp, c, GLP_FX, lo, lo);
        else
            glp_set_col_bnds(m->lp, c, GLP_DB, lo, hi);
    }
    double *nc = realloc(m->coef, (size_t)(c + 1) * sizeof(double));
    if (!nc)
        return -ENOMEM;
    m->coef = nc;
    m->coef[c] = coef;
    m->ncols = c;
    return c;
}

static int ceil_div(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The size columns of variable job i. */
static int add_size_cols(model_t *m, int i, const sched_power_job_t *j, char *err, size_t errlen)
{
    int lo = j->min_nodes, hi = j->max_nodes;
    m->first[i] = m->ncols + 1;
    m->c0[i] = 0;
    switch (j->constraint) {
    case SCHED_CONS_NONE:
        m->count[i] = 1;
        return add_col(m, GLP_IV, lo, hi, 1) < 0 ? -ENOMEM : 0;
    case SCHED_CONS_EVEN:
    case SCHED_CONS_ODD: {
        int b = j->constraint == SCHED_CONS_ODD;
        int zlo = ceil_div(lo - b, 2), zhi = floor_div(hi - b, 2);
        if (2 * zlo + b < 1)
            zlo = b ? 0 : 1;
        if (zlo > zhi)
            break;
        m->c0[i] = b;
        m->count[i] = 1;
        return add_col(m, GLP_IV, zlo, zhi, 2) < 0 ? -ENOMEM : 0;
    }
    default: {
        int n = 0, row = 0;
        for (int v = lo; v <= hi; v++) {
            if (!cons_valid(v, j->constraint))
                continue;
            if (!row) {
                row = glp_add_rows(m->lp, 1);
                glp_set_row_bnds(m->lp, row, GLP_FX, 1, 1);
            }
            int c = add_col(m, GLP_BV, 0, 1, v);
            if (c < 0 || push(m, row, c, 1) < 0)
                return -ENOMEM;
            n++;
        }
        if (n == 0)
            break;
        m->count[i] = n;
        return 0;
    }
    }
    snprintf(err, errlen, "job %lld: no size in [%d, %d] meets its node constraint %s",
             (long long)j->id, lo, hi, sched_constraint_name(j->constraint));
    return -EINVAL;
}

/* row += w * size of variable job i (its constant part goes to *rhs with the sign
 * that keeps the row's bound right: the caller subtracts w * c0 from it). */
static int add_size_terms(model_t *m, int row, int i, double w, double *rhs)
{
    for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++)
        if (push(m, row, c, w * m->coef[c]) < 0)
            return -ENOMEM;
    *rhs -= w * m->c0[i];
    return 0;
}

static int check(const sched_power_problem_t *p, char *err, size_t errlen)
{
    if (p->nnodes < 0 || p->njobs < 0 || (p->njobs && !p->jobs) || !(p->p_idle >= 0) ||
        isnan(p->lower) || isnan(p->upper) || p->min_idle < 0)
        return snprintf(err, errlen, "power model: bad cluster figures"), -EINVAL;
    if (p->lower > p->upper)
        return snprintf(err, errlen, "power corridor: the lower bound %.0f W is above the upper "
                        "bound %.0f W", p->lower, p->upper), -EINVAL;
    for (int i = 0; i < p->njobs; i++) {
        const sched_power_job_t *j = &p->jobs[i];
        if (!(j->p_min >= 0) || !(j->p_max >= j->p_min) || isinf(j->p_max))
            return snprintf(err, errlen, "job %lld: power per node %g..%g W makes no sense",
                            (long long)j->id, j->p_min, j->p_max), -EINVAL;
        if (j->nodes < 1 ||
            (!j->fixed && (j->min_nodes < 1 || j->min_nodes > j->max_nodes)))
            return snprintf(err, errlen, "job %lld: sizes %d (%d..%d) make no sense",
                            (long long)j->id, j->nodes, j->min_nodes, j->max_nodes), -EINVAL;
    }
    return 0;
}

void sched_power_draw_of(const sched_power_problem_t *p, const int *sizes, double *lo, double *hi)
{
    double a = 0, b = 0;
    int used = 0;
    for (int i = 0; i < p->njobs; i++) {
        a += sizes[i] * p->jobs[i].p_min;
        b += sizes[i] * p->jobs[i].p_max;
        used += sizes[i];
    }
    int idle = p->nnodes - used > 0 ? p->nnodes - used : 0;
    *lo = a + idle * p->p_idle;
    *hi = b + idle * p->p_idle;
}

static int build(const sched_power_problem_t *p, model_t *m, char *err, size_t errlen)
{
    int n = p->njobs;
    m->lp = glp_create_prob();
    m->first = calloc((size_t)n + 1, sizeof(int));
    m->count = calloc((size_t)n + 1, sizeof(int));
    m->dcol = calloc((size_t)n + 1, sizeof(int));
    m->c0 = calloc((size_t)n + 1, sizeof(double));
    if (!m->lp || !m->first || !m->count || !m->dcol || !m->c0)
        return -ENOMEM;
    glp_set_obj_dir(m->lp, GLP_MIN);
    double fixed_nodes = 0, fixed_lo = 0, fixed_hi = 0;
    for (int i = 0; i < n; i++) {
        const sched_power_job_t *j = &p->jobs[i];
        if (j->fixed) {
            fixed_nodes += j->nodes;
            fixed_lo += j->nodes * j->p_min;
            fixed_hi += j->nodes * j->p_max;
            continue;
        }
        int rc = add_size_cols(m, i, j, err, errlen);
        if (rc < 0)
            return rc;
    }
    double wt = 2.0 * p->nnodes + 1;
    m->idle = add_col(m, GLP_IV, p->min_idle, p->nnodes > p->min_idle ? p->nnodes : p->min_idle, 0);
    m->slo = add_col(m, GLP_CV, 0, 0, 0);
    m->shi = add_col(m, GLP_CV, 0, 0, 0);
    if (m->idle < 0 || m->slo < 0 || m->shi < 0)
        return -ENOMEM;
    glp_set_obj_coef(m->lp, m->idle, wt);
    /* nodes sum to N */
    int row = glp_add_rows(m->lp, 1);
    double rhs = p->nnodes - fixed_nodes;
    for (int i = 0; i < n; i++)
        if (!p->jobs[i].fixed && add_size_terms(m, row, i, 1, &rhs) < 0)
            return -ENOMEM;
    if (push(m, row, m->idle, 1) < 0)
        return -ENOMEM;
    glp_set_row_bnds(m->lp, row, GLP_FX, rhs, rhs);
    /* the corridor: lower with p_min, upper with p_max; slacks are 0 until phase 2 */
    if (p->lower > 0) {
        int row_lo = glp_add_rows(m->lp, 1);
        rhs = p->lower - fixed_lo;
        for (int i = 0; i < n; i++)
            if (!p->jobs[i].fixed && add_size_terms(m, row_lo, i, p->jobs[i].p_min, &rhs) < 0)
                return -ENOMEM;
        if (push(m, row_lo, m->idle, p->p_idle) < 0 || push(m, row_lo, m->slo, 1) < 0)
            return -ENOMEM;
        glp_set_row_bnds(m->lp, row_lo, GLP_LO, rhs, 0);
    }
    if (!isinf(p->upper)) {
        int row_hi = glp_add_rows(m->lp, 1);
        rhs = p->upper - fixed_hi;
        for (int i = 0; i < n; i++)
            if (!p->jobs[i].fixed && add_size_terms(m, row_hi, i, p->jobs[i].p_max, &rhs) < 0)
                return -ENOMEM;
        if (push(m, row_hi, m->idle, p->p_idle) < 0 || push(m, row_hi, m->shi, -1) < 0)
            return -ENOMEM;
        glp_set_row_bnds(m->lp, row_hi, GLP_UP, 0, rhs);
    }
    /* d_i >= |size_i - current_i| */
    for (int i = 0; i < n; i++) {
        if (p->jobs[i].fixed)
            continue;
        int d = add_col(m, GLP_CV, 0, INFINITY, 0);
        if (d < 0)
            return -ENOMEM;
        m->dcol[i] = d;
        glp_set_obj_coef(m->lp, d, 1);
        int r = glp_add_rows(m->lp, 2);
        double a = -p->jobs[i].nodes, b = p->jobs[i].nodes;
        /* d - size >= -cur,  d + size >= cur */
        if (push(m, r, d, 1) < 0 || add_size_terms(m, r, i, -1, &a) < 0 ||
            push(m, r + 1, d, 1) < 0 || add_size_terms(m, r + 1, i, 1, &b) < 0)
            return -ENOMEM;
        glp_set_row_bnds(m->lp, r, GLP_LO, a, 0);
        glp_set_row_bnds(m->lp, r + 1, GLP_LO, b, 0);
    }
    glp_load_matrix(m->lp, m->ne, m->ia, m->ja, m->ar);
    return 0;
}

static void model_free(model_t *m)
{
    if (m->lp)
        glp_delete_prob(m->lp);
    free(m->first);
    free(m->count);
    free(m->dcol);
    free(m->c0);
    free(m->coef);
    free(m->ia);
    free(m->ja);
    free(m->ar);
}

/* 1: a solution (optimal or the best within the time limit), 0: none. */
static int solve(model_t *m)
{
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = MIP_TIME_LIMIT_MS;
    glp_intopt(m->lp, &parm); /* its status, not its code, says whether it found one */
    int st = glp_mip_status(m->lp);
    return st == GLP_OPT || st == GLP_FEAS;
}

static int size_of(const model_t *m, int i)
{
    double v = m->c0[i];
    for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++)
        v += m->coef[c] * glp_mip_col_val(m->lp, c);
    return (int)lround(v);
}

int sched_power_solve(const sched_power_problem_t *p, sched_power_solution_t *sol, char *err,
                      size_t errlen)
{
    int rc = check(p, err, errlen);
    if (rc < 0)
        return rc;
    glp_term_out(GLP_OFF);
    model_t m = {0};
    rc = build(p, &m, err, errlen);
    if (rc < 0) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "power model: out of memory");
        model_free(&m);
        return rc;
    }
    sol->status = SCHED_POWER_INSIDE;
    int found = solve(&m);
    if (!found) {
        /* phase 2: the least watts outside the corridor */
        double wt = glp_get_obj_coef(m.lp, m.idle);
        for (int c = 1; c <= m.ncols; c++)
            glp_set_obj_coef(m.lp, c, 0);
        glp_set_col_bnds(m.lp, m.slo, GLP_LO, 0, 0);
        glp_set_col_bnds(m.lp, m.shi, GLP_LO, 0, 0);
        glp_set_obj_coef(m.lp, m.slo, 1);
        glp_set_obj_coef(m.lp, m.shi, 1);
        if (!solve(&m)) {
            sol->status = SCHED_POWER_NONE;
        } else {
            /* phase 3: at that distance, the fewest idle nodes, then the fewest moves */
            double best = glp_mip_obj_val(m.lp);
            int row = glp_add_rows(m.lp, 1);
            int ind[3] = {0, m.slo, m.shi};
            double val[3] = {0, 1, 1};
            glp_set_mat_row(m.lp, row, 2, ind, val);
            glp_set_row_bnds(m.lp, row, GLP_UP, 0, best + 1e-6 * (1 + fabs(best)));
            glp_set_obj_coef(m.lp, m.slo, 0);
            glp_set_obj_coef(m.lp, m.shi, 0);
            glp_set_obj_coef(m.lp, m.idle, wt);
            for (int i = 0; i < p->njobs; i++)
                if (m.dcol[i])
                    glp_set_obj_coef(m.lp, m.dcol[i], 1);
            found = solve(&m);
            sol->status = found ? SCHED_POWER_CLOSEST : SCHED_POWER_NONE;
        }
    }
    sol->moved = 0;
    for (int i = 0; i < p->njobs; i++) {
        const sched_power_job_t *j = &p->jobs[i];
        sol->sizes[i] = (j->fixed || sol->status == SCHED_POWER_NONE) ? j->nodes : size_of(&m, i);
        sol->moved += abs(sol->sizes[i] - j->nodes);
    }
    sched_power_draw_of(p, sol->sizes, &sol->draw_lo, &sol->draw_hi);
    int used = 0;
    for (int i = 0; i < p->njobs; i++)
        used += sol->sizes[i];
    sol->idle = p->nnodes - used;
    sol->outside = (sol->draw_lo < p->lower ? p->lower - sol->draw_lo : 0) +
                   (sol->draw_hi > p->upper ? sol->draw_hi - p->upper : 0);
    if (sol->status == SCHED_POWER_NONE)
        snprintf(err, errlen, "power model: the jobs' sizes cannot fit the %d nodes", p->nnodes);
    model_free(&m);
    return 0;
}
