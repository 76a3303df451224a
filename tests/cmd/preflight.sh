#!/bin/sh
# `ratchet check --preflight` and `ratchet run` find each problem of this
# machine before anything is measured (issue 11): a missing table file,
# patch file, file-variant source, benchmark program, script, load dataset
# or kernel module; a program not on PATH (engine, benchmark, build); a
# patch that fails `git apply --check`; missing GSM8K data; a taken engine
# port; a device that is not visible; what a space binds (a table file, a
# template, a template's build program). Each is reported as
# file:line:col: key.path: problem; fix, on the line that names the thing;
# `run` exits 2 with the same line, its engine never started (a wrapper
# script would leave a file) and nothing recorded (no campaign row). Several
# problems are all listed.
set -u
. "$(dirname "$0")/lib.sh"
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
scratch preflight
W=$tmp
export RATCHET_OFFLINE=1 XDG_CACHE_HOME="$W/cache" RATCHET_GSM8K="$W/no-gsm8k"
cat > eng.sh <<E
#!/bin/sh
touch "$W/started"
exec "$RATCHET_BUILD/simserve" "\$@"
E
chmod +x eng.sh
echo '{"A": {"v": 1}}' > table.json
echo 'int main(void) { return 0; }' > bench.c
cp "$RATCHET_SRC/tests/campaign/vadd.c" .
mkdir src && (cd src && git init -q && echo 100 > speed.txt && git add . &&
	git -c user.email=t@example.com -c user.name=t commit -qm init &&
	echo 130 > speed.txt && git diff > ../good.diff && git checkout -q speed.txt)
sed 's/^-100$/-7/' good.diff > stale.diff

# spec ENGINE_EXTRA BENCH VARIANT [TOP]: the spec, one part replaced per case.
spec() {
	cat > spec.yaml <<Y
name: pf
engine:
  command: ["{workdir}/eng.sh", --port, "{port}"]
  ready: {http: /health, timeout: 5s}
$1
benchmarks:
$2
objective: {metric: b.x, goal: max}
repeats: {min: 1, max: 1}
variants:
$3
${4:-}
Y
}
ENG='  stop_grace: 1s'
BENCH='  - {name: b, command: [true], metrics: {x: /x}}'
VAR='  - {name: t, table: {file: table.json, set: {A: {v: 2}}}}'

# expect NAME TOKEN PATTERN: check --preflight and run both report PATTERN
# on TOKEN's line, exit 2, start no engine and record nothing.
expect() {
	name=$1 token=$2 pat=$3
	line=$(grep -n -F -- "$token" spec.yaml | head -1 | cut -d: -f1)
	rc=0
	"$RATCHET_BIN" check --preflight spec.yaml > /dev/null 2> check.err || rc=$?
	if [ $rc -eq 2 ] && grep -Eq "^spec\.yaml:$line:[0-9]+: $pat" check.err && grep -q "; fix: " check.err; then
		ok "$name: check --preflight says it at line $line"
	else
		no "$name: check --preflight (exit $rc, expected line $line: $pat)"; cat check.err
	fi
	rm -f "$W/started" c.db
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2> run.err || rc=$?
	if [ $rc -eq 2 ] && grep -Eq "^spec\.yaml:$line:[0-9]+: $pat" run.err; then
		ok "$name: run refuses before measuring"
	else
		no "$name: run (exit $rc)"; cat run.err
	fi
	[ ! -e "$W/started" ] && ok "$name: no engine started" || no "$name: the engine started"
	n=$(sqlite3 c.db "SELECT count(*) FROM campaigns" 2>/dev/null || echo 0)
	[ "$n" = 0 ] && ok "$name: nothing recorded" || no "$name: $n campaigns recorded"
}

spec "$ENG" "$BENCH" "$VAR"
"$RATCHET_BIN" check --preflight spec.yaml > /dev/null 2> check.err && ok "a good spec passes" ||
	{ no "a good spec passes"; cat check.err; }

spec "$ENG" "$BENCH" '  - {name: t, table: {file: missing.json, set: {A: {v: 2}}}}'
expect table-file missing.json 'variants\[0\]\.table\.file: table file .*missing\.json does not exist'

spec "$ENG" "$BENCH" '  - {name: p, patch: {file: none.diff, dir: src}}'
expect patch-file none.diff 'variants\[0\]\.patch\.file: patch file .*none\.diff does not exist'

spec "$ENG" "$BENCH" '  - {name: p, patch: {file: stale.diff, dir: src}}'
expect patch-apply stale.diff 'variants\[0\]\.patch: .*patch does not apply'

spec "$ENG" "$BENCH" '  - {name: f, file: {target: table.json, source: nosource.json}}'
expect file-source nosource.json 'variants\[0\]\.file\.source: source file .*nosource\.json does not exist'

spec "$ENG" '  - {name: b, command: [./nobench], metrics: {x: /x}}' "$VAR"
expect bench-path nobench 'benchmarks\[0\]\.command\[0\]: program ./nobench does not exist'

spec "$ENG" '  - {name: b, command: [no-such-bench-prog], metrics: {x: /x}}' "$VAR"
expect bench-path-search no-such-bench-prog "benchmarks\[0\]\.command\[0\]: program 'no-such-bench-prog' not found on PATH"

spec "$ENG" '  - {name: b, command: [sh, noscript.sh], metrics: {x: /x}}' "$VAR"
expect bench-script noscript.sh 'benchmarks\[0\]\.command\[1\]: script .*noscript\.sh does not exist'

spec "$ENG" "$BENCH" "$VAR"
sed -i 's|"{workdir}/eng.sh"|no-such-engine|' spec.yaml
expect engine-path no-such-engine "engine\.command\[0\]: program 'no-such-engine' not found on PATH"

spec "$ENG" "$BENCH" '  - {name: t, table: {file: table.json, set: {A: {v: 2}}}, build: [no-such-build]}'
expect build-path no-such-build "variants\[0\]\.build\[0\]: program 'no-such-build' not found on PATH"

spec "$ENG" "$BENCH
  - {name: l, load: {concurrency: 1, requests: 2, dataset: noprompts.jsonl}}" "$VAR"
expect load-dataset noprompts.jsonl 'benchmarks\[1\]\.load\.dataset: dataset .*noprompts\.jsonl does not exist'

spec "$ENG" "$BENCH" "$VAR" 'gate: {gsm8k: {dataset: nogsm8k/test.jsonl, limit: 5}}'
expect gsm8k nogsm8k 'gate\.gsm8k\.dataset: GSM8K test data not found'

# a port something else holds
"$RATCHET_BUILD/simserve" --port 0 > squat.out 2>&1 &
SQ=$!
i=0; while ! grep -q listening squat.out; do i=$((i+1)); [ $i -lt 100 ] || break; sleep 0.05; done
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' squat.out)
spec "$ENG
  port: $PORT" "$BENCH" "$VAR"
expect port "port: $PORT" 'engine\.port: .*; fix: stop what holds it'
kill $SQ; wait $SQ 2>/dev/null

if command -v cc >/dev/null; then
	KB='  - name: k
    kernel:
      backend: host
      device: 7
      module: vadd.c
      name: vadd
      args:
        - {buffer: z, dtype: f32, count: 64, output: true}
        - {buffer: x, dtype: f32, count: 64}
        - {buffer: y, dtype: f32, count: 64}
        - {scalar: n, dtype: i32, value: 64}
      launch: {grid: 1}'
	spec "$ENG" "$BENCH
$KB" "$VAR"
	expect device 'device: 7' 'benchmarks\[1\]\.kernel\.device: host device 7 is not visible'
	spec "$ENG" "$BENCH
$(echo "$KB" | sed -e 's/device: 7/device: 0/' -e 's/module: vadd.c/module: novadd.c/')" "$VAR"
	expect kernel-module novadd.c 'benchmarks\[1\]\.kernel\.module: kernel module .*novadd\.c does not exist'
else
	echo "skip: no C compiler for the host kernel cases"
fi

# what a space binds (issue 23, item 3): a misspelled table file, a
# template that is not there, a build program that is not on PATH
space() { # PARAMS
	spec "$ENG" "$BENCH" '  - {name: t, table: {file: table.json, set: {A: {v: 2}}}}'
	sed -i '/^variants:/,$d' spec.yaml
	printf 'strategy: coordinate\nspace:\n  parameters:\n%s\n' "$1" >> spec.yaml
}
space '    - {name: V, values: [1, 2], table: {file: tabel.json, key: A, field: v}}'
expect space-table tabel.json 'space \(table tabel\.json[^)]*\): table file .*tabel\.json does not exist'
space '    - {name: V, values: [1, 2], template: {source: nokernel.cu.in, target: kernel.cu}}'
expect space-template nokernel.cu.in 'space \([^)]*\): template .*nokernel\.cu\.in does not exist'
echo 'x {{V}}' > k.in
space '    - {name: V, values: [1, 2], template: {source: k.in, target: k.out, build: [no-such-cc]}}'
expect space-build no-such-cc "space \([^)]*\): build program 'no-such-cc' not found on PATH"
space '    - {name: V, values: [1, 2], table: {file: table.json, key: A, field: v}}'
"$RATCHET_BIN" check --preflight spec.yaml > /dev/null 2> check.err && ok "a good space passes" ||
	{ no "a good space passes"; cat check.err; }

# every problem is listed, not only the first
spec "$ENG" '  - {name: b, command: [no-such-bench-prog], metrics: {x: /x}}' \
	'  - {name: t, table: {file: missing.json, set: {A: {v: 2}}}}
  - {name: p, patch: {file: none.diff, dir: src}}'
sed -i 's|"{workdir}/eng.sh"|no-such-engine|' spec.yaml
"$RATCHET_BIN" check --preflight spec.yaml > /dev/null 2> check.err
n=$(grep -c '^spec\.yaml:[0-9]*:[0-9]*: ' check.err)
[ "$n" -eq 4 ] && ok "four problems, four lines" || { no "four problems listed: $n"; cat check.err; }
finish
