#!/usr/bin/env python3
"""Aggregate measure.py --csv rows: label = GROUP-sSEED; mean over seeds per group and
policy; prints a markdown table with mebf's change against easy (first policy)."""
import csv, sys, collections
keys = ["makespan", "util", "exec_mean", "turnaround_mean", "alloc_per_node",
        "started_below", "expansions", "shrinks"]
cols = ["label", "policy", "makespan", "util", "exec_mean", "turnaround_mean",
        "alloc_per_node", "jobs_per_node", "started_below", "expansions", "shrinks", "node_hours"]
acc = collections.OrderedDict()
for r in csv.DictReader(open(sys.argv[1]), fieldnames=cols):
    g = r["label"].rsplit("-s", 1)[0]
    acc.setdefault(g, collections.OrderedDict()).setdefault(r["policy"], []).append(r)
print("| workload | policy | makespan [s] | utilization | exec mean [s] | turnaround mean [s] | allocations/node | started below request | expansions | shrinks |")
print("|---|---|---|---|---|---|---|---|---|---|")
for g, pols in acc.items():
    base = None
    for p, rows in pols.items():
        m = {k: sum(float(r[k]) for r in rows) / len(rows) for k in keys}
        if base is None:
            base = m
        def f(k, fmt):
            s = fmt % m[k]
            if m is not base and k in ("makespan", "util", "exec_mean", "turnaround_mean", "alloc_per_node"):
                s += " (%+.1f%%)" % (100 * (m[k] / base[k] - 1))
            return s
        print("| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.0f |" % (
            g, p, f("makespan", "%.0f"), f("util", "%.3f"), f("exec_mean", "%.0f"),
            f("turnaround_mean", "%.0f"), f("alloc_per_node", "%.2f"),
            m["started_below"], m["expansions"], m["shrinks"]))
