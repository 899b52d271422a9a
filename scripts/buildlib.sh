# Sourced by scripts/setup.sh, arm64.sh and test.sh: the out-of-tree builds'
# common steps. The caller defines say() and top (the source tree).

# autoreconf_stale: regenerate configure when it is missing or older than
# configure.ac or Makefile.am.
autoreconf_stale() {
	if [ ! -f "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
		[ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
		say "autoreconf"
		(cd "$top" && { autoreconf -fi >/dev/null 2>&1 || autoreconf -fi; })
	fi
}

# configure_in DIR CMD...: make DIR and enter it; run CMD (a configure) when
# DIR has no Makefile yet or configure is newer than its config.status.
configure_in() {
	ci_dir=$1
	shift
	mkdir -p "$ci_dir"
	cd "$ci_dir"
	if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
		say "configure ($(basename "$ci_dir")/)"
		"$@"
	fi
}
