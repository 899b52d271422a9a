#!/bin/sh
# ljlog test tools: what the export tests open ljlog's files with, installed
# once per machine and skipped when present (scripts/test.sh runs this).
#   Debian: chromium (headless page tests), golang-go (go tool pprof);
#           luajit2 (OpenResty's LuaJIT) unpacked into tests/tools/luajit2,
#           its source (apt-get source) into third_party/luajit2-<version>,
#           linked as third_party/luajit2-src (scripts/test.sh builds
#           build-lj2/ against it);
#           curl, nginx-light, wrk; nginx's lua module on luajit2 unpacked
#           into tests/tools/nginx-lua (tests/e2e/nginx.sh, bench/nginx.sh);
#           sysbench and knot-resolver, real hosts that link LuaJIT
#           (tests/e2e/hosts.sh)
#   npm, pinned in tests/tools/package.json + package-lock.json, installed
#   into tests/tools/node_modules: speedscope (its importer), playwright-core
#   (drives Debian's chromium), heap-snapshot-toolkit (DevTools' loader)
# Usage: scripts/setup-tools.sh    (run as root, or with sudo available)
# Env: LJLOG_DEPS_DIR=DIR fetches the luajit2 source into DIR instead of
#      third_party (to try the fetch without touching third_party).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
deps=${LJLOG_DEPS_DIR:-$top/third_party}
. "$top/scripts/aptsrc.sh"
pkgs="chromium golang-go nodejs npm curl nginx-light wrk sysbench knot-resolver"

say() { printf 'setup-tools: %s\n' "$*" >&2; }
die() { printf 'setup-tools: error: %s\n' "$*" >&2; exit 1; }

apt_root $pkgs
want=""
for p in $pkgs; do
	case $p in
	nodejs | npm) command -v "${p%js}" >/dev/null 2>&1 && continue ;; # a node of its own
	esac
	want="$want $p"
done
# (policy-rc.d or no init: the nginx service is not started)
# shellcheck disable=SC2086
apt_install_missing $want

tools="$top/tests/tools"
stamp="$tools/node_modules/.ljlog-installed"
if [ ! -f "$stamp" ] || [ "$tools/package-lock.json" -nt "$stamp" ]; then
	say "npm ci in tests/tools (speedscope, playwright-core, heap-snapshot-toolkit)"
	(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
		die "npm ci in $tools failed"
	touch "$stamp"
fi

# Debian's luajit2 (OpenResty's LuaJIT) conflicts with the luajit package:
# unpacked privately, never installed (tests/e2e/flavour.sh runs it).
# Its jit.* modules (libluajit2-5.1-common) sit in usr/share/luajit-2.1.0-beta3:
# jit.vmdef names its own fast functions (ljlog_ffnames.h, tests/e2e/lib.sh).
lj2="$tools/luajit2"
if [ ! -x "$lj2/usr/bin/luajit" ] || [ ! -f "$lj2"/usr/share/luajit-2.1*/jit/vmdef.lua ]; then
	say "unpacking Debian's luajit2 (OpenResty's LuaJIT) into tests/tools/luajit2"
	apt_unpack "$lj2" luajit2 libluajit2-5.1-2 libluajit2-5.1-common
fi

# Its source, the same version, for build-lj2/ (configure --with-luajit-src).
ver=$(zcat "$lj2/usr/share/doc/luajit2/changelog.Debian.gz" 2>/dev/null |
	sed -n '1s/^luajit2 (\([^)]*\)).*/\1/p')
[ -n "$ver" ] || die "no version in $lj2/usr/share/doc/luajit2/changelog.Debian.gz"
src="$deps/luajit2-$ver"
if [ ! -f "$src/src/lj_obj.h" ]; then
	say "fetching OpenResty's LuaJIT source luajit2 $ver (apt-get source)"
	apt_source "$deps" dl2 luajit2 "$ver" "$src"
fi
ln -sfn "luajit2-$ver" "$deps/luajit2-src"

# nginx's lua module (lua-nginx-module) runs on luajit2 and its packages
# pull luajit2 in, which conflicts with the luajit package: the module, the
# NDK and the resty libraries are unpacked privately with their luajit2
# library, never installed (tests/e2e/nginx.sh loads them by absolute path).
ngx="$tools/nginx-lua"
ngxpkgs="libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache libluajit2-5.1-2"
if [ ! -f "$ngx/usr/lib/nginx/modules/ngx_http_lua_module.so" ]; then
	say "unpacking nginx's lua module (on luajit2) into tests/tools/nginx-lua"
	# shellcheck disable=SC2086
	apt_unpack "$ngx" $ngxpkgs
fi
