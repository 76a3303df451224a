# Test setup that many shell tests repeat, in one copy. Sourcing it sets
# fails=0 and defines:
#   . "$RATCHET_SRC/tests/lib/common.sh"
#   ok MSG, no MSG          one TAP-like line each ("ok - MSG", "not ok - MSG");
#                           no counts in $fails
#   finish                  prints "N failed"; its status is 0 when none failed
#                           (the test's last line)
#   scratch_dir PREFIX [VAR...]
#                           W=/tmp/PREFIX-XXXXXX, entered; on exit the pid each
#                           VAR holds then (one the test started; empty: none)
#                           gets SIGTERM (SIGKILL with KILL9=1), and W is removed
#                           (kept with KEEP=1)
#   port_of FILE            the port a server started by the test writes to FILE
#                           ("... listening on HOST:PORT"), once it is there
#                           (waits up to 10 s; empty if it never is)
#   free_port               a TCP port below the kernel's ephemeral range
#                           (net.ipv4.ip_local_port_range starts at 32768), so no
#                           client socket of a parallel test can hold it, that no
#                           socket on this host uses now; for a spec that must
#                           name its port
fails=0
ok() { echo "ok - $*"; }
no() { echo "not ok - $*"; fails=$((fails + 1)); }
finish() {
	echo "$fails failed"
	[ "$fails" -eq 0 ]
}

scratch_dir() {
	W=$(mktemp -d "/tmp/$1-XXXXXX") || exit 1
	shift
	_scratch_vars="$*"
	trap _scratch_cleanup EXIT
	cd "$W" || exit 1
}
_scratch_cleanup() {
	for _v in $_scratch_vars; do
		eval "_pid=\${$_v:-}"
		[ -z "$_pid" ] || kill -"$([ -n "${KILL9:-}" ] && echo KILL || echo TERM)" "$_pid" 2>/dev/null || true
	done
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}

port_of() {
	for _ in $(seq 100); do
		grep -q listening "$1" 2>/dev/null && break
		sleep 0.1
	done
	sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$1"
}

free_port() {
	_p=$((20000 + $$ % 12000))
	for _ in $(seq 200); do
		grep -qs "$(printf ':%04X ' "$_p")" /proc/net/tcp /proc/net/tcp6 || { echo "$_p"; return 0; }
		_p=$((_p + 1))
		[ $_p -lt 32000 ] || _p=20000
	done
	echo "free_port: no free port in 200 tries" >&2
	return 1
}
