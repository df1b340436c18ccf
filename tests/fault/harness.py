#!/usr/bin/env python3
"""Ductile's fault-injection harness (issue 7, "Then hunt for more").

Each round starts a real emulated cluster (`ductile cluster up`) in a temporary
directory, submits a mixed workload (rigid shell loops, the task farm and jacobi2d
under `ductile mpirun`, malleable under fpsma-pwma, some with --requeue), injects one
or two faults at random times while the jobs run, heals them, waits for every job to
end and checks the invariants:

  acked-once      every acknowledged job (the CLI printed its id) exists exactly once,
                  under its own name, and no submission made two jobs
  once-at-a-time  no two runs of a job overlap in time (each run of a job script
                  leaves a start marker, heartbeats and an end marker)
  state           the final state matches the markers (COMPLETED with exit 0 after a
                  full run; FAILED with the run's exit code; no run after the
                  recorded end; no second run of a job without --requeue)
  settled         every job ends (none stuck) and every submission is acknowledged
                  once the faults are healed
  daemons         no daemon dies of a fault that did not kill it
  leftovers       after `cluster down` no process of the cluster is left (command
                  line, working directory or environment under the round's directory,
                  or a process in the node daemons' cgroups)

Every round has its own random generator seeded from (seed, round), so one round can
be replayed alone: --seed S --first-round K --rounds 1.  Python 3 standard library
only.  Needs root for the full-disk fault (a tmpfs) and for dropping connections
(`ss -K`); without it those kinds are left out and said so.
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

KINDS = ["controller", "nodekill", "nodestop", "conndrop", "diskfull"]
TERMINAL = {"CD", "F", "CA", "TO", "NF"}
BEAT = 0.2  # seconds between a run's heartbeats


def now():
    return time.time()


class Round:
    def __init__(self, args, number):
        self.a = args
        self.n = number
        self.rng = random.Random("%d:%d" % (args.seed, number))
        self.violations = []  # (kind, detail)
        self.notes = []
        self.faults = []  # descriptions
        self.jobs = []  # dicts: tag, kind, requeue, acked id, attempts
        self.lock = threading.Lock()
        self.mounted = False
        self.busy = set()  # daemons a fault is killing or restarting on purpose
        self.died = {}  # daemon -> times it died of something else

    # ---- helpers -------------------------------------------------------------------
    def violate(self, kind, detail):
        with self.lock:
            self.violations.append((kind, detail))

    def env(self):
        e = dict(os.environ)
        e["DUCTILE_CONF"] = self.conf
        return e

    def d(self, *argv, timeout=20, cwd=None):
        """Runs the CLI; (rc, stdout, stderr)."""
        try:
            p = subprocess.run([self.a.bin] + list(argv), env=self.env(), cwd=cwd or self.T,
                               capture_output=True, text=True, timeout=timeout)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return 124, "", "timed out after %ds" % timeout

    def pid(self, name):
        try:
            with open(os.path.join(self.C, name)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    @staticmethod
    def alive(pid):
        if pid <= 0:
            return False
        try:
            with open("/proc/%d/stat" % pid) as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
            return st not in ("Z", "X")
        except (OSError, IndexError):
            return False

    def spawn_daemon(self, argv, log, pidfile):
        with open(os.path.join(self.C, "log", log), "ab") as lf:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf,
                                 start_new_session=True, env=self.env(), cwd="/")
        with open(os.path.join(self.C, pidfile), "w") as f:
            f.write("%d\n" % p.pid)
        self.children.append(p)
        return p.pid

    def start_ctld(self):
        return self.spawn_daemon([self.bindir + "/ductiled", "--conf", self.conf],
                                 "ductiled.log", "ctld.pid")

    def start_noded(self, node):
        return self.spawn_daemon([self.bindir + "/ductile-noded", "--conf", self.conf,
                                  "--node", node], "noded-%s.log" % node, "noded-%s.pid" % node)

    def kill9_and_wait(self, pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        end = now() + 10
        while self.alive(pid) and now() < end:
            for c in self.children:  # reap the ones we started
                c.poll()
            time.sleep(0.02)

    def log_lines(self, name, lines):
        """The last lines of a daemon's log, or None when it has none."""
        try:
            with open(os.path.join(self.C, "log", name), errors="replace") as f:
                return [x.rstrip() for x in f.readlines()[-lines:]]
        except OSError:
            return None

    def log_tail(self, name, lines=8):
        tail = self.log_lines(name, lines)
        return "(no log)" if tail is None else " | ".join(tail)

    # ---- set-up --------------------------------------------------------------------
    def up(self):
        self.T = os.path.realpath(tempfile.mkdtemp(prefix="ductile-fault-", dir=self.a.tmp))
        os.chmod(self.T, 0o755)
        self.C = os.path.join(self.T, "c")
        self.M = os.path.join(self.T, "marks")
        self.conf = os.path.join(self.C, "ductile.conf")
        self.bindir = os.path.dirname(os.path.abspath(self.a.bin))
        self.children = []
        os.makedirs(self.M, mode=0o777)
        os.chmod(self.M, 0o777)
        state = os.path.join(self.C, "state")
        os.makedirs(state)
        if "diskfull" in self.a.kinds:
            # the controller's state directory (and the node daemons' spool in it) on a
            # small tmpfs, so that the full-disk fault fills a disk of its own
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % self.a.disk_mb,
                                "tmpfs", state], capture_output=True, text=True)
            self.mounted = r.returncode == 0
        rc, out, err = self.d("cluster", "up", "--nodes", str(self.a.nodes), "--dir", self.C,
                              "--tick", "1", "--node-timeout", str(self.a.node_timeout),
                              "--policy", "fpsma-pwma", "--resize-timeout", "3",
                              "--set", "KillWait=%g" % self.a.kill_wait, timeout=60)
        if rc != 0:
            raise RuntimeError("cluster up: %s %s" % (out, err))
        self.port = None
        with open(self.conf) as f:
            for line in f:
                k, _, v = line.partition("=")
                if k.strip() == "ControlPort":
                    self.port = int(v.strip())
        self.nodes = ["n%d" % i if self.a.nodes < 10 else "n%02d" % i
                      for i in range(1, self.a.nodes + 1)]

    # ---- workload ------------------------------------------------------------------
    def make_job(self, i):
        r = self.rng
        kinds = [k for k in ["rigid"] * 3 + ["farm", "jacobi"] if k in self.a.workload]
        kind = r.choice(kinds)
        requeue = r.random() < 0.5
        tag = "r%d-j%d-%s" % (self.n, i, kind)
        opts = []
        if kind == "rigid":
            opts.append("--nodes=%d" % r.randint(1, 2))
            steps = int(r.uniform(1.0, 8.0) / 0.2)
            work = ("i=0; while [ $i -lt %d ]; do sleep 0.2; i=$((i+1)); done" % steps)
        elif kind == "farm":
            opts += ["--nodes=1", "--malleable", "--min-nodes=1", "--max-nodes=%d" % self.a.nodes]
            work = "%s/taskfarm --items %d --ms 20" % (self.bindir, r.randint(60, 150))
        else:
            opts += ["--nodes=2", "--malleable", "--min-nodes=1", "--max-nodes=%d" % self.a.nodes]
            work = ("env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 %s mpirun --ppn 1 "
                    "%s/jacobi2d --n 48 --iters %d --delay-us 2000"
                    % (self.a.bin, self.bindir, r.randint(200, 600)))
        if requeue:
            opts.append("--requeue")
        body = "#!/bin/sh\n"
        body += "".join("#DUCTILE %s\n" % o for o in opts)
        body += ("export PATH=%s:$PATH\n"
                 "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                 "export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo\n"
                 % self.bindir)
        # one marker set per run: <job id>.<pid>.start/.beat/.end
        body += ('m="%s/$DUCTILE_JOB_ID.$$"\n'
                 'date +%%s.%%N > "$m.start"\n'
                 '( while kill -0 $$ 2>/dev/null; do date +%%s.%%N >> "$m.beat"; '
                 'sleep %s; done ) &\n'
                 'b=$!\n'
                 '%s\n'
                 'rc=$?\n'
                 'kill $b 2>/dev/null\n'
                 'echo "$(date +%%s.%%N) $rc" > "$m.end"\n'
                 'exit $rc\n' % (self.M, BEAT, work))
        path = os.path.join(self.T, tag + ".sh")
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)
        return {"tag": tag, "kind": kind, "requeue": requeue, "script": path, "id": None,
                "attempts": 0, "errors": []}

    def submit(self, job, deadline):
        """Submits until acknowledged (a client that retries, as users do)."""
        while now() < deadline:
            job["attempts"] += 1
            rc, out, err = self.d("submit", "-J", job["tag"], job["script"], timeout=15)
            for line in out.splitlines():
                if line.startswith("Submitted job "):
                    job["id"] = int(line.split()[2])
                    return
            job["errors"].append((err or out).strip()[:200])
            time.sleep(0.3)

    # ---- faults --------------------------------------------------------------------
    def fault_controller(self, f):
        down = self.rng.uniform(0.2, 1.5)
        f["desc"] = "kill -9 controller, restart after %.1fs" % down
        yield
        with self.lock:
            self.busy.add("ctld")
        self.kill9_and_wait(self.pid("ctld.pid"))
        time.sleep(down)
        self.start_ctld()
        with self.lock:
            self.busy.discard("ctld")

    def pick_node(self, f):
        """At fault time: a node that runs a job if there is one (and none that another
        fault of the round has), else any, drawn with the fault's own generator."""
        rc, out, _ = self.d("nodes", "--json", timeout=5)
        busy = []
        if rc == 0:
            try:
                busy = [x["name"] for x in json.loads(out) if x.get("state") not in ("idle",)]
            except (ValueError, KeyError, TypeError):
                pass
        with self.lock:
            free = [n for n in self.nodes if n not in self.taken]
            choice = sorted(set(busy) & set(free)) or free
            node = f["rng"].choice(choice)
            self.taken.add(node)
        return node

    def fault_nodekill(self, f):
        down = self.rng.uniform(0.2, 2.0)
        f["desc"] = "kill -9 noded, restart after %.1fs" % down
        yield
        node = self.pick_node(f)
        f["desc"] = "kill -9 noded %s, restart after %.1fs" % (node, down)
        with self.lock:
            self.busy.add(node)
        self.kill9_and_wait(self.pid("noded-%s.pid" % node))
        time.sleep(down)
        self.start_noded(node)
        with self.lock:
            self.busy.discard(node)

    def fault_nodestop(self, f):
        held = self.a.node_timeout + self.rng.uniform(1.0, 4.0)
        yield
        node = self.pick_node(f)
        f["desc"] = "SIGSTOP noded %s for %.1fs (NodeTimeout %ds)" % (node, held,
                                                                      self.a.node_timeout)
        pid = self.pid("noded-%s.pid" % node)
        f["stopped"] = now()
        os.kill(pid, signal.SIGSTOP)
        time.sleep(held)
        os.kill(pid, signal.SIGCONT)
        f["resumed"] = now()

    def fault_conndrop(self, f):
        times = self.rng.randint(1, 3)
        f["desc"] = "drop the TCP connections of port %d (ss -K) x%d" % (self.port, times)
        yield
        for _ in range(times):
            subprocess.run(["ss", "-K", "( sport = :%d or dport = :%d )" % (self.port, self.port)],
                           capture_output=True)
            time.sleep(self.rng.uniform(0.1, 1.0))

    def fault_diskfull(self, f):
        held = self.rng.uniform(1.0, 3.0)
        f["desc"] = "fill the state dir's %dM tmpfs for %.1fs" % (self.a.disk_mb, held)
        yield
        fill = os.path.join(self.C, "state", "fill")
        try:
            with open(fill, "wb") as fh:
                block = b"\0" * (1 << 20)
                while True:
                    fh.write(block)
                    fh.flush()
        except OSError:
            pass
        time.sleep(held)
        try:
            os.unlink(fill)
        except OSError:
            pass

    def plan_faults(self):
        kinds = list(self.a.kinds)
        if "diskfull" in kinds and not self.mounted:
            kinds.remove("diskfull")
            self.notes.append("diskfull left out: cannot mount a tmpfs")
        if not kinds:
            return []
        count = self.rng.choice([1, 2]) if len(kinds) > 1 else 1
        self.taken = set()
        plan = []
        for i in range(count):
            kind = self.rng.choice(kinds)
            f = {"kind": kind, "at": self.rng.uniform(0.5, self.a.window),
                 "rng": random.Random("%d:%d:%d" % (self.a.seed, self.n, i))}
            if kind in ("controller", "diskfull", "conndrop") and \
                    any(p["kind"] == kind for p in plan):
                continue  # one of these at a time
            f["gen"] = getattr(self, "fault_" + kind)(f)
            next(f["gen"])  # draws its parameters now, so a round replays alike
            plan.append(f)
        return plan

    # ---- the round -----------------------------------------------------------------
    def run(self):
        t0 = now()
        self.up()
        njobs = self.rng.randint(self.a.jobs_min, self.a.jobs_max)
        self.jobs = [self.make_job(i) for i in range(njobs)]
        # half the jobs at once, the rest during the fault window
        at = [0.0 if i < (njobs + 1) // 2 else self.rng.uniform(0.3, self.a.window)
              for i in range(njobs)]
        plan = self.plan_faults()
        self.faults = plan
        start = now()
        threads = []

        def later(delay, fn, *args):
            def go():
                time.sleep(max(0.0, start + delay - now()))
                fn(*args)
            t = threading.Thread(target=go, daemon=True)
            t.start()
            threads.append(t)

        def run_fault(f):
            f["t"] = now() - start
            try:
                next(f["gen"])
            except StopIteration:
                pass
            f["healed"] = now() - start

        for job, delay in zip(self.jobs, at):
            later(delay, self.submit, job, start + delay + self.a.submit_deadline)
        for f in plan:
            later(f["at"], run_fault, f)
        self.supervising = True
        sup = threading.Thread(target=self.supervise, daemon=True)
        sup.start()
        for t in threads:
            t.join()
        healed = now()
        self.settle(healed)
        self.supervising = False
        sup.join()
        self.check_jobs(healed)
        self.down()
        self.elapsed = now() - t0

    def supervise(self):
        """No daemon dies of a fault that did not kill it. A dead one is a violation and
        is restarted half a second later, as a service manager would, so that the round
        can still check its jobs."""
        while self.supervising:
            time.sleep(0.2)
            for c in self.children:
                c.poll()
            for name, pidfile, start, log in \
                    [("ctld", "ctld.pid", self.start_ctld, "ductiled.log")] + \
                    [(n, "noded-%s.pid" % n, lambda n=n: self.start_noded(n), "noded-%s.log" % n)
                     for n in self.nodes]:
                with self.lock:
                    if name in self.busy:
                        continue
                if self.alive(self.pid(pidfile)):
                    continue
                time.sleep(0.1)
                with self.lock:
                    if name in self.busy or self.alive(self.pid(pidfile)):
                        continue
                self.died[name] = self.died.get(name, 0) + 1
                if self.died[name] <= 3:
                    self.violate("daemons", "%s died at +%.1fs (log: %s)"
                                 % ("controller" if name == "ctld" else "noded " + name,
                                    now() - self.T_start, self.log_tail(log, 3)))
                time.sleep(0.5)
                start()

    def show(self, jid):
        rc, out, err = self.d("show", str(jid), "--json")
        if rc != 0:
            return None, (err or out).strip()
        try:
            return json.loads(out), ""
        except ValueError:
            return None, "bad JSON: %r" % out[:200]

    def settle(self, healed):
        deadline = healed + self.a.settle
        while True:
            pending = []
            for j in self.jobs:
                if j["id"] is None:
                    continue
                s, err = self.show(j["id"])
                j["final"] = s
                j["show_err"] = err
                if s is None or s.get("state") not in TERMINAL:
                    pending.append(j)
            if not pending or now() > deadline:
                break
            time.sleep(0.5)
        runs = self.runs() if pending else {}
        for j in pending:
            s = j.get("final")
            rs = runs.get(j["id"], [])
            events = ", ".join("+%.1fs %s %s->%s %s" % (e.get("time", 0) - self.t_base(),
                                                          e.get("event"), e.get("before"),
                                                          e.get("after"), e.get("detail"))
                               for e in (s.get("events") or [])[-4:]) if s else ""
            self.violate("settled", "job %s (%s) not ended %ds after the faults healed: %s; "
                         "runs: %s; last events: %s"
                         % (j["id"], j["tag"], self.a.settle,
                            ("state %s %s" % (s.get("state"), s.get("reason"))) if s
                            else j.get("show_err"),
                            self.fmt_runs(rs, alive=True) if rs else "none", events or "none"))
        for j in self.jobs:
            if j["id"] is None:
                self.violate("settled", "%s never acknowledged in %ds (%d tries, last: %s)"
                             % (j["tag"], self.a.submit_deadline, j["attempts"],
                                j["errors"][-1] if j["errors"] else "?"))
        time.sleep(2 * BEAT + 0.5)  # so that a run still going shows a fresh heartbeat

    # ---- markers -------------------------------------------------------------------
    def runs(self):
        """{job id: [run]}; a run: pid, start, last (heartbeat or end), end, rc."""
        out = {}
        for p in glob.glob(os.path.join(self.M, "*.start")):
            base = p[:-len(".start")]
            jid, pid = os.path.basename(base).split(".")
            try:
                start = float(open(p).read().strip() or 0)
            except (OSError, ValueError):
                continue
            last = start
            try:
                beats = [float(x) for x in open(base + ".beat").read().split()]
                if beats:
                    last = max(last, beats[-1])
            except (OSError, ValueError):
                pass
            end = rc = None
            try:
                e = open(base + ".end").read().split()
                end, rc = float(e[0]), int(e[1])
                last = max(last, end)
            except (OSError, ValueError, IndexError):
                pass
            out.setdefault(int(jid), []).append(
                {"pid": int(pid), "start": start, "last": last, "end": end, "rc": rc})
        for v in out.values():
            v.sort(key=lambda r: r["start"])
        return out

    def check_jobs(self, healed):
        runs = self.runs()
        # acked-once: every acknowledged job exists once, under its name; no duplicates
        rc, out, err = self.d("history", "--json", "--limit", "100000")
        hist = []
        if rc == 0:
            try:
                hist = json.loads(out)
            except ValueError:
                self.violate("acked-once", "history: bad JSON %r" % out[:200])
        else:
            self.violate("acked-once", "history failed: %s" % (err or out).strip())
        rc, out, err = self.d("queue", "--json")
        queue = json.loads(out) if rc == 0 and out.strip().startswith("[") else []
        everything = hist + queue
        by_id, by_name = {}, {}
        for h in everything:
            by_id.setdefault(h["id"], []).append(h)
            by_name.setdefault(h.get("name"), []).append(h["id"])
        for j in self.jobs:
            if j["id"] is None:
                continue
            s = j.get("final")
            if s is None:
                self.violate("acked-once", "acknowledged job %d (%s) is gone: show says %s"
                             % (j["id"], j["tag"], j.get("show_err")))
                continue
            if s.get("name") != j["tag"]:
                self.violate("acked-once", "job %d is %r, acknowledged as %s (id reused?)"
                             % (j["id"], s.get("name"), j["tag"]))
            n = len(by_id.get(j["id"], []))
            if hist and n != 1:
                self.violate("acked-once", "job %d (%s) listed %d times by history+queue"
                             % (j["id"], j["tag"], n))
            ids = sorted(set(by_name.get(j["tag"], [])))
            if len(ids) > 1:
                self.violate("acked-once", "%s submitted once (acknowledged as %d, %d tries) "
                             "but exists as jobs %s" % (j["tag"], j["id"], j["attempts"], ids))
        # once-at-a-time and state
        for j in self.jobs:
            jid, s = j["id"], j.get("final")
            if jid is None or s is None:
                continue
            rs = runs.get(jid, [])
            desc = "job %d (%s%s)" % (jid, j["tag"], ", requeue" if j["requeue"] else "")
            ends = 0.0
            for a in rs:
                if ends and a["start"] < ends:
                    self.violate("once-at-a-time", "%s: run pid %d started at +%.2fs while an "
                                 "earlier run lived until +%.2fs; runs: %s"
                                 % (desc, a["pid"], a["start"] - self.t_base(),
                                    ends - self.t_base(), self.fmt_runs(rs)))
                ends = max(ends, a["last"])
            st = s.get("state")
            if st not in TERMINAL:
                continue  # reported by settle
            jend = s.get("end") or 0.0
            if len(rs) > 1 and not j["requeue"]:
                self.violate("state", "%s without --requeue ran %d times: %s"
                             % (desc, len(rs), self.fmt_runs(rs)))
            for a in rs:
                if self.alive(a["pid"]) and self.is_ours(a["pid"]):
                    self.violate("state", "%s is %s since +%.2fs but run pid %d still runs "
                                 "(parent %s)" % (desc, st, jend - self.t_base(), a["pid"],
                                                  self.ppid(a["pid"])))
                elif a["last"] > max(jend, healed) + self.a.grace:
                    self.violate("state", "%s is %s since +%.2fs but run pid %d ran until "
                                 "+%.2fs (faults healed at +%.2fs)"
                                 % (desc, st, jend - self.t_base(), a["pid"],
                                    a["last"] - self.t_base(), healed - self.t_base()))
            last = rs[-1] if rs else None
            ec = s.get("exit_code")
            if st == "CD":
                if not last or last["end"] is None or last["rc"] != 0 or ec != 0:
                    self.violate("state", "%s COMPLETED (exit %s) but its last run %s"
                                 % (desc, ec, "never started" if not last else
                                    "did not finish" if last["end"] is None else
                                    "exited %d" % last["rc"]))
            elif st in ("F", "NF"):
                if last and last["end"] is not None and last["rc"] == 0 \
                        and not self.node_stopped_at(last["end"]):
                    # a run that completed is COMPLETED; the one excuse is a node daemon
                    # stopped (unreachable) when its job ended, which cannot report it
                    self.violate("state", "%s %s (%s) at +%.2fs but its run completed with "
                                 "exit 0 at +%.2fs" % (desc, s.get("state_name"), s.get("reason"),
                                                       jend - self.t_base(),
                                                       last["end"] - self.t_base()))
                elif last and last["end"] is not None and last["rc"] != 0 and ec != last["rc"] \
                        and st == "F":
                    self.violate("state", "%s FAILED (%s) with exit %s but its run exited %d"
                                 % (desc, s.get("reason"), ec, last["rc"]))
            elif st in ("CA", "TO"):
                self.violate("state", "%s is %s (%s) though nobody cancelled it and it has no "
                             "time limit" % (desc, s.get("state_name"), s.get("reason")))
            # unharmed: faults that leave every node daemon running and connected within
            # NodeTimeout (controller restarts, dropped connections, a full disk) must not
            # end a job that ran: it completes; a full disk may refuse a launch (no run)
            if st != "CD" and all(f["kind"] in ("controller", "conndrop", "diskfull")
                                  for f in self.faults) and \
                    (rs or not any(f["kind"] == "diskfull" for f in self.faults)):
                self.violate("unharmed", "%s ended %s (%s, exit %s) though no fault of the round "
                             "touched a node; runs: %s"
                             % (desc, s.get("state_name"), s.get("reason"), ec,
                                self.fmt_runs(rs) if rs else "none"))
            j["summary"] = "%d%s:%s%s" % (jid, j["kind"][0], st, "x%d" % len(rs) if len(rs) != 1 else "")

    def node_stopped_at(self, t):
        """Whether a node daemon was stopped at time t (or within a heartbeat of it)."""
        return any(f["kind"] == "nodestop" and "stopped" in f and
                   f["stopped"] - 1.0 <= t <= f.get("resumed", now()) + 1.0 for f in self.faults)

    def t_base(self):
        """Times in reports are relative to the round's start."""
        return self.T_start

    def fmt_runs(self, rs, alive=False):
        b = self.t_base()
        return ", ".join("pid %d +%.2f..+%.2f%s%s"
                         % (a["pid"], a["start"] - b, a["last"] - b,
                            " rc %d" % a["rc"] if a["end"] else " (no end)",
                            " (alive)" if alive and self.alive(a["pid"]) else "")
                         for a in rs)

    @staticmethod
    def ppid(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            return "?"

    def is_ours(self, pid):
        """A process of this round's cluster: its command line, working directory or
        environment names the round's directory."""
        if pid == os.getpid():
            return False
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if self.T.encode() in f.read():
                    return True
        except OSError:
            return False
        try:
            if os.readlink("/proc/%d/cwd" % pid).startswith(self.T):
                return True
        except OSError:
            pass
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                if (self.T + "/").encode() in f.read():
                    return True
        except OSError:
            pass
        return False

    def cgroup_pids(self):
        """Pids left in the node daemons' cgroups of this cluster (cgroup v2): the node
        daemon puts jobs under ductile/<cluster>-<id>/, the id in StateDir/noded-id."""
        try:
            h = int(open(os.path.join(self.C, "state", "noded-id")).read().strip(), 16)
        except (OSError, ValueError):
            return []
        pids = []
        for root in glob.glob("/sys/fs/cgroup/unified/ductile/local-%08x" % h) + \
                glob.glob("/sys/fs/cgroup/ductile/local-%08x" % h):
            for dirpath, _, files in os.walk(root):
                if "cgroup.procs" in files:
                    try:
                        pids += [int(x) for x in open(os.path.join(dirpath, "cgroup.procs"))
                                 .read().split()]
                    except (OSError, ValueError):
                        pass
        return pids

    def down(self):
        rc, out, err = self.d("cluster", "down", "--dir", self.C, timeout=60)
        if rc != 0:
            self.notes.append("cluster down: %s" % (err or out).strip()[:200])
        end = now() + 5
        while now() < end:
            for c in self.children:
                c.poll()
            daemons = [self.pid("ctld.pid")] + [self.pid("noded-%s.pid" % n) for n in self.nodes]
            if not any(self.alive(p) for p in daemons):
                break
            time.sleep(0.1)
        time.sleep(0.3)
        left = set()
        for p in os.listdir("/proc"):
            if p.isdigit() and self.alive(int(p)) and self.is_ours(int(p)):
                left.add(int(p))
        left |= {p for p in self.cgroup_pids() if self.alive(p)}
        if left:
            desc = []
            for p in sorted(left):
                try:
                    cmd = open("/proc/%d/cmdline" % p, "rb").read().replace(b"\0", b" ")
                    cmd = cmd.decode(errors="replace").strip()[:120]
                except OSError:
                    cmd = "?"
                desc.append("%d (ppid %s) %s" % (p, self.ppid(p), cmd))
            self.violate("leftovers", "after cluster down: " + "; ".join(desc))
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass

    def log_excerpts(self):
        """The daemons' last words, for a failed round's report (CI keeps no files)."""
        out = []
        try:
            names = sorted(os.listdir(os.path.join(self.C, "log")))
        except OSError:
            return out
        for name in names:
            lines = self.log_lines(name, 40 if name.startswith("ductiled") else 15)
            if lines is not None:
                out.append("--- %s" % name)
                out.extend("    " + x for x in lines)
        return out

    def cleanup(self):
        # a round that crashed half-way must not leave its cluster behind either
        if not hasattr(self, "T"):
            return
        self.logs = self.log_excerpts() if self.violations else []
        if os.path.exists(os.path.join(self.C, "ctld.pid")):
            self.d("cluster", "down", "--dir", self.C, timeout=30)
        for p in os.listdir("/proc"):
            if p.isdigit() and self.is_ours(int(p)):
                try:
                    os.kill(int(p), signal.SIGKILL)
                except OSError:
                    pass
        for c in self.children:
            try:
                c.kill()
                c.wait(timeout=5)
            except Exception:
                pass
        if self.mounted:
            for _ in range(20):
                if subprocess.run(["umount", os.path.join(self.C, "state")],
                                  capture_output=True).returncode == 0:
                    break
                time.sleep(0.2)
        keep = self.a.keep or (self.a.keep_failed and self.violations)
        if keep:
            self.notes.append("kept %s" % self.T)
        else:
            shutil.rmtree(self.T, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DUCTILE_BIN", "build/ductile"),
                    help="the ductile CLI (its daemons and examples are next to it)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "5")))
    ap.add_argument("--first-round", type=int, default=1)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "1")))
    ap.add_argument("--faults", default=os.environ.get("FAULTS", ",".join(KINDS)),
                    help="fault kinds to inject, comma-separated, from: " + ",".join(KINDS))
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--node-timeout", type=int, default=3)
    ap.add_argument("--kill-wait", type=float, default=10,
                    help="the cluster's KillWait; a job requeued after a node failure runs "
                         "again NodeTimeout + KillWait + 1 s after it")
    ap.add_argument("--window", type=float, default=4.0,
                    help="seconds during which faults and late submissions start")
    ap.add_argument("--jobs-min", type=int, default=4)
    ap.add_argument("--jobs-max", type=int, default=6)
    ap.add_argument("--settle", type=int, default=45,
                    help="seconds after the faults healed for every job to end")
    ap.add_argument("--submit-deadline", type=float, default=30.0)
    ap.add_argument("--grace", type=float, default=3.0,
                    help="seconds a run may outlive its job's recorded end (or the healing)")
    ap.add_argument("--disk-mb", type=int, default=16)
    ap.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--keep", action="store_true", help="keep every round's directory")
    ap.add_argument("--keep-failed", action="store_true", help="keep failed rounds' directories")
    ap.add_argument("--workload", default=os.environ.get("WORKLOAD", "rigid,farm,jacobi"),
                    help="job kinds to submit, from: rigid,farm,jacobi")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.kinds = [k for k in a.faults.split(",") if k]
    bad = [k for k in a.kinds if k not in KINDS]
    if bad:
        ap.error("unknown fault kind(s) %s; known: %s" % (",".join(bad), ",".join(KINDS)))
    if not os.access(a.bin, os.X_OK):
        ap.error("%s is not an executable (build first, or --bin)" % a.bin)
    bindir = os.path.dirname(os.path.abspath(a.bin))
    a.workload = [w for w in a.workload.split(",") if w]
    if not a.workload or any(w not in ("rigid", "farm", "jacobi") for w in a.workload):
        ap.error("--workload: a comma-separated list of rigid, farm, jacobi")
    a.mpi = shutil.which("mpirun") is not None and \
        os.access(os.path.join(bindir, "jacobi2d"), os.X_OK)
    if "jacobi" in a.workload and not a.mpi:
        a.workload.remove("jacobi")
        print("note: no jacobi2d jobs (no mpirun or no jacobi2d)")
        if not a.workload:
            ap.error("nothing to submit")
    if os.geteuid() != 0:
        for k in ("diskfull", "conndrop"):
            if k in a.kinds:
                a.kinds.remove(k)
                print("note: %s left out (needs root)" % k)
    print("fault harness: seed %d, rounds %d..%d, faults %s, workload %s, %d nodes, "
          "NodeTimeout %ds" % (a.seed, a.first_round, a.first_round + a.rounds - 1,
                               ",".join(a.kinds) or "none", ",".join(a.workload), a.nodes,
                               a.node_timeout), flush=True)
    # killed by ctest's timeout or ^C: the round in progress still cleans up (its cluster,
    # its processes, its tmpfs) through the finally below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    passed = failed = 0
    kinds_seen = {}
    t0 = now()
    for n in range(a.first_round, a.first_round + a.rounds):
        r = Round(a, n)
        r.T_start = now()
        try:
            r.run()
        except Exception as e:  # the harness's own trouble is a failed round, never a hang
            r.violate("harness", "%s: %s" % (type(e).__name__, e))
            r.elapsed = now() - r.T_start
        finally:
            r.cleanup()
        faults = "; ".join("%s @+%.1fs" % (f.get("desc", f["kind"]), f.get("t", f["at"]))
                           for f in r.faults) or "none"
        jobs = " ".join(j.get("summary") or ("%s:?" % (j["id"] if j["id"] else j["tag"]))
                        for j in r.jobs)
        ok = not r.violations
        passed += ok
        failed += not ok
        print("round %d %s (%.1fs) faults: %s | jobs: %s" % (n, "ok" if ok else "FAILED",
                                                            r.elapsed, faults, jobs), flush=True)
        for kind, detail in r.violations:
            kinds_seen[kind] = kinds_seen.get(kind, 0) + 1
            print("  VIOLATION %s: %s" % (kind, detail), flush=True)
        for note in r.notes:
            print("  note: %s" % note, flush=True)
        for line in getattr(r, "logs", []):
            print("  " + line, flush=True)
        if r.violations:
            print("  replay: %s --bin %s --seed %d --first-round %d --rounds 1 --faults %s "
                  "--workload %s" % (sys.argv[0], a.bin, a.seed, n, ",".join(a.kinds),
                                     ",".join(a.workload)), flush=True)
    if kinds_seen:
        print("violations by kind: " + ", ".join("%s %d" % kv for kv in sorted(kinds_seen.items())))
    print("%d passed, %d failed (%.0fs)" % (passed, failed, now() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
