#!/bin/sh
# One greedy pool campaign on host:0..3, run again and again, decides the
# same way every time (issue 22, item 10). Each worker once took its noise
# prior from whichever sibling trials of its round had already been
# recorded, so 2 of 9 identical runs kept other changes. Here the workers'
# timing is forced: in each run another device is slow (its benchmark sleeps
# before each sample), so each time other siblings finish first. Every run
# must record the same iterations with the same statistics (interval and
# p-value, which the prior moves) and keep the same changes.
# POOL_REPEAT_SLOW overrides the list of slow devices, one run each: nine
# identical uninterrupted runs are POOL_REPEAT_SLOW="none none ... none"
# (issue 22, item 10; the figure is in docs/scale.md).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-pool-repeat
. "$RATCHET_SRC/tests/campaign/common.sh"
# seq, variant, state, and the statistics the prior moves.
stats() {
	sqlite3 "$1" "SELECT group_concat(x, ' ') FROM (SELECT seq || ':' || variant || ':' || state || ':' ||
		printf('%.6f', coalesce(obj_ci_lo, 0)) || ':' || printf('%.6f', coalesce(obj_ci_hi, 0)) || ':' ||
		printf('%.6g', coalesce(p_value, -1)) AS x FROM iterations ORDER BY seq)"
}
kept() { sqlite3 "$1" "SELECT group_concat(variant, ',') FROM (SELECT variant FROM iterations WHERE state = 'kept' ORDER BY variant)"; }
first=
i=0
for slow in ${POOL_REPEAT_SLOW:-none host:0 host:3 host:1 host:2}; do
	i=$((i + 1))
	d=run-$i-${slow%%:*}${slow#*:}
	kill9_setup "$d"
	sed -i -e 's|^strategy: list|strategy: greedy|' \
		-e "s|command: \[\"\(.*\)\", \"{workdir}/table.json\", \"0\"\]|command: [sh, -c, 'case \"\$RATCHET_DEVICE\" in \"\$FAKE_SLOW\") sleep 0.25;; esac; exec \"\$0\" \"\$@\"', \"\\1\", \"{workdir}/table.json\", \"0\"]|" \
		"$d/spec.yaml"
	grep -q 'FAKE_SLOW' "$d/spec.yaml" || { cat "$d/spec.yaml"; echo "FAIL: the benchmark was not wrapped"; exit 1; }
	echo "devices: [host:0, host:1, host:2, host:3]" >> "$d/spec.yaml"
	(cd "$d" && FAKE_SLOW=$slow run_ok spec.yaml)
	got=$(stats "$d/c.db")
	echo "slow $slow: kept $(kept "$d/c.db")"
	if [ -z "$first" ]; then
		first=$got
		want_kept=$(kept "$d/c.db")
		echo "  $got"
		[ -n "$want_kept" ] || { echo "FAIL: the campaign kept nothing: a weak test"; exit 1; }
	elif [ "$got" != "$first" ]; then
		echo "  $got"
		echo "  first run: $first"
		[ "$(kept "$d/c.db")" = "$want_kept" ] || echo "  (and the kept set differs)"
		echo "FAIL: run $i, with $slow slow, the pool decided otherwise than the first run"
		exit 1
	fi
done
echo "$i runs: the same iterations, statistics and kept changes ($want_kept)"
n=$(sqlite3 run-1-*/c.db "SELECT count(DISTINCT round) FROM iterations WHERE round > 0")
[ "$n" -ge 2 ] || { echo "FAIL: only $n rounds: a weak test"; exit 1; }
echo PASS
