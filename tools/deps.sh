#!/bin/sh
# Installs the missing Debian/Ubuntu packages given as arguments (required
# ones, then "--", then optional ones). As root it runs apt-get; otherwise it
# prints the exact command to run, and fails only when a required one is
# missing.
required=""
optional=""
seen_sep=0
for p in "$@"; do
	if [ "$p" = "--" ]; then seen_sep=1; continue; fi
	if [ $seen_sep = 0 ]; then required="$required $p"; else optional="$optional $p"; fi
done
# Always optional: wrk, which `make bench` runs beside the load generator to
# compare their client CPU per request (without it the bench says so).
case " $optional " in *" wrk "*) ;; *) optional="$optional wrk";; esac
missing=""
missing_required=""
for p in $required $optional; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
		case " $optional " in *" $p "*) ;; *) missing_required="$missing_required $p";; esac
	fi
done
[ -z "$missing" ] && exit 0
# What cannot be installed here fails only when it is required: without an
# optional package its tests (or make fuzz) skip, saying so.
cannot() {
	if [ -n "$missing_required" ]; then
		echo "deps: $1:$missing" >&2
		exit 1
	fi
	echo "deps: optional packages not installed, their tests skip ($1:$missing)" >&2
	exit 0
}
command -v apt-get >/dev/null 2>&1 || cannot "not a Debian/Ubuntu machine; install"
[ "$(id -u)" = 0 ] || cannot "not root; run sudo apt-get install -y"
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
# Required packages must install; optional ones (GPU runtimes, the browser for
# the HTML report test, wrk for make bench) are tried one by one, and their
# tests skip without them.
apt-get install -y -qq --no-install-recommends $(for p in $missing; do case " $optional " in *" $p "*) ;; *) echo $p;; esac; done) >/dev/null || exit 1
for p in $missing; do
	case " $optional " in *" $p "*) apt-get install -y -qq --no-install-recommends $p >/dev/null 2>&1 || echo "deps: optional package $p not installed" >&2;; esac
done
exit 0
