/* The power corridor's node-redistribution model (seed 002 Eq. 5.3, fixed as
 * docs/power.md says), solved exactly with GLPK (power_mip.c).
 *
 * A variable job's size is base + sum(move * column) over columns of its own:
 *   none, even, odd      two integer columns u, w (steps of s = 1 or 2 nodes up and
 *                        down): size = base + s u - s w; base is the current size, or
 *                        the end of the range nearest to it when it lies outside
 *   pof2, ncube, square  one binary per valid size v other than the current one c:
 *   (and even or odd     size = c + sum (v - c) y_v, sum y_v <= 1 (= 1 when c itself
 *   with c not valid)    is not a valid size)
 * so that any integer solution gives each job a size it can run on, and the nodes it
 * moves, |size - current|, are linear: |base - current| + sum |move| * column.
 *
 * The objective is lexicographic: the most nodes T given to the variable jobs (the
 * fewest idle nodes), then the fewest nodes moved D. The first version weighted them
 * ((2N + 1) idle + D, in one MIP); the optima are the same, and two stages give two
 * easier problems: T alone, then D with T fixed. Each stage is proven at the cheapest
 * step that can prove it:
 *   1. the LP relaxation with T as objective: T* <= floor(its bound);
 *   2. T fixed there, D as objective: D* >= ceil(its bound), raised by Gomory cuts;
 *   3. an integer solution: the LP's own after the cuts, or a dive from the LP
 *      without them; if its D meets the bound, it is optimal for both stages
 *      (docs/power.md, "Solve time", has the argument);
 *   4. otherwise GLPK's branch-and-cut at that T, started from the dive's solution;
 *      if T = floor(bound) has no integer solution at all, branch-and-cut on T, then
 *      on D at the T it found.
 * The bounds are weak duality from the LP's multipliers, computed by mip_bound so that
 * they hold whatever the simplex's accuracy.
 *
 * Phase 1 has the corridor as hard rows. If that has no solution, phase 2 adds slack
 * columns below the lower and above the upper bound and minimises their sum (the
 * watts outside; proven the same way, or by branch-and-cut); phase 3 keeps that sum
 * at its minimum and solves the two stages of phase 1 again. */
#include "power.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "constraint.h"
#include "power_mip.h"

/* Branch-and-cut runs only where the bounds prove nothing; each run stops after
 * MIP_TIME_LIMIT_MS with the best solution it has (as the first version did, whose
 * three phases each had that limit), and all of them together after SOLVE_LIMIT_MS. */
#define MIP_TIME_LIMIT_MS 2000
#define SOLVE_LIMIT_MS 6000
#define CUT_ROUNDS 3
#define DIVE_STEPS 40

typedef struct model {
    const sched_power_problem_t *p;
    glp_prob *lp;
    int *first, *count; /* per job: its columns (count 0: a fixed job) */
    int *base;     /* per job: the size its columns move from */
    int *lo, *hi;  /* per job: its smallest and largest valid size */
    int *srow;     /* per job: the row of its binaries (0: none) */
    int *move;     /* per column (1-based): the nodes one unit of it moves */
    int ncols, cap;
    int rows;      /* the model's own rows; Gomory cuts come after them */
    int rT, rU, slo, shi;
    double b0;     /* sum of the variable jobs' bases */
    double dconst; /* sum of |base - current| */
    double tlo, thi; /* bounds of T */
    double smax_lo, smax_hi; /* the most the draw can be below / above the corridor */
    double *x, *start;
    double deadline; /* ms, CLOCK_MONOTONIC */
    bool unproven;   /* a branch-and-cut stopped at its time limit */
} model_t;

enum { OBJ_T, OBJ_D, OBJ_S };

static int add_col(model_t *m, int kind, int hi, int move)
{
    if (m->ncols + 1 >= m->cap) {
        int ncap = m->cap ? 2 * m->cap : 64;
        int *nm = realloc(m->move, (size_t)ncap * sizeof(int));
        if (!nm)
            return -ENOMEM;
        m->move = nm;
        m->cap = ncap;
    }
    int c = glp_add_cols(m->lp, 1);
    glp_set_col_kind(m->lp, c, kind);
    if (kind == GLP_IV)
        glp_set_col_bnds(m->lp, c, hi > 0 ? GLP_DB : GLP_FX, 0, hi > 0 ? hi : 0);
    m->move[c] = move;
    m->ncols = c;
    return c;
}

/* The columns of variable job i. */
static int add_job(model_t *m, int i, char *err, size_t errlen)
{
    const sched_power_job_t *j = &m->p->jobs[i];
    sched_constraint_t k = j->constraint;
    int lo = cons_smallest_geq(j->min_nodes, k, j->min_nodes, j->max_nodes);
    int hi = cons_largest_leq(j->max_nodes, k, j->min_nodes, j->max_nodes), c = j->nodes;
    if (!lo || !hi) {
        snprintf(err, errlen, "job %lld: no size in [%d, %d] meets its node constraint %s",
                 (long long)j->id, j->min_nodes, j->max_nodes, sched_constraint_name(k));
        return -EINVAL;
    }
    bool here = c >= lo && c <= hi && cons_valid(c, k);
    bool parity = k == SCHED_CONS_EVEN || k == SCHED_CONS_ODD;
    /* steps, unless an even or odd job's current size is inside its range but not valid
     * (then |size - current| is not linear in them) */
    if (k == SCHED_CONS_NONE || (parity && (here || c < lo || c > hi))) {
        int s = k == SCHED_CONS_NONE ? 1 : 2, b = here ? c : c > hi ? hi : lo;
        m->base[i] = b;
        m->first[i] = m->ncols + 1;
        m->count[i] = 2;
        m->lo[i] = lo;
        m->hi[i] = hi;
        if (add_col(m, GLP_IV, (hi - b) / s, s) < 0 || add_col(m, GLP_IV, (b - lo) / s, -s) < 0)
            return -ENOMEM;
        return 0;
    }
    m->base[i] = c;
    m->first[i] = m->ncols + 1;
    m->lo[i] = lo;
    m->hi[i] = hi;
    int row = glp_add_rows(m->lp, 1), n = 0;
    m->srow[i] = row;
    int *ind = NULL;
    double *one = NULL;
    for (int v = lo; v; v = cons_smallest_geq(v + 1, k, lo, hi)) {
        if (v == c)
            continue;
        int col = add_col(m, GLP_BV, 1, v - c);
        int *ni = realloc(ind, ((size_t)n + 2) * sizeof(int));
        double *no = realloc(one, ((size_t)n + 2) * sizeof(double));
        if (ni)
            ind = ni;
        if (no)
            one = no;
        if (col < 0 || !ni || !no) {
            free(ind), free(one);
            return -ENOMEM;
        }
        n++;
        ind[n] = col;
        one[n] = 1;
    }
    m->count[i] = n;
    glp_set_mat_row(m->lp, row, n, ind, one);
    glp_set_row_bnds(m->lp, row, here ? GLP_UP : GLP_FX, here ? 0 : 1, 1);
    free(ind);
    free(one);
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

/* A row sum over the variable jobs of w_i * (size_i - base_i) (w_i = 1 for T, the W per
 * node above idle for the corridor's rows), plus `slack` (a column, or 0) times ss.
 * *wbase: sum w_i base_i, *wmin / *wmax: the least and most sum w_i size_i. */
static int add_sum_row(model_t *m, const double *w, int slack, double ss, double *wbase,
                       double *wmin, double *wmax)
{
    const sched_power_problem_t *p = m->p;
    int *ind = malloc(((size_t)m->ncols + 2) * sizeof(int));
    double *val = malloc(((size_t)m->ncols + 2) * sizeof(double));
    if (!ind || !val) {
        free(ind), free(val);
        return -ENOMEM;
    }
    int n = 0;
    *wbase = *wmin = *wmax = 0;
    for (int i = 0; i < p->njobs; i++) {
        if (p->jobs[i].fixed)
            continue;
        double wi = w ? w[i] : 1;
        *wbase += wi * m->base[i];
        *wmin += wi * (wi > 0 ? m->lo[i] : m->hi[i]);
        *wmax += wi * (wi > 0 ? m->hi[i] : m->lo[i]);
        for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++) {
            n++;
            ind[n] = c;
            val[n] = wi * m->move[c];
        }
    }
    if (slack) {
        n++;
        ind[n] = slack;
        val[n] = ss;
    }
    int row = glp_add_rows(m->lp, 1);
    glp_set_mat_row(m->lp, row, n, ind, val);
    free(ind);
    free(val);
    return row;
}

static int build(const sched_power_problem_t *p, model_t *m, char *err, size_t errlen)
{
    size_t n = (size_t)p->njobs + 1;
    m->p = p;
    m->lp = glp_create_prob();
    m->first = calloc(n, sizeof(int));
    m->count = calloc(n, sizeof(int));
    m->base = calloc(n, sizeof(int));
    m->lo = calloc(n, sizeof(int));
    m->hi = calloc(n, sizeof(int));
    m->srow = calloc(n, sizeof(int));
    double *w = calloc(n, sizeof(double));
    int rc = -ENOMEM;
    if (!m->lp || !m->first || !m->count || !m->base || !m->lo || !m->hi || !m->srow || !w)
        goto out;
    glp_set_obj_dir(m->lp, GLP_MIN);
    double fixed_nodes = 0, fixed_lo = 0, fixed_hi = 0;
    for (int i = 0; i < p->njobs; i++) {
        const sched_power_job_t *j = &p->jobs[i];
        if (j->fixed) {
            fixed_nodes += j->nodes;
            fixed_lo += j->nodes * j->p_min;
            fixed_hi += j->nodes * j->p_max;
            continue;
        }
        if ((rc = add_job(m, i, err, errlen)) < 0)
            goto out;
        m->dconst += abs(m->base[i] - j->nodes);
    }
    rc = -ENOMEM;
    if ((m->slo = add_col(m, GLP_CV, 0, 0)) < 0 || (m->shi = add_col(m, GLP_CV, 0, 0)) < 0)
        goto out;
    glp_set_col_bnds(m->lp, m->slo, GLP_FX, 0, 0);
    glp_set_col_bnds(m->lp, m->shi, GLP_FX, 0, 0);
    /* T = N - fixed nodes - idle, idle in [min_idle, max(N, min_idle)] */
    double np = p->nnodes - fixed_nodes, wmin, wmax;
    m->thi = np - p->min_idle;
    m->tlo = np - (p->nnodes > p->min_idle ? p->nnodes : p->min_idle);
    if ((m->rT = add_sum_row(m, NULL, 0, 0, &m->b0, &wmin, &wmax)) < 0)
        goto out;
    /* the corridor in the variable jobs' sizes: the idle nodes are np - T */
    if (p->lower > 0) {
        double a = p->lower - fixed_lo - np * p->p_idle, wb;
        for (int i = 0; i < p->njobs; i++)
            w[i] = p->jobs[i].p_min - p->p_idle;
        int r = add_sum_row(m, w, m->slo, 1, &wb, &wmin, &wmax);
        if (r < 0)
            goto out;
        glp_set_row_bnds(m->lp, r, GLP_LO, a - wb, 0);
        m->smax_lo = a - wmin > 0 ? a - wmin : 0;
    }
    if (!isinf(p->upper)) {
        double b = p->upper - fixed_hi - np * p->p_idle, wb;
        for (int i = 0; i < p->njobs; i++)
            w[i] = p->jobs[i].p_max - p->p_idle;
        int r = add_sum_row(m, w, m->shi, -1, &wb, &wmin, &wmax);
        if (r < 0)
            goto out;
        glp_set_row_bnds(m->lp, r, GLP_UP, 0, b - wb);
        m->rU = r;
        m->smax_hi = wmax - b > 0 ? wmax - b : 0;
    }
    m->rows = glp_get_num_rows(m->lp);
    m->x = calloc((size_t)m->ncols + 1, sizeof(double));
    m->start = calloc((size_t)m->ncols + 1, sizeof(double));
    rc = m->x && m->start ? 0 : -ENOMEM;
out:
    free(w);
    return rc;
}

static void model_free(model_t *m)
{
    if (m->lp)
        glp_delete_prob(m->lp);
    free(m->first);
    free(m->count);
    free(m->base);
    free(m->lo);
    free(m->hi);
    free(m->srow);
    free(m->move);
    free(m->x);
    free(m->start);
}

static void set_obj(model_t *m, int what)
{
    for (int c = 1; c <= m->ncols; c++) {
        double v = what == OBJ_T ? -m->move[c] : what == OBJ_D ? abs(m->move[c]) : 0;
        if (what == OBJ_S && (c == m->slo || c == m->shi))
            v = 1;
        glp_set_obj_coef(m->lp, c, v);
    }
}

static void set_t(model_t *m, double lo, double hi)
{
    glp_set_row_bnds(m->lp, m->rT, lo < hi ? GLP_DB : GLP_FX, lo - m->b0, hi - m->b0);
}

static double t_of(const model_t *m, const double *x)
{
    double t = m->b0;
    for (int c = 1; c <= m->ncols; c++)
        t += m->move[c] * x[c];
    return t;
}

static double d_of(const model_t *m, const double *x)
{
    double d = m->dconst;
    for (int c = 1; c <= m->ncols; c++)
        d += abs(m->move[c]) * x[c];
    return d;
}

static void sizes_of(const model_t *m, const double *x, int *sizes)
{
    const sched_power_problem_t *p = m->p;
    for (int i = 0; i < p->njobs; i++) {
        double v = p->jobs[i].fixed ? p->jobs[i].nodes : m->base[i];
        for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++)
            v += m->move[c] * x[c];
        sizes[i] = (int)lround(v);
    }
}

/* Column c non-basic at its upper bound (up) or lower one. */
static void put_col(glp_prob *lp, int c, bool up)
{
    glp_set_col_stat(lp, c, glp_get_col_type(lp, c) == GLP_FX ? GLP_NS : up ? GLP_NU : GLP_NL);
}

/* Job i's columns where they give it `size` (lo, hi or its base): at their bounds, but
 * a binary at 1 basic and its row at its bound instead, so that the row's multiplier
 * prices the job's other sizes (the basis is then dual feasible where the job is
 * optimal). */
static void put_job(model_t *m, int i, int size)
{
    for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++) {
        int to = m->base[i] + m->move[c];
        if (!m->srow[i]) {
            put_col(m->lp, c, m->move[c] > 0 ? size > m->base[i] : size < m->base[i]);
        } else if (to != size) {
            put_col(m->lp, c, false);
        } else {
            glp_set_col_stat(m->lp, c, GLP_BS);
            int r = m->srow[i];
            glp_set_row_stat(m->lp, r, glp_get_row_type(m->lp, r) == GLP_FX ? GLP_NS : GLP_NU);
        }
    }
}

/* A piece of a job's range for the greedy below: from its smallest size to its base,
 * or from its base (or smallest size) to its largest. */
typedef struct seg {
    double w; /* W per node above idle */
    int i, up, from, to;
} seg_t;

static int cmp_seg(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;
    if (x->w != y->w)
        return (x->w > y->w) - (x->w < y->w);
    if (x->up != y->up)
        return x->up - y->up;
    return x->i - y->i;
}

/* Makes basic the column that moves job i (put at `size`) up in the LP, for the
 * greedy's last job; 0 if no single column can (a binary away from a current size
 * that is not valid). */
static int basic_up(model_t *m, int i, int size)
{
    const sched_power_job_t *j = &m->p->jobs[i];
    for (int c = m->first[i]; c < m->first[i] + m->count[i]; c++) {
        int to = m->base[i] + m->move[c];
        if (!m->srow[i]) {
            if ((m->move[c] > 0) != (size >= m->base[i]))
                continue;
        } else if (size == m->base[i]) {
            /* from the current size to the next valid one */
            if (to != cons_smallest_geq(size + 1, j->constraint, m->lo[i], m->hi[i]))
                continue;
        } else {
            /* the binary at 1 (basic already) back towards the current size: its row
             * basic again */
            if (to != size || glp_get_row_type(m->lp, m->srow[i]) == GLP_FX)
                continue;
            glp_set_row_stat(m->lp, m->srow[i], GLP_BS);
        }
        glp_set_col_stat(m->lp, c, GLP_BS);
        return c;
    }
    return 0;
}

/* A basis near the T stage's optimum, so that the simplex does not walk there one job
 * per pivot (hundreds of pivots for a thousand jobs). Under the upper corridor row
 * alone, the most nodes are a fractional knapsack whose optimum is greedy: every job
 * at its smallest size, then the jobs in increasing W per node up to their largest,
 * while the watts and the nodes last; among jobs of equal W, each first up to its
 * current size (an optimum that moves fewer nodes, nearer the D stage's). The job it
 * stops in is the basic column, in the row that stopped it. Only a start: the simplex
 * finds and proves the optimum from it, whatever the greedy left out (the lower row,
 * the slack columns of phase 3). */
static void crash_t(model_t *m)
{
    const sched_power_problem_t *p = m->p;
    seg_t *sg = malloc(((size_t)p->njobs * 2 + 1) * sizeof(*sg));
    int *size = malloc(((size_t)p->njobs + 1) * sizeof(int));
    if (!sg || !size) {
        free(sg), free(size);
        mip_dual_start(m->lp);
        return;
    }
    double budget = m->rU ? glp_get_row_ub(m->lp, m->rU) : INFINITY, room = m->thi;
    int n = 0, nr = glp_get_num_rows(m->lp), brk = -1, brk_size = 0, brk_row = 0;
    for (int i = 0; i < p->njobs; i++) {
        if (p->jobs[i].fixed)
            continue;
        double w = p->jobs[i].p_max - p->p_idle;
        int lo = m->lo[i], b = m->base[i], hi = m->hi[i];
        size[i] = lo;
        room -= lo;
        budget -= w * (lo - b);
        if (b > lo && b < hi)
            sg[n++] = (seg_t){w, i, 0, lo, b};
        sg[n++] = (seg_t){w, i, 1, b > lo && b < hi ? b : lo, hi};
    }
    qsort(sg, (size_t)n, sizeof(*sg), cmp_seg);
    for (int r = 1; r <= nr; r++)
        glp_set_row_stat(m->lp, r, GLP_BS);
    for (int k = 0; k < n && brk < 0; k++) {
        int len = sg[k].to - sg[k].from, i = sg[k].i;
        double w = sg[k].w;
        if (len <= room && w * len <= budget) {
            size[i] = sg[k].to;
            room -= len;
            budget -= w * len;
        } else {
            brk = i;
            brk_size = size[i];
            brk_row = w > 0 && budget / w < room ? m->rU : m->rT;
        }
    }
    for (int i = 0; i < p->njobs; i++)
        if (!p->jobs[i].fixed)
            put_job(m, i, size[i]);
    put_col(m->lp, m->slo, false);
    put_col(m->lp, m->shi, false);
    if (brk >= 0 && brk_row && basic_up(m, brk, brk_size))
        glp_set_row_stat(m->lp, brk_row,
                         glp_get_row_type(m->lp, brk_row) == GLP_FX ? GLP_NS : GLP_NU);
    free(sg);
    free(size);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Branch-and-cut from the current LP, which is solved first; 1 with x. */
static int branch_and_cut(model_t *m, const double *start, double *x)
{
    int proven;
    double left = m->deadline - now_ms();
    if (mip_lp(m->lp, 0) != GLP_OPT)
        return 0;
    if (left < 1)
        left = 1; /* still the start solution, if there is one */
    int found = mip_intopt(m->lp, start, left < MIP_TIME_LIMIT_MS ? (int)left : MIP_TIME_LIMIT_MS,
                           x, &proven);
    if (!proven)
        m->unproven = true;
    return found;
}

/* Phase 1's two stages (and phase 3's) with the rows as they are: the most nodes T,
 * then the fewest moved. 1: m->x holds the solution; 0: none. */
static int lex(model_t *m)
{
    glp_prob *lp = m->lp;
    size_t bytes = ((size_t)m->ncols + 1) * sizeof(double);
    mip_del_rows(lp, m->rows);
    set_t(m, m->tlo, m->thi);
    set_obj(m, OBJ_T);
    crash_t(m);
    if (mip_lp(lp, 1) != GLP_OPT)
        return 0; /* not even a fractional solution */
    /* T* <= tub; with T fixed there, D* >= dlb; a solution meeting both is optimal */
    double tub = floor(m->b0 - mip_bound(lp) + 1e-6);
    if (tub > m->thi)
        tub = m->thi;
    set_t(m, tub, tub);
    set_obj(m, OBJ_D);
    if (mip_lp(lp, 1) == GLP_OPT && mip_cuts(lp, CUT_ROUNDS) == GLP_OPT) {
        double dlb = ceil(m->dconst + mip_bound(lp) - 1e-6);
        /* the cuts often leave the LP integral (no dive at all); else a dive from the
         * LP without them: their dense rows spread the fractions over many columns */
        int dove = mip_dive(lp, m->start, 0);
        if (!dove) {
            for (int r = m->rows + 1; r <= glp_get_num_rows(lp); r++)
                glp_set_row_bnds(lp, r, GLP_FR, 0, 0);
            dove = mip_lp(lp, 1) == GLP_OPT && mip_dive(lp, m->start, DIVE_STEPS);
        }
        if (dove && d_of(m, m->start) <= dlb) {
            memcpy(m->x, m->start, bytes);
            return 1;
        }
        if (branch_and_cut(m, dove ? m->start : NULL, m->x))
            return 1;
    }
    /* no integer solution with T = tub (or none found in time): branch-and-cut on T,
     * then on D at the T found */
    mip_del_rows(lp, m->rows);
    set_t(m, m->tlo, m->thi);
    set_obj(m, OBJ_T);
    mip_dual_start(lp);
    if (!branch_and_cut(m, NULL, m->start))
        return 0;
    double t = round(t_of(m, m->start));
    set_t(m, t, t);
    set_obj(m, OBJ_D);
    if (!branch_and_cut(m, m->start, m->x))
        memcpy(m->x, m->start, bytes);
    return 1;
}

static double outside_of(model_t *m, const double *x, int *sizes)
{
    const sched_power_problem_t *p = m->p;
    double lo, hi;
    sizes_of(m, x, sizes);
    sched_power_draw_of(p, sizes, &lo, &hi);
    return (lo < p->lower ? p->lower - lo : 0) + (hi > p->upper ? hi - p->upper : 0);
}

/* Phases 2 and 3: the least watts outside the corridor, then at that distance the
 * two stages of phase 1. The status, m->x for a solution. */
static sched_power_status_t closest(model_t *m, int *sizes)
{
    glp_prob *lp = m->lp;
    mip_del_rows(lp, m->rows);
    set_t(m, m->tlo, m->thi);
    glp_set_col_bnds(lp, m->slo, m->smax_lo > 0 ? GLP_DB : GLP_FX, 0, m->smax_lo);
    glp_set_col_bnds(lp, m->shi, m->smax_hi > 0 ? GLP_DB : GLP_FX, 0, m->smax_hi);
    set_obj(m, OBJ_S);
    mip_dual_start(lp);
    if (mip_lp(lp, 0) != GLP_OPT)
        return SCHED_POWER_NONE; /* the sizes cannot fit, even fractionally */
    double slb = mip_bound(lp), s = INFINITY;
    int dove = mip_dive(lp, m->start, DIVE_STEPS);
    if (dove)
        s = outside_of(m, m->start, sizes);
    if (s > slb + 1e-9 * (1 + fabs(slb))) {
        if (!branch_and_cut(m, dove ? m->start : NULL, m->start))
            return SCHED_POWER_NONE;
        s = outside_of(m, m->start, sizes);
    }
    /* phase 3: slo + shi <= s (and a hair, as GLPK's tolerances need) */
    mip_del_rows(lp, m->rows);
    double sb = s + 1e-6 * (1 + fabs(s));
    int row = glp_add_rows(lp, 1), ind[3] = {0, m->slo, m->shi};
    double val[3] = {0, 1, 1};
    glp_set_mat_row(lp, row, 2, ind, val);
    glp_set_row_bnds(lp, row, GLP_UP, 0, sb);
    m->rows = row;
    glp_set_col_bnds(lp, m->slo, m->smax_lo > 0 ? GLP_DB : GLP_FX, 0, fmin(m->smax_lo, sb));
    glp_set_col_bnds(lp, m->shi, m->smax_hi > 0 ? GLP_DB : GLP_FX, 0, fmin(m->smax_hi, sb));
    if (!lex(m)) /* cannot be, the phase 2 solution is one: keep that */
        memcpy(m->x, m->start, ((size_t)m->ncols + 1) * sizeof(double));
    return SCHED_POWER_CLOSEST;
}

int sched_power_solve(const sched_power_problem_t *p, sched_power_solution_t *sol, char *err,
                      size_t errlen)
{
    int rc = check(p, err, errlen);
    if (rc < 0)
        return rc;
    glp_term_out(GLP_OFF);
    model_t m = {.deadline = now_ms() + SOLVE_LIMIT_MS};
    rc = build(p, &m, err, errlen);
    if (rc < 0) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "power model: out of memory");
        model_free(&m);
        return rc;
    }
    sol->status = lex(&m) ? SCHED_POWER_INSIDE : closest(&m, sol->sizes);
    sol->proven = !m.unproven;
    sol->moved = 0;
    if (sol->status != SCHED_POWER_NONE)
        sizes_of(&m, m.x, sol->sizes);
    for (int i = 0; i < p->njobs; i++) {
        if (sol->status == SCHED_POWER_NONE)
            sol->sizes[i] = p->jobs[i].nodes;
        sol->moved += abs(sol->sizes[i] - p->jobs[i].nodes);
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
