#!/bin/sh
# Sizes a newcomer can read (issue 30): no C function over 120 lines, no
# source file over 900, and no hand-rolled FNV hash (util/hmap and xxHash
# are the project's hashes). A function is counted from its opening brace
# to its closing one, both at column 0 as .clang-format puts them. The
# file limit is for the code (src/, reader/, bench/): a test file is a list
# of independent cases, read one at a time.
top=${srcdir:-.}
files=$(find "$top/src" "$top/reader" "$top/tests/unit" "$top/tests/fuzz" \
	"$top/bench" -name '*.[ch]' | sort)

for f in $files; do
	# Functions: the last line at column 0 that opens a parameter list
	# names the function whose body starts at the next "{" line.
	awk -v f="$f" -v max=120 '
		/^[A-Za-z_].*\(/ { name = $0 }
		/^\{/ { start = NR }
		/^\}/ && start {
			n = NR - start + 1
			if (n > max)
				printf "sizes: %s:%d: function of %d lines (at most %d): %s\n",
					f, start, n, max, name
			start = 0
		}' "$f"
	case $f in "$top"/tests/*) continue ;; esac
	n=$(wc -l <"$f")
	if [ "$n" -gt 900 ]; then
		echo "sizes: $f: $n lines (at most 900): split it by what it does"
	fi
done >"${tmp:=$(mktemp)}"
trap 'rm -f "$tmp"' EXIT

# FNV-1 and FNV-1a offset bases and primes, 32 and 64 bits.
if grep -n -i -E '0xcbf29ce484222325|0x100000001b3|0x811c9dc5|0x01000193|2166136261|16777619|14695981039346656037|1099511628211' \
	$files; then
	echo "sizes: an FNV hash constant: use util/hmap, util/intern or xxHash" >>"$tmp"
fi

if [ -s "$tmp" ]; then
	cat "$tmp"
	exit 1
fi
echo "sizes: ok"
