# Shared by the tests that check an engine's process group is gone: whether a
# group recorded in env_facts (engine.pgid) still has a live member that is
# this test's own. A bare `kill -0 -PGID` is not enough on a machine whose
# pid_max is 32768 while parallel tests fork thousands of processes: the number
# comes round again, often to another test's simserve, itself a group leader.
# Engines run in the campaign's workdir (rt_proc's cwd), so a member is ours
# when its working directory is under the test's folder.
#   . "$RATCHET_SRC/tests/lib/procs.sh"
#   group_ours PGID DIR   true when a live, non-zombie process in group PGID
#                         works in DIR or below it
group_ours() {
	for _st in /proc/[0-9]*/stat; do
		_p=${_st#/proc/}; _p=${_p%/stat}
		# fields after the command's closing paren: state ppid pgrp ...
		set -- "$1" "$2" $(sed 's/.*) //' "$_st" 2>/dev/null) || continue
		[ $# -ge 5 ] || { set -- "$1" "$2"; continue; }
		_state=$3 _pg=$5
		set -- "$1" "$2"
		[ "$_pg" = "$1" ] && [ "$_state" != Z ] || continue
		case "$(readlink "/proc/$_p/cwd" 2>/dev/null)" in
		"$2" | "$2"/*) return 0 ;;
		esac
	done
	return 1
}
