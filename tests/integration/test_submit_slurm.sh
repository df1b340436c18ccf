#!/usr/bin/env bash
# A Slurm user's submissions (issue 14): #SBATCH lines read as sbatch reads them (short
# options, quotes, comments, node ranges, Slurm's time formats), #DUCTILE winning over
# #SBATCH and the command line over both, Slurm's options Ductile does not take refused
# by name, and --wrap, standard input, --parsable, --chdir, --export and --ntasks.
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"

# --- directives: quotes, comments, short options; the command line and #DUCTILE win
cat > slurm.sh <<'EOF'
#!/bin/bash
# a job as a Slurm user writes it
#SBATCH --job-name="two words"   # the name, quoted
#SBATCH -N 2
#SBATCH -t 1-00:30 # a day and half an hour
#SBATCH --output=slurm-%j.txt
#SBATCH --exclusive
#SBATCH --no-requeue

echo "nodes=$DUCTILE_JOB_NUM_NODES"
#SBATCH --nodes=3
EOF
j=$(d submit slurm.sh 2> warn.txt | awk '/^Submitted job/ {print $3}')
[ -n "$j" ] || fail "slurm.sh refused: $(cat warn.txt)"
grep -q "slurm.sh:11: a directive after the first command is ignored" warn.txt ||
  fail "no warning for the late directive: $(cat warn.txt)"
[ "$(field "$j" Name)" = "two words" ] || fail "name: $(field "$j" Name)"
[ "$(field "$j" TimeLimit)" = "1-00:30:00" ] || fail "time: $(field "$j" TimeLimit)"
expect_state "$j" CD
grep -qx "nodes=2" "slurm-$j.txt" || fail "ran on: $(cat "slurm-$j.txt")"
# #DUCTILE wins over #SBATCH wherever it is; the command line wins over both
printf '#!/bin/sh\n#DUCTILE --time=7\n#SBATCH -t 20 -J sb\ntrue\n' > both.sh
j=$(submit both.sh)
[ "$(field "$j" TimeLimit)" = "7:00" ] || fail "#DUCTILE did not win: $(field "$j" TimeLimit)"
[ "$(field "$j" Name)" = "sb" ] || fail "#SBATCH -J lost: $(field "$j" Name)"
j=$(submit -t 3 --job-name=cli both.sh)
[ "$(field "$j" TimeLimit)" = "3:00" ] || fail "the command line did not win: $(field "$j" TimeLimit)"
[ "$(field "$j" Name)" = "cli" ] || fail "the command line's name lost: $(field "$j" Name)"
# an indented #SBATCH is a comment, as in Slurm
printf '#!/bin/sh\n  #SBATCH -N 9\ntrue\n' > indent.sh
j=$(submit indent.sh) || fail "an indented #SBATCH was read"
[ -n "$j" ] || fail "indent.sh refused"

# --- Slurm's time formats, UNLIMITED; node ranges
for t in 5=5:00 10:30=10:30 1:02:03=1:02:03 2-3=2-03:00:00 2-3:04=2-03:04:00 \
         2-3:04:05=2-03:04:05 UNLIMITED=UNLIMITED unlimited=UNLIMITED INFINITE=UNLIMITED; do
  j=$(submit -t "${t%%=*}" --wrap true)
  [ "$(field "$j" TimeLimit)" = "${t#*=}" ] || fail "-t ${t%%=*}: $(field "$j" TimeLimit), not ${t#*=}"
done
j=$(submit -N 2-3 --wrap true)
[ "$(field "$j" Type)" = moldable ] || fail "--nodes=2-3: $(field "$j" Type)"
field "$j" Nodes | grep -q "min 2, max 3" || fail "--nodes=2-3: $(field "$j" Nodes)"
j=$(submit -N 1-3 --malleable --wrap true)
[ "$(field "$j" Type)" = malleable ] || fail "--nodes=1-3 --malleable: $(field "$j" Type)"
field "$j" Nodes | grep -q "requested 1, min 1, max 3" || fail "malleable range: $(field "$j" Nodes)"
refused "range 3-2 is empty" d submit -N 3-2 --wrap true
refused "a rigid job has one size" d submit -N 2-3 --rigid --wrap true

# --- refused by name, with what to do; nothing submitted
n0=$(submit --wrap true) # the job ids before and after: nothing between them
printf '#!/bin/sh\n#SBATCH -p compute\ntrue\n' > p.sh
refused "this cluster has no partitions (Partition in ductile.conf): remove --partition" d submit p.sh
printf '#!/bin/sh\n#SBATCH --mem-per-cpu=4G\n#SBATCH --account=abc\ntrue\n' > m.sh
refused "m.sh:2: #SBATCH --mem-per-cpu: not supported by Ductile (.*with --mem)" d submit m.sh
refused "^ductile: --gpus: not supported by Ductile (.*--gpus-per-node)" d submit --gpus=2 --wrap true
refused "^ductile: --gpus: not supported" d submit --gpus 2 --wrap true
printf '#!/bin/sh\n#SBATCH --frobnicate=1\ntrue\n' > f.sh
refused "f.sh:2: #SBATCH --frobnicate: not an option" d submit f.sh
printf '#!/bin/sh\n#SBATCH -J "open\ntrue\n' > q.sh
refused "line 2: a double quote is not closed" d submit q.sh
printf '#!/bin/sh\n#SBATCH -N 2 extra\ntrue\n' > x.sh
refused "'extra' is not an option" d submit x.sh
refused "there is no account 'x'" d submit --account=x --wrap true
[ "$(submit --wrap true)" = $((n0 + 1)) ] || fail "a refused submission made a job"

# --- --wrap, standard input, --parsable
j=$(d submit --parsable --wrap 'echo wrapped $((6 * 7))')
[[ "$j" =~ ^[0-9]+$ ]] || fail "--parsable printed '$j'"
expect_state "$j" CD
grep -qx "wrapped 42" "ductile-$j.out" || fail "--wrap: $(cat "ductile-$j.out")"
[ "$(field "$j" Name)" = wrap ] || fail "--wrap's name: $(field "$j" Name)"
j=$(printf '#!/bin/sh\n#SBATCH -J fromstdin\necho piped\n' | d submit --parsable)
expect_state "$j" CD
[ "$(field "$j" Name)" = fromstdin ] || fail "stdin's directives: $(field "$j" Name)"
grep -qx piped "ductile-$j.out" || fail "stdin: $(cat "ductile-$j.out")"
j=$(printf 'echo dash\n' | d submit --parsable -)
expect_state "$j" CD
refused "standard input is empty" d submit - < /dev/null
refused "give one or the other" d submit --wrap true slurm.sh

# --- --chdir, --export
mkdir sub
export DT_FOO=foo DT_BAR=bar
j=$(d submit --parsable -D sub --export=DT_FOO,DT_BAZ=baz --wrap 'env | grep ^DT_ | sort; pwd')
expect_state "$j" CD
[ -f "sub/ductile-$j.out" ] || fail "--chdir: no output in sub/"
[ "$(cat "sub/ductile-$j.out")" = "$(printf 'DT_BAZ=baz\nDT_FOO=foo\n%s/sub' "$T")" ] ||
  fail "--export list: $(cat "sub/ductile-$j.out")"
j=$(d submit --parsable --export=NONE --wrap 'env | grep -c ^DT_ || true')
expect_state "$j" CD
grep -qx 0 "ductile-$j.out" || fail "--export=NONE: $(cat "ductile-$j.out")"
j=$(d submit --parsable --export=ALL,DT_BAZ=baz --wrap 'env | grep ^DT_ | sort | tr "\n" " "')
expect_state "$j" CD
grep -qx "DT_BAR=bar DT_BAZ=baz DT_FOO=foo " "ductile-$j.out" || fail "ALL,: $(cat "ductile-$j.out")"

# an assignment replaces the variable (the job sees one DT_FOO, the given one)
j=$(d submit --parsable --export=ALL,DT_FOO=over --wrap 'env | grep -c ^DT_FOO=; echo "$DT_FOO"')
expect_state "$j" CD
[ "$(cat "ductile-$j.out")" = "$(printf '1\nover')" ] || fail "ALL,DT_FOO=over: $(cat "ductile-$j.out")"

# --- sbatch's output patterns: %x the name, %u the user, %A the job, %N the node
j=$(d submit --parsable -J pat -o '%x-%u-%A-%N.out' --wrap 'echo patterned')
expect_state "$j" CD
f="pat-$(id -un)-$j-$(field "$j" NodeList).out"
grep -qx patterned "$f" || fail "-o %x-%u-%A-%N.out: no $f: $(ls ./*.out | tail -3)"

# --- --ntasks: as many nodes as the tasks need (one core a node here)
j=$(submit -n 3 --wrap true)
field "$j" Nodes | grep -q "^3 " || fail "-n 3: $(field "$j" Nodes)"
refused "ntasks=3 needs 3 nodes" d submit -n 3 -N 2 --wrap true
refused "CoresPerNode" d submit -c 2 --wrap true

# --- what would fail at launch is refused at submission, with the reason
n0=$(submit --wrap true)
printf '#!/bin/sh\r\n#SBATCH -N 1\r\necho hi\r\n' > dos.sh
refused "dos.sh has DOS line ends (.*line 1)" d submit dos.sh
printf '#!/bin/bsh\necho hi\n' > bsh.sh
refused "bsh.sh: its interpreter /bin/bsh (line 1) does not exist" d submit bsh.sh
printf '#!\necho hi\n' > none.sh
refused "names no interpreter" d submit none.sh
[ "$(submit --wrap true)" = $((n0 + 1)) ] || fail "a refused script made a job"
# an interpreter found through env, and a script without #! (run by /bin/sh), pass
printf '#!/usr/bin/env sh\necho env\n' > env.sh
j=$(submit env.sh)
expect_state "$j" CD
grep -qx env "ductile-$j.out" || fail "#!/usr/bin/env sh: $(cat "ductile-$j.out")"
printf 'echo nosh\n' > nosh.sh
j=$(submit nosh.sh)
expect_state "$j" CD
grep -qx nosh "ductile-$j.out" || fail "no #!: $(cat "ductile-$j.out")"

# --- what follows the script is its arguments, as with sbatch; a queued job keeps them
# across a restart of the controller
cat > args.sh <<'EOF'
#!/bin/sh
#SBATCH -N 1
printf '%s|' "$#" "$@"; echo
EOF
j=$(d submit --parsable -o args-%j.out args.sh a "b c" -N 2)
expect_state "$j" CD
grep -qx "4|a|b c|-N|2|" "args-$j.out" || fail "arguments: $(cat "args-$j.out")"
jb=$(d submit --parsable -N 3 --wrap 'sleep 60')
expect_state "$jb" R
j=$(d submit --parsable -o args-%j.out args.sh "x  y" z)
expect_state "$j" PD
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
d cancel "$jb" > /dev/null
expect_state "$j" CD 30
grep -qx "2|x  y|z|" "args-$j.out" || fail "arguments after a restart: $(cat "args-$j.out")"

# --- queue --start: when the engine plans to start a pending job (EASY's reservation)
long=$(d submit --parsable -N 3 -t 10 --wrap 'sleep 600')
expect_state "$long" R
t0=$(date +%s)
next=$(d submit --parsable -N 3 -t 5 --wrap true)
expect_state "$next" PD
line=$(d queue --start | awk -v j="$next" '$1 == j')
when=$(awk '{print $5}' <<< "$line")
[ "$when" != N/A ] || fail "no planned start: $(d queue --start)"
secs=$(( $(date -d "$when" +%s) - t0 ))
[ "$secs" -ge 570 ] && [ "$secs" -le 610 ] || fail "planned start $when, $secs s from now, not the running job's end (600 s)"
# --- --test-only: when a job would start behind them, nothing submitted
before=$(d queue --noheader | wc -l)
out=$(d submit --test-only -N 3 -t 5 --wrap true 2>&1) || fail "test-only: $out"
when=$(sed -n 's/.* would start at \([^ ]*\) on 3 nodes.*/\1/p' <<< "$out")
[ -n "$when" ] || fail "test-only: $out"
secs=$(( $(date -d "$when" +%s) - t0 ))
# after the running job (600 s) and the 3-node job waiting before it (300 s)
[ "$secs" -ge 870 ] && [ "$secs" -le 910 ] || fail "test-only: start $when, $secs s from now, not 900 s"
[ "$(d queue --noheader | wc -l)" = "$before" ] || fail "test-only submitted a job: $(d queue)"
out=$(d submit --test-only -H --wrap true 2>&1) || fail "test-only --hold: $out"
grep -q "would wait for its release" <<< "$out" || fail "test-only of a held job: $out"
refused "needs at least 4 nodes" d submit --test-only -N 4 --wrap true

d cancel "$long" "$next"

echo ok
