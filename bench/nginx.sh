#!/usr/bin/env bash
# ljlog benchmark: throughput (requests/s) of Debian's nginx with its lua
# module on luajit2, without and with libljlog.so preloaded, measured side by
# side in one run: the configurations alternate, RUNS rounds, best of each.
# Never a test threshold. Needs a build for OpenResty's LuaJIT
# (LJLOG_BUILDDIR, default build-lj2/: configure
# --with-luajit-src=third_party/luajit2-src), nginx, wrk (or curl) and
# tests/tools/nginx-lua (scripts/setup-tools.sh).
# Usage: bench/nginx.sh    Env: RUNS (default 3), SECS per measure (default
# 3), WORK (loop iterations per request, default 2000), CONNS (default 16).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/e2e/nginx_site.sh"
b=${LJLOG_BUILDDIR:-$src/build-lj2}
runs=${RUNS:-3}
secs=${SECS:-3}
work=${WORK:-2000}
conns=${CONNS:-16}
lib=$b/.libs/libljlog.so
ngxlua=$src/tests/tools/nginx-lua
ljdir=$ngxlua/usr/lib/x86_64-linux-gnu
nginx=$(command -v nginx || echo /usr/sbin/nginx)

die() { echo "bench/nginx: $*" >&2; exit 2; }
grep -q '^#define LJLOG_LUAJIT_OPENRESTY 1' "$b/config.h" 2>/dev/null ||
	die "$b is not built for OpenResty's LuaJIT (configure --with-luajit-src=third_party/luajit2-src)"
[ -e "$lib" ] || die "build first (no $lib)"
[ -x "$nginx" ] || die "no nginx (Debian nginx-light)"
[ -e "$ngxlua/usr/lib/nginx/modules/ngx_http_lua_module.so" ] || die "no tests/tools/nginx-lua (scripts/setup-tools.sh)"
command -v wrk >/dev/null 2>&1 || command -v curl >/dev/null 2>&1 || die "needs wrk or curl"

T=$(mktemp -d)
master=
trap '[ -n "$master" ] && kill -QUIT "$master" 2>/dev/null; sleep 0.5; rm -rf "$T"' EXIT
nginx_site "$T" "$ngxlua"

# start PROFILE: nginx, preloaded with LUAJIT_PROFILE=PROFILE ('-': no
# preload at all).
start() {
	rm -f "$T/nginx.pid" "$T"/logs/*
	if [ "$1" = - ]; then
		LD_LIBRARY_PATH=$ljdir timeout 30 "$nginx" -p "$T" -c "$T/nginx.conf" -e "$T/error.log"
	else
		LUAJIT_PROFILE=$1 LD_PRELOAD=$lib LD_LIBRARY_PATH=$ljdir \
			timeout 30 "$nginx" -p "$T" -c "$T/nginx.conf" -e "$T/error.log" 2>/dev/null
	fi
	for _ in $(seq 100); do [ -s "$T/nginx.pid" ] && break; sleep 0.05; done
	master=$(cat "$T/nginx.pid")
	sleep 0.3
}
stop() {
	kill -QUIT "$master"
	while kill -0 "$master" 2>/dev/null; do sleep 0.05; done
	master=
}

# load: requests/s for $secs seconds.
load() {
	if command -v wrk >/dev/null 2>&1; then
		env -u LD_PRELOAD timeout $((secs + 30)) wrk -t 2 -c "$conns" -d "${secs}s" "http://127.0.0.1:$port/?work=$work" |
			sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p'
	else
		local t0 n
		t0=$(date +%s.%N)
		n=$(seq $((conns * 40)) | xargs -P "$conns" -n 40 sh -c 'for i; do echo "url = \"http://127.0.0.1:'"$port"'/?work='"$work"'\""; done | curl -s -m 10 -K -' sh | wc -l)
		python3 -c "import time; print(f'{$n / (time.time() - $t0):.1f}')"
	fi
}

declare -A best
names="plain preload sample calls"
cfg() {
	case $1 in
	plain) echo - ;;
	preload) echo "" ;;
	sample) echo "log:file=$T/logs/s-%p.ljlog,sample=1ms" ;;
	calls) echo "log:file=$T/logs/c-%p.ljlog,calls" ;;
	esac
}
for n in $names; do best[$n]=0; done
for ((r = 1; r <= runs; r++)); do
	for n in $names; do
		start "$(cfg "$n")"
		rps=$(load)
		stop
		[ -n "$rps" ] || die "no throughput measured for $n"
		python3 -c "import sys; sys.exit(0 if $rps > ${best[$n]} else 1)" && best[$n]=$rps
		printf '%s %s req/s\n' "$n" "$rps" >&2
	done
done
echo "nginx (2 workers, lua handler with $work iterations, $conns connections, ${secs}s each, best of $runs, alternating):"
for n in $names; do
	printf '  %-8s %10.1f req/s   ratio to plain %.3f\n' "$n" "${best[$n]}" \
		"$(python3 -c "print(${best[$n]} / ${best[plain]})")"
done
echo "  (preload: libljlog.so without LUAJIT_PROFILE; sample: sample=1ms; calls: calls, JIT off)"
