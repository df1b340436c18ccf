#!/usr/bin/env python3
"""Run `ductile sim` on one workload with several policies and print, per policy:
makespan, utilization, mean execution (run) time = end - start, mean turnaround =
end - submit, node allocations per node (every start or expand that gives a node to a
job counts once: the seed's "how many times the node has been allocated by a job"),
distinct jobs per node, jobs started below their request, expansions, shrinks, and the
node-seconds the jobs used (work + losses to imperfect scaling).

  measure.py [--ductile PATH] [--label L] [--csv] WORKLOAD POLICY[,POLICY...] [-- sim args]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile


def parse_list(s):
    out = []
    s = s.strip('"')
    if not s:
        return out
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument("--ductile", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../build/ductile"))
    ap.add_argument("--label", default="")
    ap.add_argument("--csv", action="store_true", help="machine-readable rows")
    ap.add_argument("--header", action="store_true")
    ap.add_argument("workload")
    ap.add_argument("policies")
    a = ap.parse_args(argv)
    pols = a.policies.split(",")
    with tempfile.TemporaryDirectory() as d:
        jc, ec = os.path.join(d, "jobs.csv"), os.path.join(d, "ev.csv")
        r = subprocess.run([a.ductile, "sim", "--no-progress", "--workload", a.workload,
                            "--policy", a.policies, "--json", "--jobs-csv", jc,
                            "--events-csv", ec] + extra,
                           check=True, capture_output=True, text=True)
        res = json.loads(r.stdout)
        nodes = res["nodes"]
        rows = []
        for pi, run in enumerate(res["runs"]):
            tag = pols[pi].replace(":", "_").replace("=", "_")
            # the simulator inserts the policy (spec with : and = replaced) into the name
            cand = [f for f in os.listdir(d) if f.startswith("jobs.") and f != "jobs.csv"]
            if len(pols) == 1:
                jf, ef = jc, ec
            else:
                jf = os.path.join(d, "jobs.%s.csv" % tag)
                ef = os.path.join(d, "ev.%s.csv" % tag)
                if not os.path.exists(jf):
                    sys.exit("no %s among %s" % (jf, cand))
            jobs = list(csv.DictReader(open(jf)))
            exe = [float(j["end"]) - float(j["start"]) for j in jobs if j["end"]]
            tat = [float(j["end"]) - float(j["submit"]) for j in jobs if j["end"]]
            alloc = [0] * nodes
            held = {}
            distinct = [set() for _ in range(nodes)]
            below = 0
            req = {}
            if os.path.isfile(a.workload):
                wl = json.load(open(a.workload))
                wjobs = wl["jobs"] if isinstance(wl, dict) else wl
                for i, j in enumerate(wjobs):
                    req[int(j.get("id", i + 1))] = j["nodes"]
            else:  # generated (esp): the first policy must start jobs at their request (easy)
                first = jc if len(pols) == 1 else os.path.join(
                    d, "jobs.%s.csv" % pols[0].replace(":", "_").replace("=", "_"))
                for j in csv.DictReader(open(first)):
                    req[int(j["id"])] = int(j["nodes"])
            nodesec = 0.0
            last = {}
            for e in csv.DictReader(open(ef)):
                job = int(e["job"])
                t = float(e["time"])
                lst = set(parse_list(e["node_list"]))
                if job in last:
                    t0, n0 = last[job]
                    nodesec += (t - t0) * n0
                last[job] = (t, len(lst))
                if e["op"] == "start" and int(e["nodes_after"]) < req[job]:
                    below += 1
                new = lst - held.get(job, set())
                for n in new:
                    alloc[n] += 1
                    distinct[n].add(job)
                held[job] = lst
            rows.append({
                "label": a.label, "policy": pols[pi],
                "makespan": run["makespan"], "util": run["utilization"],
                "exec_mean": sum(exe) / len(exe), "turnaround_mean": sum(tat) / len(tat),
                "alloc_per_node": sum(alloc) / nodes,
                "jobs_per_node": sum(len(x) for x in distinct) / nodes,
                "started_below": below, "expansions": run["expansions"],
                "shrinks": run["shrinks"], "node_hours": nodesec / 3600,
            })
    keys = ["label", "policy", "makespan", "util", "exec_mean", "turnaround_mean",
            "alloc_per_node", "jobs_per_node", "started_below", "expansions", "shrinks",
            "node_hours"]
    if a.csv:
        w = csv.DictWriter(sys.stdout, keys)
        if a.header:
            w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()})
        return
    base = rows[0]
    print("%-34s %10s %6s %9s %9s %6s %6s %5s %5s %5s %9s" % (
        "policy", "makespan", "util", "exec", "turnar.", "alloc/n", "jobs/n", "below",
        "exp", "shr", "node-h"))
    for r in rows:
        def rel(k):
            return "" if r is base else " (%+.1f%%)" % (100 * (r[k] / base[k] - 1))
        print("%-34s %10.0f %6.3f %9.0f %9.0f %7.2f %6.2f %5d %5d %5d %9.0f%s" % (
            r["policy"], r["makespan"], r["util"], r["exec_mean"], r["turnaround_mean"],
            r["alloc_per_node"], r["jobs_per_node"], r["started_below"], r["expansions"],
            r["shrinks"], r["node_hours"],
            "" if r is base else "   makespan%s exec%s turn%s" % (rel("makespan"), rel("exec_mean"), rel("turnaround_mean"))))


if __name__ == "__main__":
    main()
