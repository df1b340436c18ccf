/* Exact solving of the power model's small MIPs with GLPK (power_mip.h). */
#include "power_mip.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* A value this close to an integer is that integer (GLPK's own tol_int is 1e-5). */
#define INT_TOL 1e-6
/* A Gomory cut is taken only from a value whose fractional part is at least this far
 * from 0 and 1, and kept only with coefficients below CUT_MAX_COEF: beyond, rounding
 * errors could make it cut off an integer solution. */
#define CUT_MIN_FRAC 1e-3
#define CUT_MAX_COEF 1e6

int mip_lp(glp_prob *lp, int primal)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = primal ? GLP_PRIMAL : GLP_DUALP;
    parm.r_test = GLP_RT_FLIP; /* long steps: many columns change bound in one iteration */
    if (glp_simplex(lp, &parm) != 0) {
        /* a singular or otherwise unusable basis: from the standard one */
        glp_std_basis(lp);
        parm.meth = GLP_PRIMAL;
        if (glp_simplex(lp, &parm) != 0)
            return -1;
    }
    return glp_get_status(lp);
}

void mip_dual_start(glp_prob *lp)
{
    int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
    for (int i = 1; i <= nr; i++)
        glp_set_row_stat(lp, i, GLP_BS);
    for (int c = 1; c <= nc; c++) {
        int t = glp_get_col_type(lp, c), st = GLP_NL;
        if (t == GLP_FX)
            st = GLP_NS;
        else if (t == GLP_FR)
            st = GLP_NF;
        else if (t == GLP_UP || (t == GLP_DB && glp_get_obj_coef(lp, c) < 0))
            st = GLP_NU;
        glp_set_col_stat(lp, c, st);
    }
}

/* For any row multipliers y: c'z = (c - A'y)'z + y'Az, and each term is bounded below
 * by the bounds of z and of Az (a multiplier of the wrong sign for a row's only bound
 * counts as 0). */
double mip_bound(glp_prob *lp)
{
    int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
    double *d = malloc(((size_t)nc + 1) * sizeof(double));
    double *val = malloc(((size_t)nc + 1) * sizeof(double));
    int *ind = malloc(((size_t)nc + 1) * sizeof(int));
    double bound = -INFINITY;
    if (!d || !val || !ind)
        goto out;
    bound = glp_get_obj_coef(lp, 0);
    for (int j = 1; j <= nc; j++)
        d[j] = glp_get_obj_coef(lp, j);
    for (int i = 1; i <= nr; i++) {
        double y = glp_get_row_dual(lp, i);
        int t = glp_get_row_type(lp, i);
        if (y > 0 && (t == GLP_LO || t == GLP_DB || t == GLP_FX))
            bound += y * glp_get_row_lb(lp, i);
        else if (y < 0 && (t == GLP_UP || t == GLP_DB || t == GLP_FX))
            bound += y * glp_get_row_ub(lp, i);
        else
            continue;
        int n = glp_get_mat_row(lp, i, ind, val);
        for (int k = 1; k <= n; k++)
            d[ind[k]] -= y * val[k];
    }
    for (int j = 1; j <= nc; j++) {
        int t = glp_get_col_type(lp, j);
        if (d[j] > 0 && t != GLP_FR && t != GLP_UP)
            bound += d[j] * glp_get_col_lb(lp, j);
        else if (d[j] < 0 && t != GLP_FR && t != GLP_LO)
            bound += d[j] * glp_get_col_ub(lp, j);
        else if (d[j] != 0) {
            bound = -INFINITY;
            break;
        }
    }
out:
    free(d);
    free(val);
    free(ind);
    return bound;
}

typedef struct cutbuf {
    int nr, nc;
    int *ind, *rind;
    double *val, *rval;
} cutbuf_t;

/* Whether GLPK variable k (1..nr rows, then the columns) is integer in every integer
 * solution: an integer column, or a row of integer coefficients on integer columns. */
static int int_var(glp_prob *lp, cutbuf_t *b, int k)
{
    if (k > b->nr)
        return glp_get_col_kind(lp, k - b->nr) != GLP_CV;
    int n = glp_get_mat_row(lp, k, b->rind, b->rval);
    for (int e = 1; e <= n; e++)
        if (glp_get_col_kind(lp, b->rind[e]) == GLP_CV || b->rval[e] != floor(b->rval[e]))
            return 0;
    return 1;
}

static double prim(glp_prob *lp, int nr, int k)
{
    return k <= nr ? glp_get_row_prim(lp, k) : glp_get_col_prim(lp, k - nr);
}

/* The Gomory mixed-integer cut of the tableau row of basic integer variable k:
 * x_k + sum g_j y_j = beta, with y_j >= 0 the distance of non-basic x_j from its
 * bound, f0 = frac(beta), f_j = frac(g_j):
 *   sum_{j int} min(f_j / f0, (1 - f_j) / (1 - f0)) y_j
 *   + sum_{j cont} max(g_j / f0, -g_j / (1 - f0)) y_j >= 1,
 * written back in the columns (a row's y_j through its coefficients): coef[1..nc] and
 * *rhs. 0: no cut from this row. */
static int gmi_cut(glp_prob *lp, cutbuf_t *b, int k, double *coef, double *rhs)
{
    double beta = prim(lp, b->nr, k), f0 = beta - floor(beta);
    if (f0 < CUT_MIN_FRAC || f0 > 1 - CUT_MIN_FRAC)
        return 0;
    int len = glp_eval_tab_row(lp, k, b->ind, b->val);
    for (int c = 1; c <= b->nc; c++)
        coef[c] = 0;
    *rhs = 1;
    for (int t = 1; t <= len; t++) {
        int j = b->ind[t];
        int st = j <= b->nr ? glp_get_row_stat(lp, j) : glp_get_col_stat(lp, j - b->nr);
        if (st == GLP_NS)
            continue; /* fixed: y_j = 0 */
        if (st != GLP_NL && st != GLP_NU)
            return 0;
        double bnd = j <= b->nr ? (st == GLP_NL ? glp_get_row_lb(lp, j) : glp_get_row_ub(lp, j))
                                : (st == GLP_NL ? glp_get_col_lb(lp, j - b->nr)
                                                : glp_get_col_ub(lp, j - b->nr));
        /* x_k = sum val x_j: y_j = x_j - lb (NL) or ub - x_j (NU) */
        double g = st == GLP_NL ? -b->val[t] : b->val[t], pi;
        if (bnd == floor(bnd) && int_var(lp, b, j)) {
            double f = g - floor(g);
            pi = f <= f0 ? f / f0 : (1 - f) / (1 - f0);
        } else {
            pi = g > 0 ? g / f0 : -g / (1 - f0);
        }
        if (pi > CUT_MAX_COEF)
            return 0;
        double sign = st == GLP_NL ? 1 : -1;
        *rhs += pi * sign * bnd;
        if (j > b->nr) {
            coef[j - b->nr] += pi * sign;
            continue;
        }
        int n = glp_get_mat_row(lp, j, b->rind, b->rval);
        for (int e = 1; e <= n; e++)
            coef[b->rind[e]] += pi * sign * b->rval[e];
    }
    return 1;
}

#define CUTS_PER_ROUND 8

static void add_cut(glp_prob *lp, cutbuf_t *b, const double *coef, double rhs)
{
    int n = 0;
    for (int c = 1; c <= b->nc; c++)
        if (coef[c] != 0) {
            n++;
            b->rind[n] = c;
            b->rval[n] = coef[c];
        }
    int r = glp_add_rows(lp, 1);
    glp_set_mat_row(lp, r, n, b->rind, b->rval);
    glp_set_row_bnds(lp, r, GLP_LO, rhs, 0);
}

int mip_cuts(glp_prob *lp, int rounds)
{
    cutbuf_t b = {.nc = glp_get_num_cols(lp)};
    size_t cap = (size_t)b.nc + (size_t)glp_get_num_rows(lp) + (size_t)rounds * CUTS_PER_ROUND + 2;
    b.ind = malloc(cap * sizeof(int));
    b.rind = malloc(cap * sizeof(int));
    b.val = malloc(cap * sizeof(double));
    b.rval = malloc(cap * sizeof(double));
    double *coef = malloc(((size_t)b.nc + 1) * CUTS_PER_ROUND * sizeof(double));
    for (int r = 0; r < rounds && b.ind && b.rind && b.val && b.rval && coef; r++) {
        b.nr = glp_get_num_rows(lp);
        if ((size_t)(b.nr + b.nc) + 2 > cap || (!glp_bf_exists(lp) && glp_factorize(lp) != 0))
            break;
        /* every cut of the round from the same tableau: adding a row invalidates the
         * factorisation that glp_eval_tab_row needs */
        double rhs[CUTS_PER_ROUND];
        int n = 0;
        for (int k = 1; k <= b.nr + b.nc && n < CUTS_PER_ROUND; k++) {
            int st = k <= b.nr ? glp_get_row_stat(lp, k) : glp_get_col_stat(lp, k - b.nr);
            double v = prim(lp, b.nr, k);
            if (st == GLP_BS && fabs(v - floor(v + 0.5)) > INT_TOL && int_var(lp, &b, k))
                n += gmi_cut(lp, &b, k, coef + (size_t)n * ((size_t)b.nc + 1), &rhs[n]);
        }
        for (int i = 0; i < n; i++)
            add_cut(lp, &b, coef + (size_t)i * ((size_t)b.nc + 1), rhs[i]);
        if (!n || mip_lp(lp, 0) != GLP_OPT)
            break;
    }
    free(b.ind);
    free(b.rind);
    free(b.val);
    free(b.rval);
    free(coef);
    return glp_get_status(lp);
}

void mip_del_rows(glp_prob *lp, int keep)
{
    int n = glp_get_num_rows(lp) - keep;
    if (n <= 0)
        return;
    int *del = malloc(((size_t)n + 1) * sizeof(int));
    if (!del)
        return; /* the cuts stay: still valid rows, only a larger LP */
    for (int i = 1; i <= n; i++)
        del[i] = keep + i;
    glp_del_rows(lp, n, del);
    free(del);
    /* the rows' basic statuses went with them: a valid basis again */
    glp_std_basis(lp);
}

static void set_bnds(glp_prob *lp, int c, double lo, double hi)
{
    glp_set_col_bnds(lp, c, lo == hi ? GLP_FX : GLP_DB, lo, hi);
}

/* One dive step: every fractional integer column within NEAR of an integer bounded to
 * that side at once, else the least fractional one (either side). 1: the LP solved
 * again; 0: infeasible both ways (the bounds are then as they were). */
#define NEAR 0.1
static int dive_step(glp_prob *lp, int nc, int *cols, double *old)
{
    int n = 0, best = 0;
    double bestd = 1;
    for (int c = 1; c <= nc; c++) {
        double v = glp_get_col_prim(lp, c), d = fabs(v - floor(v + 0.5));
        if (glp_get_col_kind(lp, c) == GLP_CV || d <= INT_TOL)
            continue;
        if (d < bestd) {
            bestd = d;
            best = c;
        }
        if (d <= NEAR)
            cols[n++] = c;
    }
    /* the near ones together; if that fails, the least fractional alone */
    for (int pass = n ? 0 : 1; pass < 2; pass++) {
        if (pass == 1) {
            n = 1;
            cols[0] = best;
        }
        for (int side = 0; side < (pass ? 2 : 1); side++) {
            for (int k = 0; k < n; k++) {
                int c = cols[k];
                double v = glp_get_col_prim(lp, c), lo = glp_get_col_lb(lp, c);
                double hi = glp_get_col_ub(lp, c);
                bool up = (v - floor(v) > 0.5) != (side == 1);
                old[2 * k] = lo;
                old[2 * k + 1] = hi;
                if (up)
                    set_bnds(lp, c, floor(v) + 1, hi);
                else
                    set_bnds(lp, c, lo, floor(v));
            }
            if (mip_lp(lp, 0) == GLP_OPT)
                return 1;
            for (int k = 0; k < n; k++)
                set_bnds(lp, cols[k], old[2 * k], old[2 * k + 1]);
        }
    }
    return 0;
}

int mip_dive(glp_prob *lp, double *x, int max_steps)
{
    int nc = glp_get_num_cols(lp), found = 0;
    if (glp_get_status(lp) != GLP_OPT)
        return 0;
    double *lb = malloc(((size_t)nc + 1) * sizeof(double));
    double *ub = malloc(((size_t)nc + 1) * sizeof(double));
    double *old = malloc(((size_t)nc + 1) * 2 * sizeof(double));
    int *type = malloc(((size_t)nc + 1) * sizeof(int));
    int *cols = malloc(((size_t)nc + 1) * sizeof(int));
    if (!lb || !ub || !old || !type || !cols)
        goto out;
    for (int c = 1; c <= nc; c++) {
        lb[c] = glp_get_col_lb(lp, c);
        ub[c] = glp_get_col_ub(lp, c);
        type[c] = glp_get_col_type(lp, c);
    }
    for (int step = 0; step <= max_steps; step++) {
        int frac = 0;
        for (int c = 1; c <= nc && !frac; c++) {
            double v = glp_get_col_prim(lp, c);
            if (glp_get_col_kind(lp, c) != GLP_CV && fabs(v - floor(v + 0.5)) > INT_TOL)
                frac = c;
        }
        if (!frac) {
            for (int c = 1; c <= nc; c++) {
                double v = glp_get_col_prim(lp, c);
                x[c] = glp_get_col_kind(lp, c) != GLP_CV ? floor(v + 0.5) : v;
            }
            found = 1;
            break;
        }
        if (step == max_steps || !dive_step(lp, nc, cols, old))
            break;
    }
    for (int c = 1; c <= nc; c++)
        glp_set_col_bnds(lp, c, type[c], lb[c], ub[c]);
out:
    free(lb);
    free(ub);
    free(old);
    free(type);
    free(cols);
    return found;
}

typedef struct start {
    const double *x;
    int given;
} start_t;

static void on_event(glp_tree *t, void *info)
{
    start_t *s = info;
    if (glp_ios_reason(t) == GLP_IHEUR && s->x && !s->given) {
        s->given = 1;
        glp_ios_heur_sol(t, s->x);
    }
}

int mip_intopt(glp_prob *lp, const double *start, int tm_lim, double *x, int *proven)
{
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF; /* the LP relaxation is solved: its basis is the root's */
    parm.tm_lim = tm_lim;
    parm.gmi_cuts = GLP_ON;
    parm.mir_cuts = GLP_ON;
    parm.cov_cuts = GLP_ON;
    start_t s = {start, 0};
    parm.cb_func = on_event;
    parm.cb_info = &s;
    glp_intopt(lp, &parm); /* its status, not its code, says whether it found one */
    int st = glp_mip_status(lp);
    *proven = st == GLP_OPT || st == GLP_NOFEAS;
    if (st != GLP_OPT && st != GLP_FEAS)
        return 0;
    int nc = glp_get_num_cols(lp);
    for (int c = 1; c <= nc; c++)
        x[c] = glp_mip_col_val(lp, c);
    return 1;
}
