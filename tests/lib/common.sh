# Test setup that many shell tests repeat, in one copy.
#   . "$RATCHET_SRC/tests/lib/common.sh"
#   free_port               a TCP port below the kernel's ephemeral range
#                           (net.ipv4.ip_local_port_range starts at 32768
#                           here), so no client socket of a parallel test
#                           can hold it, that no socket on this host uses
#                           now; for a spec that must name its port
free_port() {
	_p=$((20000 + $$ % 12000))
	for _ in $(seq 200); do
		_h=$(printf ':%04X ' "$_p")
		grep -qs "$_h" /proc/net/tcp /proc/net/tcp6 || { echo "$_p"; return 0; }
		_p=$((_p + 1)); [ $_p -lt 32000 ] || _p=20000
	done
	echo "free_port: no free port in 200 tries" >&2
	return 1
}
