#!/usr/bin/env bash
# The worked example of docs/user-guide.md ("Multi-host deployment"): an emulated
# cluster of 3 compute hosts, a controller host and a login host (hosts.sh), and a
# transcript of commands typed on each host, printed as "HOST$ command" and its output.
# Run: DUCTILE_BIN=build/ductile bash tests/integration/hosts_example.sh
export DUCTILE_TEST_HOSTS=1
DUCTILE_BIN=$(realpath "${DUCTILE_BIN:?the ductile command, e.g. build/ductile}")
export DUCTILE_BIN
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
# show HOST 'COMMAND': the command as typed on HOST, then what it printed
show() {
  echo "$1\$ $2"
  on "$1" sh -c "$2" 2>&1 || true
}
mkdir -m 777 "$T/alice"
cat > "$T/alice/job.sh" << 'JOB'
#!/bin/sh
#DUCTILE --nodes=2 --job-name=where
echo "batch script on $(hostname) as $(id -un), nodes $DUCTILE_JOB_NODELIST"
ip -4 -o addr show eth0 | awk '{print "address", $4}'
test -S /run/ductile/ctld.sock || echo "no controller socket on $(hostname)"
ductile run --label hostname
JOB
chmod 755 "$T/alice/job.sh"
show ctl "grep -v '^#' \$DUCTILE_CONF"
show ctl "ss -ltnp | awk 'NR > 1 {print \$4, \$6}'"
show ctl "ls /run/ductile /var/spool/ductile"
show n2 "ls /run/ductile /var/spool/ductile/spool"
show n2 "ss -ltnp | awk 'NR > 1 {print \$4, \$6}'"
show n2 "ss -tn | awk 'NR > 1 {print \$1, \$4, \$5}'"
show login "ls /run/ductile /var/spool/ductile"
show login "ductile cluster status"
show login "ductile nodes"
cd "$T/alice"
show login "cat job.sh"
show login "setpriv --reuid=nobody --regid=nogroup --clear-groups ductile submit job.sh"
expect_state 1 CD
show login "cat ductile-1.out"
show login "ductile show 1 | grep -E '^(JobId|User|State|NodeList|ExitCode)'"
show n1 "ls /var/spool/ductile/spool/n1"
# inside a job: ductile commands, ductile rsh (a node of the job, then one that is not),
# a plain mpirun of examples/mpi_hello (built by make build, copied into the home)
cp "$BINDIR/mpi_hello" "$T/alice/"
cat > "$T/alice/mpi.sh" << 'JOB'
#!/bin/sh
#DUCTILE --nodes=3 --job-name=mpi
ductile queue
ductile rsh n3 'echo rsh to $(hostname)'
ductile rsh n4 hostname
mpirun ./mpi_hello
JOB
chmod 755 "$T/alice/mpi.sh"
show login "cat mpi.sh"
show login "setpriv --reuid=nobody --regid=nogroup --clear-groups ductile submit mpi.sh"
expect_state 2 CD 60
show login "cat ductile-2.out"
# from the login host: a step in a running job (its owner only); without --job, no job
cat > "$T/alice/wait.sh" << 'JOB'
#!/bin/sh
#DUCTILE --nodes=2 --job-name=wait
sleep 600
JOB
chmod 755 "$T/alice/wait.sh"
show login "setpriv --reuid=nobody --regid=nogroup --clear-groups ductile submit wait.sh"
expect_state 3 R
show login "setpriv --reuid=nobody --regid=nogroup --clear-groups ductile run --job 3 --label hostname"
show login "setpriv --reuid=daemon --regid=daemon --clear-groups ductile run --job 3 hostname"
show login "ductile run hostname"
show login "ductile cancel 3"
# a job submitted from a directory the compute hosts do not have (the login host's /tmp)
show login "mkdir /tmp/work && cp job.sh /tmp/work && cd /tmp/work && ductile submit job.sh"
expect_state 4 F
show login "ductile show 4 | grep -E '^(State|Reason|ExitCode|WorkDir)'"
show login "pwd; ls"
