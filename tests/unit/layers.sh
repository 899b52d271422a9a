#!/bin/sh
# Layering: every #include "dir/..." in a folder names a folder that layer
# may call (README "Layout"). A new include across layers fails here.
top=${srcdir:-.}
fail=0

# check FOLDER ALLOWED...: includes of FOLDER's files name only ALLOWED dirs.
check() {
	folder=$1
	shift
	for f in "$top/$folder"/*.[ch]; do
		[ -e "$f" ] || continue
		grep -o '^#include "[a-z_]*/' "$f" | sed 's/#include "//; s|/$||' |
			sort -u | while read -r dir; do
			ok=0
			for a in "$@"; do
				[ "$dir" = "$a" ] && ok=1
			done
			if [ $ok = 0 ]; then
				echo "layers: $f includes $dir/ (allowed: $*)"
				echo x >>"$tmp"
			fi
		done
	done
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
check src/util util
check src/blocks blocks util
check src/maps maps blocks util
check src/stat stat maps blocks util
check src/heap heap stat maps blocks util
check src/logger logger heap stat maps blocks util
# The reader's layers, bottom up: block framing, the decoder, processors,
# the profile façade over them, exports, the CLI.
check reader/block block blocks util
check reader/decode decode block blocks util
check reader/proc proc decode block blocks util
check reader/profile profile proc decode block blocks util
check reader/export export profile proc decode block blocks util
# record checks LUAJIT_PROFILE with the logger's own option parser (opts.c,
# pure C, no VM): one owner for the option syntax.
check reader/cli cli export profile proc decode block blocks util logger
# The sampler never calls the logger's flush, the logger never locks
# through the sampler (the mapper's lock is the mapper's).
if grep -nw 'flush_encode\|logger_flush\|logger_flush_full' "$top"/src/stat/*.[ch]; then
	echo "layers: the sampler calls the logger's flush"
	echo x >>"$tmp"
fi
if grep -n 'sample_map_lock\|sample_lock' "$top"/src/logger/*.[ch]; then
	echo "layers: the logger locks through the sampler"
	echo x >>"$tmp"
fi
if [ -s "$tmp" ]; then
	exit 1
fi
echo "layers: ok"
