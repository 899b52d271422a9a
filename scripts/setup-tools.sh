#!/bin/sh
# ljlog test tools: what the export tests open ljlog's files with, installed
# once per machine and skipped when present (scripts/test.sh runs this).
#   Debian: chromium (headless page tests), golang-go (go tool pprof);
#           luajit2 (OpenResty's LuaJIT) unpacked into tests/tools/luajit2
#           curl, nginx-light, wrk; nginx's lua module on luajit2 unpacked
#           into tests/tools/nginx-lua (tests/e2e/nginx.sh, bench/nginx.sh)
#   npm, pinned in tests/tools/package.json + package-lock.json, installed
#   into tests/tools/node_modules: speedscope (its importer), playwright-core
#   (drives Debian's chromium), heap-snapshot-toolkit (DevTools' loader)
# Usage: scripts/setup-tools.sh    (run as root, or with sudo available)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
pkgs="chromium golang-go nodejs npm curl nginx-light wrk"

say() { printf 'setup-tools: %s\n' "$*" >&2; }
die() { printf 'setup-tools: error: %s\n' "$*" >&2; exit 1; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "not root and no sudo: install as root: $pkgs"
	sudo="sudo"
fi

missing=""
for p in $pkgs; do
	case $p in
	nodejs | npm) command -v "${p%js}" >/dev/null 2>&1 && continue ;;
	esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	# (policy-rc.d or no init: the nginx service is not started)
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
fi

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
lj2="$tools/luajit2"
if [ ! -x "$lj2/usr/bin/luajit" ]; then
	say "unpacking Debian's luajit2 (OpenResty's LuaJIT) into tests/tools/luajit2"
	dl=$(mktemp -d)
	chmod 755 "$dl"
	get() { (cd "$dl" && apt-get download -q luajit2 libluajit2-5.1-2 >/dev/null 2>&1); }
	get || { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && get; } ||
		die "apt-get download luajit2 libluajit2-5.1-2 failed"
	for d in "$dl"/*.deb; do
		dpkg -x "$d" "$lj2" || die "dpkg -x $d failed"
	done
	rm -rf "$dl"
fi

# nginx's lua module (lua-nginx-module) runs on luajit2 and its packages
# pull luajit2 in, which conflicts with the luajit package: the module, the
# NDK and the resty libraries are unpacked privately with their luajit2
# library, never installed (tests/e2e/nginx.sh loads them by absolute path).
ngx="$tools/nginx-lua"
ngxpkgs="libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache libluajit2-5.1-2"
if [ ! -f "$ngx/usr/lib/nginx/modules/ngx_http_lua_module.so" ]; then
	say "unpacking nginx's lua module (on luajit2) into tests/tools/nginx-lua"
	dl=$(mktemp -d)
	chmod 755 "$dl"
	# shellcheck disable=SC2086
	get() { (cd "$dl" && apt-get download -q $ngxpkgs >/dev/null 2>&1); }
	get || { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && get; } ||
		die "apt-get download $ngxpkgs failed"
	for d in "$dl"/*.deb; do
		dpkg -x "$d" "$ngx" || die "dpkg -x $d failed"
	done
	rm -rf "$dl"
fi
