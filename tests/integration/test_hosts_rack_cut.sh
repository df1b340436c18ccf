#!/usr/bin/env bash
# On emulated hosts only (issue 35, from a review of b51f072): half a cluster's nodes,
# consecutive in Nodes (a rack whose uplink failed), cut off from the controller and
# from the other half, still reaching each other. The controller, 6 of 12 nodes silent
# (not more than half), calls them down and runs their --requeue jobs elsewhere; the
# cut-off node daemons must judge alike and end those jobs first. When each asked its
# neighbours in Nodes' order, the 5 of its rack said they did not hear the controller
# either and it kept its job: the job ran twice at once (OVERLAP). Peers are now spread
# over the cluster. The routes across the cut go through a gateway nobody has (packets
# dropped, as on a dead uplink; a connect() that fails at once, as on a blackhole
# route, is unit/test_conn's failed_connect_no_callback).
export DUCTILE_TEST_HOSTS=1
. "$(dirname "$0")/lib.sh"
up 12 --node-timeout 3 --kill-wait 2
cd "$T"
wait_for 10 peers_known 8 || fail "the node daemons were not told their peers: $(d nodes --json)"
runs=$(runs_script runs.sh 60 10)
j=$(submit -N 1 --requeue "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
n=$(field "$j" NodeList)
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
all=($(printf 'n%02d ' $(seq 1 12)))
i=$((10#${n#n}))
grp=() out=()
for k in 0 1 2 3 4 5; do grp+=("${all[$(( (i - 1 + k) % 12 ))]}"); done
for h in "${all[@]}"; do case " ${grp[*]} " in *" $h "*) ;; *) out+=("$h") ;; esac; done
route() { # ADD|DEL
  local g o
  for g in "${grp[@]}"; do
    on "$g" ip route "$1" "$(host_ip ctl)/32" via "$NET_PREFIX.250"
    on ctl ip route "$1" "$(host_ip "$g")/32" via "$NET_PREFIX.250"
    for o in "${out[@]}"; do
      on "$g" ip route "$1" "$(host_ip "$o")/32" via "$NET_PREFIX.250"
      on "$o" ip route "$1" "$(host_ip "$g")/32" via "$NET_PREFIX.250"
    done
  done
}
route add
said_me() { grep -q "this node is cut off\|this node is the one cut off" "$T/c/log/noded-$n.log"; }
wait_for 20 said_me || fail "node $n did not find itself cut off: $(tail -5 "$T/c/log/noded-$n.log")"
elsewhere() { [ "$(field "$j" NodeList)" != "$n" ] && is_state "$j" R; }
wait_for 40 elsewhere || fail "job $j not requeued onto another node: $(d show "$j")"
wait_for 20 sh -c "[ \$(grep -c '^start' '$T/runs.$j') -ge 2 ]" || fail "no second run: $(cat "$T/runs.$j")"
! grep -q "suspects its own network" "$T/c/log/ductiled.log" || fail "the controller suspected itself"
route del
expect_state "$j" CD 40
! grep -q "^end $first " "$T/runs.$j" || fail "the first run ended on its own: $(cat "$T/runs.$j")"
! grep -q OVERLAP "$T/runs.$j" || fail "job $j ran twice at once: $(cat "$T/runs.$j")"
echo ok
