#!/bin/sh
# A workdir whose table is reached through an absolute link into the
# workdir itself (issue 22, item 11): copy_tree copied the link verbatim, so
# every worker's working copy edited the one real file, and the pool kept a
# change that the serial run reverted. The copy's link now points at the
# copy's own file: a pool of four decides as the serial run, the workdir's
# real table ends as the serial run's, and each copy's link stays inside it.
# A link that leaves the workdir is refused before anything is measured.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-pool-links
. "$RATCHET_SRC/tests/campaign/common.sh"
for d in serial four; do
	kill9_setup "$d"
	sed -i 's|^strategy: list|strategy: greedy|' "$d/spec.yaml"
	mv "$d/table.json" "$d/real.json"
	ln -s "$W/$d/real.json" "$d/table.json"
done
(cd serial && run_ok spec.yaml)
(cd four && run_ok --devices host:0,host:1,host:2,host:3 spec.yaml)
a=$(decisions serial/c.db) b=$(decisions four/c.db)
echo "serial: $a"
echo "four:   $b"
[ "$a" = "$b" ] || { echo "FAIL: the pool decided otherwise than the serial run"; exit 1; }
cmp serial/real.json four/real.json || { echo "FAIL: the workdir's real table differs"; exit 1; }
[ -L four/table.json ] || { echo "FAIL: the workdir's link was replaced"; exit 1; }
n=0
for c in four/c.db.pool/*; do
	[ -e "$c/table.json" ] || continue
	n=$((n + 1))
	r=$(readlink -f "$c/table.json")
	case $r in
	"$W/$c/"*) ;;
	*) echo "FAIL: $c/table.json leads to $r, outside its working copy"; exit 1 ;;
	esac
done
[ $n -ge 2 ] || { echo "FAIL: $n working copies: a weak test"; exit 1; }
echo "$n working copies, each link inside its copy"

# A link to a file outside the workdir cannot be copied: refused.
kill9_setup out
sed -i 's|^strategy: list|strategy: greedy|' out/spec.yaml
mv out/table.json "$W/outside.json"
ln -s "$W/outside.json" out/table.json
rc=0
(cd out && "$RATCHET_BIN" --db c.db run --quiet --devices host:0,host:1 spec.yaml) > out.out 2>&1 || rc=$?
cat out.out
[ $rc -ne 0 ] && grep -q "outside.json.*, outside the workdir" out.out ||
	{ echo "FAIL: a link out of the workdir was not refused"; exit 1; }
echo PASS
