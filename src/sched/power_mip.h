/* Exact solving of the power model's small mixed-integer programs (src/sched/power.c)
 * with GLPK, cheaply when a proof is cheap: the LP relaxation, a lower bound on it that
 * holds whatever the simplex's accuracy, Gomory cuts, a dive to an integer solution, and
 * GLPK's branch-and-cut (glp_intopt) started from that solution when the bound does not
 * prove it optimal. docs/power.md, "Solve time", says how they are used. */
#ifndef DUCTILE_SCHED_POWER_MIP_H
#define DUCTILE_SCHED_POWER_MIP_H

#include <glpk.h>

/* Solves the LP relaxation from the current basis; GLPK's status (GLP_OPT,
 * GLP_NOFEAS, ...), or -1 when the simplex failed. primal: the primal simplex (for a
 * basis that is primal feasible or nearly so), else the dual one. */
int mip_lp(glp_prob *lp, int primal);

/* Makes the basis dual feasible for the current objective: every row basic, every
 * column at the bound its cost prefers (the dual simplex then needs no phase 1). */
void mip_dual_start(glp_prob *lp);

/* A lower bound on the LP relaxation's minimum (and so on any integer solution's):
 * weak duality with the current row duals, computed here from the rows and bounds, so
 * that it holds however accurately the simplex ended. Every column must be bounded. */
double mip_bound(glp_prob *lp);

/* Up to `rounds` rounds of Gomory mixed-integer cuts from the integer basic variables
 * with a fractional value, each round solved again (dual simplex). The cuts are rows
 * appended to lp, valid for every integer solution of lp as its bounds are now: the
 * caller deletes them (mip_del_rows) before it changes those bounds. Returns the LP's
 * status (not GLP_OPT: no integer solution, or the simplex failed). */
int mip_cuts(glp_prob *lp, int rounds);

/* Deletes the rows after the first `keep`. */
void mip_del_rows(glp_prob *lp, int keep);

/* From an optimal LP basis (else 0 at once), bounds fractional integer columns to an
 * integer and solves again, at most max_steps times (0: only whether the LP is integral
 * already): every column within 0.1 of an integer at once, else the least fractional
 * one, to its nearer integer or else the other. 1: an integer solution, in
 * x[1..ncols]; 0: none found. The columns' bounds are restored (the basis is not
 * optimal any more). */
int mip_dive(glp_prob *lp, double *x, int max_steps);

/* glp_intopt from the current (optimal) LP basis with the cuts on, started from the
 * integer solution `start` (x[1..ncols]; may be NULL), time limit tm_lim ms. 1: a
 * solution, values in x; 0: none. *proven: the answer is a proof (an optimum, or no
 * integer solution at all), not the time limit's best. */
int mip_intopt(glp_prob *lp, const double *start, int tm_lim, double *x, int *proven);

#endif
