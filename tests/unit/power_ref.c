/* The first version of the power model's solver (src/sched/power.c before the
 * lexicographic stages), kept as a reference for test_power_model: one GLPK MIP with the
 * objective (2N + 1) idle + sum d_i, d_i >= |size_i - current_i| (two rows a job), a
 * size column per job (an integer, 2z (+1) for even and odd, a binary per valid size
 * for pof2, ncube, square), phases 2 and 3 for an infeasible corridor. Slow for many
 * jobs, but independent of the new solver's bounds, cuts, dives and crash basis.
 * *proven: every branch-and-cut ended with a proof, not at its time limit. */
#include "power_ref.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>

#include "sched/constraint.h"

#define REF_TIME_LIMIT_MS 2000

typedef struct ref {
    glp_prob *lp;
    int *first, *count, *dcol; /* per job */
    double *c0, *coef;         /* per job: constant part; per column: size per unit */
    int idle, slo, shi;
    int *ia, *ja;
    double *ar;
    int ne, cap;
    bool proven;
} ref_t;

static void put(ref_t *m, int row, int col, double v)
{
    if (m->ne + 1 >= m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->ia = realloc(m->ia, (size_t)m->cap * sizeof(int));
        m->ja = realloc(m->ja, (size_t)m->cap * sizeof(int));
        m->ar = realloc(m->ar, (size_t)m->cap * sizeof(double));
    }
    m->ne++;
    m->ia[m->ne] = row;
    m->ja[m->ne] = col;
    m->ar[m->ne] = v;
}

static int column(ref_t *m, int kind, double lo, double hi, double coef)
{
    int c = glp_add_cols(m->lp, 1);
    glp_set_col_kind(m->lp, c, kind);
    if (kind != GLP_BV)
        glp_set_col_bnds(m->lp, c, isinf(hi) ? GLP_LO : lo == hi ? GLP_FX : GLP_DB, lo, hi);
    m->coef = realloc(m->coef, (size_t)(c + 1) * sizeof(double));
    m->coef[c] = coef;
    return c;
}

static void size_columns(ref_t *m, int i, const sched_power_job_t *j)
{
    int lo = j->min_nodes, hi = j->max_nodes;
    m->first[i] = glp_get_num_cols(m->lp) + 1;
    if (j->constraint == SCHED_CONS_NONE) {
        m->count[i] = 1;
        column(m, GLP_IV, lo, hi, 1);
    } else if (j->constraint == SCHED_CONS_EVEN || j->constraint == SCHED_CONS_ODD) {
        int b = j->constraint == SCHED_CONS_ODD;
        int zlo = (lo - b + 1) / 2, zhi = (hi - b) / 2; /* sizes >= 1 */
        if (2 * zlo + b < 1)
            zlo = 1;
        m->c0[i] = b;
        m->count[i] = 1;
        column(m, GLP_IV, zlo, zhi, 2);
    } else {
        int row = glp_add_rows(m->lp, 1);
        glp_set_row_bnds(m->lp, row, GLP_FX, 1, 1);
        for (int v = lo; v <= hi; v++)
            if (cons_valid(v, j->constraint)) {
                put(m, row, column(m, GLP_BV, 0, 1, v), 1);
                m->count[i]++;
            }
    }
}

/* row += w * size of job i; its constant part off *rhs */
static void size_terms(ref_t *m, int row, int i, double w, double *rhs)
{
    for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++)
        put(m, row, c, w * m->coef[c]);
    *rhs -= w * m->c0[i];
}

/* The corridor's lower (p_min, slack slo) or upper (p_max, slack shi) row */
static void corridor_row(ref_t *m, const sched_power_problem_t *p, bool upper, double rhs)
{
    int row = glp_add_rows(m->lp, 1);
    for (int i = 0; i < p->njobs; i++)
        if (!p->jobs[i].fixed)
            size_terms(m, row, i, upper ? p->jobs[i].p_max : p->jobs[i].p_min, &rhs);
    put(m, row, m->idle, p->p_idle);
    put(m, row, upper ? m->shi : m->slo, upper ? -1 : 1);
    glp_set_row_bnds(m->lp, row, upper ? GLP_UP : GLP_LO, upper ? 0 : rhs, upper ? rhs : 0);
}

static void build(const sched_power_problem_t *p, ref_t *m)
{
    int n = p->njobs;
    double fixed_nodes = 0, fixed_lo = 0, fixed_hi = 0;
    m->lp = glp_create_prob();
    m->first = calloc((size_t)n + 1, sizeof(int));
    m->count = calloc((size_t)n + 1, sizeof(int));
    m->dcol = calloc((size_t)n + 1, sizeof(int));
    m->c0 = calloc((size_t)n + 1, sizeof(double));
    glp_set_obj_dir(m->lp, GLP_MIN);
    for (int i = 0; i < n; i++) {
        const sched_power_job_t *j = &p->jobs[i];
        if (!j->fixed) {
            size_columns(m, i, j);
            continue;
        }
        fixed_nodes += j->nodes;
        fixed_lo += j->nodes * j->p_min;
        fixed_hi += j->nodes * j->p_max;
    }
    m->idle = column(m, GLP_IV, p->min_idle, p->nnodes > p->min_idle ? p->nnodes : p->min_idle, 0);
    m->slo = column(m, GLP_CV, 0, 0, 0);
    m->shi = column(m, GLP_CV, 0, 0, 0);
    glp_set_obj_coef(m->lp, m->idle, 2.0 * p->nnodes + 1);
    int row = glp_add_rows(m->lp, 1);
    double rhs = p->nnodes - fixed_nodes;
    for (int i = 0; i < n; i++)
        if (!p->jobs[i].fixed)
            size_terms(m, row, i, 1, &rhs);
    put(m, row, m->idle, 1);
    glp_set_row_bnds(m->lp, row, GLP_FX, rhs, rhs);
    if (p->lower > 0)
        corridor_row(m, p, false, p->lower - fixed_lo);
    if (!isinf(p->upper))
        corridor_row(m, p, true, p->upper - fixed_hi);
    for (int i = 0; i < n; i++) {
        if (p->jobs[i].fixed)
            continue;
        int d = m->dcol[i] = column(m, GLP_CV, 0, INFINITY, 0);
        glp_set_obj_coef(m->lp, d, 1);
        int r = glp_add_rows(m->lp, 2);
        double a = -p->jobs[i].nodes, b = p->jobs[i].nodes;
        put(m, r, d, 1); /* d - size >= -current, d + size >= current */
        size_terms(m, r, i, -1, &a);
        put(m, r + 1, d, 1);
        size_terms(m, r + 1, i, 1, &b);
        glp_set_row_bnds(m->lp, r, GLP_LO, a, 0);
        glp_set_row_bnds(m->lp, r + 1, GLP_LO, b, 0);
    }
    glp_load_matrix(m->lp, m->ne, m->ia, m->ja, m->ar);
}

static int intopt(ref_t *m)
{
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = REF_TIME_LIMIT_MS;
    glp_intopt(m->lp, &parm);
    int st = glp_mip_status(m->lp);
    if (st != GLP_OPT && st != GLP_NOFEAS)
        m->proven = false;
    return st == GLP_OPT || st == GLP_FEAS;
}

sched_power_status_t power_ref_solve(const sched_power_problem_t *p, int *sizes, bool *proven)
{
    ref_t m = {.proven = true};
    glp_term_out(GLP_OFF);
    build(p, &m);
    sched_power_status_t st = SCHED_POWER_INSIDE;
    if (!intopt(&m)) {
        /* phase 2: the least watts outside; phase 3: at that distance, the objective */
        double wt = glp_get_obj_coef(m.lp, m.idle);
        for (int c = 1; c <= glp_get_num_cols(m.lp); c++)
            glp_set_obj_coef(m.lp, c, 0);
        glp_set_col_bnds(m.lp, m.slo, GLP_LO, 0, 0);
        glp_set_col_bnds(m.lp, m.shi, GLP_LO, 0, 0);
        glp_set_obj_coef(m.lp, m.slo, 1);
        glp_set_obj_coef(m.lp, m.shi, 1);
        st = SCHED_POWER_NONE;
        if (intopt(&m)) {
            double best = glp_mip_obj_val(m.lp);
            int row = glp_add_rows(m.lp, 1), ind[3] = {0, m.slo, m.shi};
            double val[3] = {0, 1, 1};
            glp_set_mat_row(m.lp, row, 2, ind, val);
            glp_set_row_bnds(m.lp, row, GLP_UP, 0, best + 1e-6 * (1 + fabs(best)));
            glp_set_obj_coef(m.lp, m.slo, 0);
            glp_set_obj_coef(m.lp, m.shi, 0);
            glp_set_obj_coef(m.lp, m.idle, wt);
            for (int i = 0; i < p->njobs; i++)
                if (m.dcol[i])
                    glp_set_obj_coef(m.lp, m.dcol[i], 1);
            st = intopt(&m) ? SCHED_POWER_CLOSEST : SCHED_POWER_NONE;
        }
    }
    for (int i = 0; i < p->njobs; i++) {
        double v = m.c0[i];
        for (int c = m.first[i]; c < m.first[i] + m.count[i]; c++)
            v += m.coef[c] * glp_mip_col_val(m.lp, c);
        sizes[i] = (p->jobs[i].fixed || st == SCHED_POWER_NONE) ? p->jobs[i].nodes : (int)lround(v);
    }
    *proven = m.proven;
    glp_delete_prob(m.lp);
    free(m.first), free(m.count), free(m.dcol), free(m.c0), free(m.coef);
    free(m.ia), free(m.ja), free(m.ar);
    return st;
}
