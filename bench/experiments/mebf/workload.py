#!/usr/bin/env python3
"""Seed 003 §4.1.2 (MEBF) workloads for `ductile sim`: offline, all-malleable jobs on
500 nodes.  Every parameter the seed leaves open is a command-line option; the
defaults are the choices documented in docs/experiments.md ("Seed 003 §4.1.2").

  workload.py --jobs 100 --app mixed --seed 3 > w.json

Per job (drawn with Python's random.Random(seed), in this order per job):
  type      compute / read / write (--app), mixed = exactly 50/25/25 % of the jobs,
            shuffled
  nodes     requested size, uniform integer in [--size-lo, --size-hi] (default 2..12,
            mean 7: 300 jobs x 7 / 500 nodes = 4.2 allocations per node under EASY,
            close to the seed's 4.1 for EBF, Fig. 4.3)
  runtime   seconds at the requested size, uniform in [--rt-lo, --rt-hi]
            (default 1800..21600 s, 0.5-6 h)
  walltime  = runtime (the seed estimates from recorded dedicated runs: exact)
  speedup   amdahl:F with F by type (--f-compute 0.01, --f-read 0.10, --f-write 0.05),
            or --serial F for every job (for sweeps; 0 = linear)
  min       --min-rule: 'elastisim' max(1, floor(0.2 x nodes)) (default),
            'half' ceil(nodes/2), 'pref' = nodes (no start below the request)
  max       largest n <= cluster with efficiency S(n)/n > 0.5, at least nodes
            (--max-rule eff50, default), or 'x4' min(cluster, 4 x nodes), 'pref' = nodes
  submit    0 for every job (offline); priority is then job id (FCFS order)
"""
import argparse
import json
import math
import random


def amdahl(f, n):
    return 1.0 / (f + (1.0 - f) / n)


def max_eff50(f, cluster):
    if f <= 0:
        return cluster
    best = 1
    for n in range(1, cluster + 1):
        if amdahl(f, n) / n > 0.5:
            best = n
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, required=True)
    ap.add_argument("--app", choices=["compute", "read", "write", "mixed"], required=True)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--cluster", type=int, default=500)
    ap.add_argument("--size-lo", type=int, default=2)
    ap.add_argument("--size-hi", type=int, default=12)
    ap.add_argument("--rt-lo", type=float, default=1800)
    ap.add_argument("--rt-hi", type=float, default=21600)
    ap.add_argument("--f-compute", type=float, default=0.01)
    ap.add_argument("--f-read", type=float, default=0.10)
    ap.add_argument("--f-write", type=float, default=0.05)
    ap.add_argument("--serial", type=float, default=None)
    ap.add_argument("--min-rule", choices=["elastisim", "half", "pref"], default="elastisim")
    ap.add_argument("--max-rule", choices=["eff50", "x4", "pref"], default="eff50")
    ap.add_argument("--interarrival", type=float, default=0,
                    help="0: offline (all at t=0); else Poisson arrivals with this mean")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    if a.app == "mixed":
        nc = a.jobs // 2
        nr = a.jobs // 4
        types = ["compute"] * nc + ["read"] * nr + ["write"] * (a.jobs - nc - nr)
        rng.shuffle(types)
    else:
        types = [a.app] * a.jobs
    fs = {"compute": a.f_compute, "read": a.f_read, "write": a.f_write}
    jobs = []
    t = 0.0
    for i, ty in enumerate(types):
        n = rng.randint(a.size_lo, a.size_hi)
        rt = round(rng.uniform(a.rt_lo, a.rt_hi), 1)
        f = a.serial if a.serial is not None else fs[ty]
        if a.interarrival > 0:
            t += rng.expovariate(1.0 / a.interarrival)
        mn = {"elastisim": max(1, int(math.floor(0.2 * n))),
              "half": (n + 1) // 2, "pref": n}[a.min_rule]
        mx = {"eff50": max(n, max_eff50(f, a.cluster)),
              "x4": min(a.cluster, 4 * n), "pref": n}[a.max_rule]
        jobs.append({
            "id": i + 1, "submit": round(t, 1), "runtime": rt, "walltime": rt,
            "nodes": n, "type": "malleable", "min": mn, "max": mx, "pref": n,
            "speedup": "linear" if f == 0 else "amdahl:%g" % f, "tag": ty,
        })
    print(json.dumps({"nodes": a.cluster, "jobs": jobs}, indent=None))


if __name__ == "__main__":
    main()
