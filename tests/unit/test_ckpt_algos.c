/* The checkpointing service's decisions (src/sched/ckpt.c; seed 002 §8, acceptance
 * scenarios 7-10, 19, 20, the selection of 22 and 23): agent counts rigid and
 * malleable, the MA-RA remap, placement by each strategy and scheme, the proactive
 * scaler's two paths, the choice of nodes to give back, the scheduler's answers under
 * both priorities, and the inputs each function refuses. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "sched/ckpt.h"

static char err[256];

/* ---- scenario 7: Algorithm 5 ---------------------------------------------------- */

static int count(ckpt_app_t *app, ckpt_count_req_t r)
{
    int n = -1;
    assert_int_equal(ckpt_agent_count(app, &r, &n, err, sizeof err), 0);
    assert_int_equal(app->num_agents, n);
    return n;
}

static ckpt_count_req_t mr(int nodes, int procs, bool active, double t)
{
    return (ckpt_count_req_t){.num_nodes = nodes, .num_processes = procs, .mode = CKPT_MR,
                              .active = active, .t_sync = t};
}

/* new app: one agent a node; restart: the old count; a probe doubles while it helps */
static void agents_new_restart_probe(void **state)
{
    (void)state;
    ckpt_app_t app = {0};
    assert_int_equal(count(&app, mr(4, 64, false, -1)), 4);
    assert_true(app.exists);
    assert_int_equal(count(&app, mr(4, 64, true, 10)), 8); /* the first change grows */
    assert_int_equal(count(&app, mr(4, 64, false, -1)), 8); /* restart keeps it */
    assert_int_equal(count(&app, mr(4, 64, true, 6)), 16);  /* 10 -> 6: better */
    assert_int_equal(count(&app, mr(4, 64, true, 6)), 16);  /* equal: unchanged */
    assert_int_equal(count(&app, mr(4, 64, true, 9)), 8);   /* worse: halved */
    assert_int_equal(app.last_dir, -1);
}

/* x2 stops at the processes (MR), the nodes (SHMR) and max_agents_app */
static void agents_caps(void **state)
{
    (void)state;
    ckpt_app_t app = {.exists = true, .num_agents = 8, .old_t_sync = 10, .has_t_sync = true};
    assert_int_equal(count(&app, mr(4, 12, true, 5)), 12);
    app = (ckpt_app_t){.exists = true, .num_agents = 3, .old_t_sync = 10, .has_t_sync = true};
    ckpt_count_req_t r = mr(5, 40, true, 5);
    r.mode = CKPT_SHMR;
    assert_int_equal(count(&app, r), 5);
    app = (ckpt_app_t){.exists = true, .num_agents = 50, .old_t_sync = 10, .has_t_sync = true};
    assert_int_equal(count(&app, mr(100, 1000, true, 5)), 80);
    r = mr(100, 1000, true, 4);
    r.max_agents_app = 30;
    r.factor = 3;
    assert_int_equal(count(&app, r), 30);
    /* a restart on fewer nodes (SHMR) cannot keep more agents than nodes */
    r = mr(2, 40, false, -1);
    r.mode = CKPT_SHMR;
    assert_int_equal(count(&app, r), 2);
}

/* worse halves down to 1, never 0 */
static void agents_floor(void **state)
{
    (void)state;
    ckpt_app_t app = {.exists = true, .num_agents = 2, .old_t_sync = 1, .has_t_sync = true};
    assert_int_equal(count(&app, mr(2, 8, true, 2)), 1);
    assert_int_equal(app.last_dir, -1);
    /* 1 agent and slower again: the direction reverses, 2 agents */
    assert_int_equal(count(&app, mr(2, 8, true, 3)), 2);
    /* from 1 agent with no direction yet, slower keeps it at 1 */
    app = (ckpt_app_t){.exists = true, .num_agents = 1, .old_t_sync = 1, .has_t_sync = true};
    assert_int_equal(count(&app, mr(2, 8, true, 2)), 1);
    assert_int_equal(app.last_dir, 0);
}

/* the direction is remembered: a decrease that helped is followed by another */
static void agents_direction(void **state)
{
    (void)state;
    ckpt_app_t app = {.exists = true, .num_agents = 16, .old_t_sync = 5, .has_t_sync = true,
                      .last_dir = +1};
    assert_int_equal(count(&app, mr(16, 64, true, 8)), 8); /* grew and got slower: shrink */
    assert_int_equal(count(&app, mr(16, 64, true, 4)), 4); /* shrank and got faster: shrink */
    assert_int_equal(count(&app, mr(16, 64, true, 7)), 8); /* shrank and got slower: grow */
    assert_int_equal(app.last_dir, +1);
    assert_true(app.old_t_sync == 7);
}

/* with a tolerance, times that close count as equal (the controller's 20 %) */
static void agents_tolerance(void **state)
{
    (void)state;
    ckpt_app_t app = {.exists = true, .num_agents = 4, .old_t_sync = 1, .has_t_sync = true,
                      .last_dir = +1};
    ckpt_count_req_t r = mr(4, 16, true, 1.15);
    r.tolerance = 0.2;
    assert_int_equal(count(&app, r), 4); /* 15 % slower: noise */
    r.t_sync = 1.5;                      /* 30 % slower than 1.15: worse, shrink */
    assert_int_equal(count(&app, r), 2);
    r.t_sync = 1.3; /* 13 % faster: noise, not a reason to shrink again */
    assert_int_equal(count(&app, r), 2);
    r.tolerance = -0.1;
    int n;
    assert_int_equal(ckpt_agent_count(&app, &r, &n, err, sizeof err), -EINVAL);
}

/* the first mapping divides the resources evenly (7.2.1): 3 agents cannot split 16 */
static void agents_initial_divides(void **state)
{
    (void)state;
    ckpt_app_t app = {0};
    assert_int_equal(count(&app, mr(3, 16, false, -1)), 2);
    app = (ckpt_app_t){0};
    assert_int_equal(count(&app, mr(3, 24, false, -1)), 3);
}

/* ---- scenarios 8 and 9: Algorithm 7 and the MA-RA remap ------------------------ */

static int mcount(ckpt_ma_t s, int agents, int cur, int next)
{
    int n = -1;
    assert_int_equal(ckpt_malleable_count(s, agents, cur, next, 0, &n, err, sizeof err), 0);
    return n;
}

static void malleable_counts(void **state)
{
    (void)state;
    assert_int_equal(mcount(CKPT_MA_RA, 4, 8, 16), 4);
    assert_int_equal(mcount(CKPT_MA_RA, 3, 6, 3), 3);
    assert_int_equal(mcount(CKPT_MA_MA, 4, 4, 16), 16); /* 1:1 */
    assert_int_equal(mcount(CKPT_MA_MA, 4, 8, 16), 8);  /* 2:1 */
    assert_int_equal(mcount(CKPT_MA_MA, 8, 16, 4), 2);
    assert_int_equal(mcount(CKPT_MA_MA, 2, 8, 3), 1);   /* 0.75 floors to 0, kept at 1 */
    assert_int_equal(mcount(CKPT_MA_MA, 4, 8, 7), 3);   /* 3.5: floor */
    int n;
    assert_int_equal(ckpt_malleable_count(CKPT_MA_MA, 60, 60, 100, 0, &n, err, sizeof err), 0);
    assert_int_equal(n, 80);
    assert_int_equal(ckpt_malleable_count(CKPT_MA_MA, 60, 60, 100, 70, &n, err, sizeof err), 0);
    assert_int_equal(n, 70);
}

/* M = 2 agents, N 4 -> 7: 4 and 3, the remainder on agent 1 (index 0) */
static void remap_remainder(void **state)
{
    (void)state;
    int per[3], owner[7], used;
    assert_int_equal(ckpt_remap(7, 2, per, owner, &used, err, sizeof err), 0);
    assert_int_equal(used, 2);
    assert_int_equal(per[0], 4);
    assert_int_equal(per[1], 3);
    static const int want[] = {0, 0, 0, 0, 1, 1, 1};
    assert_memory_equal(owner, want, sizeof want);
    /* 8 onto 3: 3, 3, 2 */
    assert_int_equal(ckpt_remap(8, 3, per, NULL, &used, err, sizeof err), 0);
    assert_int_equal(per[0], 3);
    assert_int_equal(per[1], 3);
    assert_int_equal(per[2], 2);
}

/* the case the seed calls illegal: N 4 -> 1 with M = 2 drops to one agent */
static void remap_more_agents_than_resources(void **state)
{
    (void)state;
    int per[2] = {-1, -1}, owner[1] = {-1}, used;
    assert_int_equal(ckpt_remap(1, 2, per, owner, &used, err, sizeof err), 0);
    assert_int_equal(used, 1);
    assert_int_equal(per[0], 1);
    assert_int_equal(per[1], 0);
    assert_int_equal(owner[0], 0);
    assert_int_equal(mcount(CKPT_MA_RA, 2, 4, 1), 1); /* the count agrees */
    int p5[5];
    assert_int_equal(ckpt_remap(3, 5, p5, NULL, &used, err, sizeof err), 0);
    assert_int_equal(used, 3);
    static const int want[] = {1, 1, 1, 0, 0};
    assert_memory_equal(p5, want, sizeof want);
}

/* ---- scenario 10: Algorithm 6 ---------------------------------------------------- */

#define GB 1e9

/* Node 4 is full (80 agents); node 2 has room for 2 more; nodes 1 and 3 tie on memory. */
static const ckpt_node_t pool6[6] = {
    {.total_mem = 64 * GB, .avail_mem = 10 * GB, .traffic = 50, .cp_ops = 5, .power = 300},
    {.total_mem = 64 * GB, .avail_mem = 40 * GB, .traffic = 10, .cp_ops = 9, .power = 200},
    {.total_mem = 64 * GB, .avail_mem = 30 * GB, .traffic = 40, .cp_ops = 1, .power = 100,
     .agents = 78},
    {.total_mem = 64 * GB, .avail_mem = 40 * GB, .traffic = 20, .cp_ops = 2, .power = 250},
    {.total_mem = 64 * GB, .avail_mem = 50 * GB, .traffic = 5, .cp_ops = 0, .power = 90,
     .agents = 80},
    {.total_mem = 64 * GB, .avail_mem = 20 * GB, .traffic = 30, .cp_ops = 7, .power = 120},
};

static void expect_candidates(ckpt_select_t s, int count, const int *want, int nwant)
{
    int cand[6], n = -1;
    assert_int_equal(ckpt_candidates(pool6, 6, s, count, 0, cand, &n, err, sizeof err), 0);
    assert_int_equal(n, nwant);
    assert_memory_equal(cand, want, (size_t)nwant * sizeof *want);
}

static void placement_selection(void **state)
{
    (void)state;
    expect_candidates(CKPT_SEL_MEMORY, 3, (const int[]){1, 3, 2}, 3);
    expect_candidates(CKPT_SEL_BANDWIDTH, 3, (const int[]){1, 3, 5}, 3);
    expect_candidates(CKPT_SEL_FREQUENCY, 3, (const int[]){2, 3, 0}, 3);
    expect_candidates(CKPT_SEL_POWER, 3, (const int[]){2, 5, 1}, 3);
    /* default 5 candidates; the full node never is one */
    expect_candidates(CKPT_SEL_MEMORY, 0, (const int[]){1, 3, 2, 5, 0}, 5);
    expect_candidates(CKPT_SEL_POWER, 10, (const int[]){2, 5, 1, 3, 0}, 5);
}

static void expect_place(ckpt_place_cfg_t cfg, int nagents, const int *want)
{
    int map[16];
    assert_int_equal(ckpt_place(pool6, 6, nagents, &cfg, map, err, sizeof err), 0);
    assert_memory_equal(map, want, (size_t)nagents * sizeof *want);
}

static void placement_distribution(void **state)
{
    (void)state;
    ckpt_place_cfg_t c = {.select = CKPT_SEL_MEMORY, .candidate_count = 3};
    /* candidates 1, 3, 2; node 2 takes 2 agents only */
    c.dist = CKPT_DIST_ROUNDROBIN;
    expect_place(c, 9, (const int[]){1, 3, 2, 1, 3, 2, 1, 3, 1});
    c.dist = CKPT_DIST_BLOCK;
    expect_place(c, 9, (const int[]){1, 1, 1, 3, 3, 3, 2, 2, 1});
    expect_place(c, 7, (const int[]){1, 1, 1, 3, 3, 2, 2});
    c.block_size = 2;
    expect_place(c, 9, (const int[]){1, 1, 3, 3, 2, 2, 1, 1, 3});
    c.block_size = 0;
    c.dist = CKPT_DIST_FILL;
    expect_place(c, 9, (const int[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    /* at most 4 a node: node 2 (78 agents) drops out, node 5 comes in */
    c.max_agents_node = 4;
    expect_place(c, 9, (const int[]){1, 1, 1, 1, 3, 3, 3, 3, 5});
    c.dist = CKPT_DIST_ROUNDROBIN;
    c.select = CKPT_SEL_POWER;
    expect_place(c, 6, (const int[]){5, 1, 3, 5, 1, 3});
}

/* the candidates lack room: refused, nothing written */
static void placement_no_room(void **state)
{
    (void)state;
    ckpt_place_cfg_t c = {.select = CKPT_SEL_MEMORY, .dist = CKPT_DIST_FILL,
                          .candidate_count = 2, .max_agents_node = 4};
    int map[9] = {-7, -7, -7, -7, -7, -7, -7, -7, -7};
    assert_int_equal(ckpt_place(pool6, 6, 9, &c, map, err, sizeof err), -ENOSPC);
    assert_non_null(strstr(err, "room for 8 of 9"));
    assert_int_equal(map[0], -7);
    c.candidate_count = 3;
    assert_int_equal(ckpt_place(pool6, 6, 9, &c, map, err, sizeof err), 0);
}

/* ---- scenarios 19 and 20: Algorithm 8 ------------------------------------------- */

static ckpt_node_t mem_node(double avail, double depletion)
{
    return (ckpt_node_t){.total_mem = 100, .avail_mem = avail, .depletion = depletion,
                         .bw_avail = 1000, .cp_ops = 1};
}

static const ckpt_scaler_cfg_t scfg = {.depletion_min = 1, .bw_min = 10, .cp_max = 50};

static ckpt_scale_t pass(const ckpt_node_t *n, int nn, ckpt_scaler_t *st, int *node)
{
    ckpt_scale_t a = (ckpt_scale_t)-1;
    assert_int_equal(ckpt_scaler_pass(n, nn, &scfg, st, &a, node, err, sizeof err), 0);
    return a;
}

static void scaler_memory(void **state)
{
    (void)state;
    ckpt_scaler_t st = {0};
    int node;
    /* node 0 over 90 % and filling; the others pool 90 < its 100: HIGH */
    ckpt_node_t n[4] = {mem_node(5, 10), mem_node(50, 0), mem_node(40, 0), mem_node(100, 0)};
    assert_int_equal(pass(n, 3, &st, &node), CKPT_SCALE_HIGH);
    assert_int_equal(node, 0);
    /* with ample pooled memory: LOW */
    assert_int_equal(pass(n, 4, &st, &node), CKPT_SCALE_LOW);
    assert_int_equal(node, 0);
    /* over 90 % but not filling: no memory request, and nothing else */
    n[0].depletion = 0;
    assert_int_equal(pass(n, 4, &st, &node), CKPT_SCALE_NONE);
    assert_int_equal(node, -1);
    /* a node between 80 and 90 % spends its 100 from the pool: 140 - 100 < 100 */
    ckpt_node_t m[4] = {mem_node(15, 0), mem_node(5, 10), mem_node(70, 0), mem_node(70, 0)};
    assert_int_equal(pass(m, 4, &st, &node), CKPT_SCALE_HIGH);
    assert_int_equal(node, 1);
    assert_int_equal(pass(m + 1, 3, &st, &node), CKPT_SCALE_LOW);
    /* two nodes over 90 % and filling: one request a pass, for the first */
    ckpt_node_t t[3] = {mem_node(50, 0), mem_node(2, 5), mem_node(1, 9)};
    assert_int_equal(pass(t, 3, &st, &node), CKPT_SCALE_HIGH);
    assert_int_equal(node, 1);
    /* exactly at the marks does not count: used must exceed them */
    ckpt_node_t e[2] = {mem_node(10, 10), mem_node(20, 0)};
    assert_int_equal(pass(e, 2, &st, &node), CKPT_SCALE_NONE);
}

static void scaler_two_pass_low(void **state)
{
    (void)state;
    ckpt_scaler_t st = {0};
    int node;
    ckpt_node_t n[2] = {mem_node(60, 0), mem_node(60, 0)};
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_NONE);
    n[1].bw_avail = 5;
    n[1].cp_ops = 60;
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_QUERY);
    assert_true(st.pending_query);
    st.idle_answer = 1; /* the resource manager has an idle node */
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_LOW);
    assert_false(st.pending_query);
    /* idle = 0: asked again, never a request */
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_QUERY);
    st.idle_answer = 0;
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_QUERY);
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_QUERY);
    /* an answer is used once: the new Query cleared it */
    st.idle_answer = 2;
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_LOW);
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_QUERY);
    assert_int_equal(st.idle_answer, 0);
    /* poor bandwidth alone, or frequent checkpoints alone, flag nothing */
    n[1].cp_ops = 10;
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_NONE);
    assert_false(st.pending_query);
    n[1].cp_ops = 60;
    n[1].bw_avail = 500;
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_NONE);
    /* the memory path comes first */
    n[1].bw_avail = 5;
    n[0] = mem_node(5, 10);
    assert_int_equal(pass(n, 2, &st, &node), CKPT_SCALE_HIGH);
    assert_false(st.pending_query);
}

/* ---- scenario 22 (selection): Algorithm 9 ---------------------------------------- */

static void removal_choice(void **state)
{
    (void)state;
    ckpt_node_t n[5] = {
        {.total_mem = 64, .avail_mem = 30, .agents = 2},
        {.total_mem = 64, .avail_mem = 60, .agents = 5},
        {.total_mem = 64, .avail_mem = 60, .agents = 1},
        {.total_mem = 64, .avail_mem = 10, .agents = 0},
        {.total_mem = 64, .avail_mem = 45, .agents = 3},
    };
    int out[5], nout = -1;
    assert_int_equal(ckpt_removal(n, 5, 2, out, &nout, err, sizeof err), 0);
    assert_int_equal(nout, 2);
    assert_int_equal(out[0], 2); /* free memory ties: fewer agents first */
    assert_int_equal(out[1], 1);
    assert_int_equal(ckpt_removal(n, 5, 3, out, &nout, err, sizeof err), 0);
    assert_int_equal(out[2], 4);
    /* all of them: the last node stays */
    assert_int_equal(ckpt_removal(n, 5, 9, out, &nout, err, sizeof err), 0);
    assert_int_equal(nout, 4);
    static const int want[] = {2, 1, 4, 0};
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(ckpt_removal(n, 1, 1, out, &nout, err, sizeof err), 0);
    assert_int_equal(nout, 0);
}

/* ---- scenario 23: Algorithms 10 and 11 ------------------------------------------- */

static const ckpt_mjob_t jobs3[3] = {
    {.id = 1, .nodes = 8, .min_nodes = 2, .mtct = 0.5},
    {.id = 2, .nodes = 4, .min_nodes = 2, .mtct = 3.0, .final_phase = true},
    {.id = 3, .nodes = 3, .min_nodes = 2, .mtct = 1.5},
};

static ckpt_sched_out_t decide(ckpt_sched_in_t in, int *shrink)
{
    ckpt_sched_out_t out = {.shrink = shrink};
    assert_int_equal(ckpt_sched_decide(&in, &out, err, sizeof err), 0);
    return out;
}

static void favor_icheck(void **state)
{
    (void)state;
    int sh[3];
    ckpt_sched_in_t in = {.favor = CKPT_FAVOR_ICHECK, .prio = CKPT_PRIO_HIGH, .requested = 2,
                          .jobs = jobs3, .njobs = 3};
    /* no idle node: job 3 (worst MTCT not ending) gives its 1 spare, job 1 the other */
    ckpt_sched_out_t o = decide(in, sh);
    assert_int_equal(o.from_idle, 0);
    assert_int_equal(o.from_jobs, 2);
    assert_int_equal(o.unmet, 0);
    assert_memory_equal(sh, ((const int[]){1, 0, 1}), 3 * sizeof(int));
    /* one idle node first, one from job 3 */
    in.idle = 1;
    o = decide(in, sh);
    assert_int_equal(o.from_idle, 1);
    assert_memory_equal(sh, ((const int[]){0, 0, 1}), 3 * sizeof(int));
    /* more than the jobs can spare above their minimum: 1 + 6 */
    in.idle = 0;
    in.requested = 9;
    o = decide(in, sh);
    assert_int_equal(o.from_jobs, 7);
    assert_int_equal(o.unmet, 2);
    assert_memory_equal(sh, ((const int[]){6, 0, 1}), 3 * sizeof(int));
    /* LOW: idle nodes only, never a job */
    in.prio = CKPT_PRIO_LOW;
    in.requested = 2;
    o = decide(in, sh);
    assert_int_equal(o.from_idle + o.from_jobs, 0);
    assert_int_equal(o.unmet, 2);
    assert_memory_equal(sh, ((const int[]){0, 0, 0}), 3 * sizeof(int));
    in.idle = 5;
    o = decide(in, sh);
    assert_int_equal(o.from_idle, 2);
    assert_int_equal(o.reclaim, 0);
    /* while a job adapts, nothing moves */
    in.prio = CKPT_PRIO_HIGH;
    in.adapting = true;
    o = decide(in, sh);
    assert_int_equal(o.from_idle + o.from_jobs, 0);
    assert_int_equal(o.unmet, 2);
}

static void favor_app(void **state)
{
    (void)state;
    int sh[3];
    ckpt_node_t ic[3] = {{.total_mem = 100, .avail_mem = 95}, {.total_mem = 100, .avail_mem = 99},
                         {.total_mem = 100, .avail_mem = 50}};
    ckpt_sched_in_t in = {.favor = CKPT_FAVOR_APP, .prio = CKPT_PRIO_LOW, .requested = 2,
                          .idle = 4, .jobs = jobs3, .njobs = 3, .ic_nodes = ic, .n_ic = 3};
    /* LOW ignored even with idle nodes; the two nearly empty nodes are reclaimed */
    ckpt_sched_out_t o = decide(in, sh);
    assert_int_equal(o.from_idle, 0);
    assert_int_equal(o.unmet, 2);
    assert_int_equal(o.reclaim, 2);
    /* HIGH: idle nodes only, no job shrinks, no reclaim, the rest dropped */
    in.prio = CKPT_PRIO_HIGH;
    in.requested = 3;
    in.idle = 1;
    o = decide(in, sh);
    assert_int_equal(o.from_idle, 1);
    assert_int_equal(o.from_jobs, 0);
    assert_int_equal(o.unmet, 2);
    assert_int_equal(o.reclaim, 0);
    assert_memory_equal(sh, ((const int[]){0, 0, 0}), 3 * sizeof(int));
    /* every node nearly empty: one stays */
    in.prio = CKPT_PRIO_NONE;
    ic[2].avail_mem = 91;
    o = decide(in, sh);
    assert_int_equal(o.reclaim, 2);
    assert_int_equal(o.unmet, 0);
    in.n_ic = 1;
    assert_int_equal(decide(in, sh).reclaim, 0);
    /* exactly 90 % free is not above it */
    ic[0].avail_mem = 90;
    in.n_ic = 2;
    assert_int_equal(decide(in, sh).reclaim, 1);
}

/* ---- refused inputs --------------------------------------------------------------- */

static void bad_input(void **state)
{
    (void)state;
    ckpt_app_t app = {0};
    int n;
    ckpt_count_req_t r = mr(0, 4, false, -1);
    assert_int_equal(ckpt_agent_count(&app, &r, &n, err, sizeof err), -EINVAL);
    assert_false(app.exists);
    r = mr(2, 4, false, NAN);
    assert_int_equal(ckpt_agent_count(&app, &r, &n, err, sizeof err), -EINVAL);
    r = mr(2, 4, false, -1);
    r.factor = 1;
    assert_int_equal(ckpt_agent_count(&app, &r, &n, err, sizeof err), -EINVAL);
    assert_int_equal(ckpt_agent_count(NULL, &r, &n, err, sizeof err), -EINVAL);
    assert_int_equal(ckpt_malleable_count(CKPT_MA_MA, 5, 4, 8, 0, &n, err, sizeof err), -EINVAL);
    assert_int_equal(ckpt_malleable_count(CKPT_MA_MA, 2, 4, 0, 0, &n, err, sizeof err), -EINVAL);
    assert_int_equal(ckpt_malleable_count((ckpt_ma_t)9, 2, 4, 4, 0, &n, err, sizeof err), -EINVAL);
    int per[2], used;
    assert_int_equal(ckpt_remap(0, 2, per, NULL, &used, err, sizeof err), -EINVAL);
    ckpt_node_t bad = {.total_mem = 10, .avail_mem = 11};
    int out[2];
    assert_int_equal(ckpt_removal(&bad, 1, 1, out, &n, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "node 0"));
    ckpt_scaler_t st = {0};
    ckpt_scale_t a;
    ckpt_scaler_cfg_t c = {.lower = 0.95, .upper = 0.9};
    ckpt_node_t ok = mem_node(50, 0);
    assert_int_equal(ckpt_scaler_pass(&ok, 1, &c, &st, &a, &n, err, sizeof err), -EINVAL);
    assert_int_equal(ckpt_scaler_pass(&ok, 0, &scfg, &st, &a, &n, err, sizeof err), -EINVAL);
    ckpt_place_cfg_t pc = {.dist = (ckpt_dist_t)7};
    assert_int_equal(ckpt_place(pool6, 6, 2, &pc, out, err, sizeof err), -EINVAL);
    pc.dist = CKPT_DIST_FILL;
    assert_int_equal(ckpt_place(pool6, 6, 0, &pc, out, err, sizeof err), -EINVAL);
    ckpt_mjob_t j = {.id = 4, .nodes = 1, .min_nodes = 2};
    int sh[1];
    ckpt_sched_in_t in = {.prio = CKPT_PRIO_HIGH, .requested = 1, .jobs = &j, .njobs = 1};
    ckpt_sched_out_t o = {.shrink = sh};
    assert_int_equal(ckpt_sched_decide(&in, &o, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "job 4"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agents_new_restart_probe),
        cmocka_unit_test(agents_caps),
        cmocka_unit_test(agents_floor),
        cmocka_unit_test(agents_direction),
        cmocka_unit_test(agents_tolerance),
        cmocka_unit_test(agents_initial_divides),
        cmocka_unit_test(malleable_counts),
        cmocka_unit_test(remap_remainder),
        cmocka_unit_test(remap_more_agents_than_resources),
        cmocka_unit_test(placement_selection),
        cmocka_unit_test(placement_distribution),
        cmocka_unit_test(placement_no_room),
        cmocka_unit_test(scaler_memory),
        cmocka_unit_test(scaler_two_pass_low),
        cmocka_unit_test(removal_choice),
        cmocka_unit_test(favor_icheck),
        cmocka_unit_test(favor_app),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
