#!/usr/bin/env bash
# ljlog e2e: the report's ranking leads with the Lua function a user can
# change, not the builtin it calls (issue 38, point 4). ranking.lua spends
# most of its time in one builtin called from one Lua function: string.gsub
# from clean(), table.sort with a Lua comparator from order(), table.concat
# from join(), string.format from render(); and Debian's lua-markdown over
# a generated document (unescape_special_chars() and string.gsub), when
# it is installed. Each runs with the default families, JIT on, sample=1ms:
# - the Functions table's first row is the Lua function (sort: its row),
#   and names the builtin with its share where the samples hold the builtin's frame
#   ("clean (...), 97% in string.gsub"; string.format compiled into
#   render's trace has no frame to name);
# - exact relations in `report --json`: every sample counts once both ways
#   (the sum of samples_lua is the sum of samples); the function's
#   samples_lua are its own and via_samples of the builtin; a builtin
#   called from that function only has as many samples of its own as the
#   function's via_samples (lua-markdown: at least as many);
# - `report --builtins` gives the builtin its own row again, with its own
#   samples;
# - the anchor: jit.profile (sample_jitprofile.lua, by innermost Lua
#   function, 1 ms) ranks the same function first. Not for sort: jit.profile
#   samples only at Lua bytecodes, so the time in table.sort's C code goes
#   to the comparator, the next Lua code to run; and the comparator's own
#   share against sort's C code moves with the machine's load (one loaded
#   run had desc() first). There order()'s row names table.sort and holds
#   its samples (the exact relations above).
. "$(dirname "$0")/lib.sh"

case $LJLOG_TEST_PRELOAD in
*tsan*) echo "SKIP: $test_name: the samples' places cannot be relied on under ThreadSanitizer"; exit 77 ;;
esac

prog=$E2E/ranking.lua
n=1

# first_row TEXT: the label of the first row of the Functions table (from
# where its heading has "function").
first_row() {
	awk '/^Functions:/ { getline; c = index($0, "function"); getline; print substr($0, c); exit }' "$1"
}

# fn_row TEXT NAME: the label of NAME's row of the Functions table.
fn_row() {
	awk -v f="$2 (" '/^Functions:/ { getline; c = index($0, "function"); t = 1; next }
		t && index(substr($0, c), f) == 1 { print substr($0, c); exit }' "$1"
}

# one NAME EXPECT BUILTIN ANCHOR ONLY CMD...: profile CMD, check the
# ranking; EXPECT is the Lua function's name, BUILTIN the builtin it calls
# (ONLY 1: and no other function calls it), ANCHOR 1 to compare with
# jit.profile and to have EXPECT first (0: EXPECT's row is checked where
# it is).
one() {
	local name=$1 want=$2 builtin=$3 anchor=$4 only=$5 log=$T/$1.ljlog
	shift 5
	profile "file=$log,sample=1ms" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		{ show "$T/$name.err"; fail "[$name] the profiled run failed"; }
	check_complete "$log"
	ljlog report "$log" >"$T/$name.txt" 2>"$T/$name.txt.err" ||
		{ show "$T/$name.txt.err"; fail "[$name] ljlog report failed"; }
	report_json "$log" "$T/$name.json"
	local row
	if [ "$anchor" = 1 ]; then
		row=$(first_row "$T/$name.txt")
	else
		row=$(fn_row "$T/$name.txt" "$want")
	fi
	case $row in
	"$want ("*) ;;
	*) show "$T/$name.txt"; fail "[$name] the first row is '$row', not $want" ;;
	esac
	python3 - "$T/$name.json" "$want" "$builtin" "$row" "$only" <<'EOF' || { show "$T/$name.txt"; fail "[$name] the samples do not add up"; }
import json, sys
d = json.load(open(sys.argv[1]))
want, builtin, row, only = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
fs = d["functions"]
bad = []
own = sum(f["samples"] for f in fs)
lua = sum(f["samples_lua"] for f in fs)
if own != lua:
    bad.append("samples %d, samples_lua %d: not every sample counted once" % (own, lua))
f = next(f for f in fs if f["kind"] == "lua" and f["name"].split(" ")[0] == want)
b = [g for g in fs if g["name"] == builtin]
if f["samples_lua"] < f["samples"]:
    bad.append("%s: samples_lua %d below its own %d" % (want, f["samples_lua"], f["samples"]))
if b and b[0]["samples"]:
    if f["via"] != builtin:
        bad.append("%s: via '%s', not %s (%d samples of its own)"
                   % (want, f["via"], builtin, b[0]["samples"]))
    elif f["via_samples"] != b[0]["samples"] if only else f["via_samples"] > b[0]["samples"]:
        bad.append("%s: via_samples %d, %s has %d of its own"
                   % (want, f["via_samples"], builtin, b[0]["samples"]))
    elif f["samples_lua"] != f["samples"] + f["via_samples"]:
        bad.append("%s: samples_lua %d, not its own %d + %s's %d"
                   % (want, f["samples_lua"], f["samples"], builtin, f["via_samples"]))
    pct = round(100.0 * f["via_samples"] / f["samples_lua"])
    if not row.endswith(", %d%% in %s" % (pct, builtin)):
        bad.append("the first row '%s' does not end ', %d%% in %s'" % (row, pct, builtin))
elif f["via"] and not row.endswith(" in " + f["via"]):
    bad.append("the first row '%s' does not name %s" % (row, f["via"]))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("%s: %d samples, %d in %s (%d of its own)"
      % (want, f["samples_lua"], f["via_samples"], f["via"] or "-",
         b[0]["samples"] if b else 0))
EOF
	ok "[$name] $([ "$anchor" = 1 ] && echo "first row" || echo "its row"): $row"
	# --builtins: the builtin's samples are its own row again.
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not any(f["name"] == sys.argv[2] and f["samples"] for f in d["functions"]))' "$T/$name.json" "$builtin"; then
		ljlog report --builtins -n 0 "$log" >"$T/$name.b.txt" 2>&1 ||
			{ show "$T/$name.b.txt"; fail "[$name] report --builtins failed"; }
		grep -q " $builtin \[builtin\]\$" "$T/$name.b.txt" ||
			{ show "$T/$name.b.txt"; fail "[$name] report --builtins has no row of $builtin"; }
		grep -q "in $builtin\$" "$T/$name.b.txt" &&
			{ show "$T/$name.b.txt"; fail "[$name] report --builtins still counts $builtin in its caller"; }
		ok "[$name] --builtins: $builtin has a row of its own"
	fi
	[ "$anchor" = 1 ] || return 0
	anchor_run "$T/$name.jp.out" "$T/$name.jp.err" luajit_plain \
		"$E2E/sample_jitprofile.lua" "$T/$name.jp" fi1 "$@" ||
		{ show "$T/$name.jp.err"; fail "[$name] the jit.profile run failed"; }
	python3 - "$T/$name.jp" "$T/$name.json" <<'EOF' || fail "[$name] jit.profile ranks another function first"
import json, sys
jp = {}
for l in open(sys.argv[1]):
    c, k = l.rstrip("\n").split("\t")
    if k not in ("J", "C", "?"):
        jp[k] = jp.get(k, 0) + int(c)
d = json.load(open(sys.argv[2]))
lj = {}
for f in d["functions"]:
    if f["kind"] == "lua":
        k = "%s:%d" % (f["file"], f["line"])
        lj[k] = lj.get(k, 0) + f["samples_lua"]
top_jp = max(jp, key=jp.get)
top_lj = max(lj, key=lj.get)
print("jit.profile: %s %d of %d; ljlog: %s %d of %d"
      % (top_jp, jp[top_jp], sum(jp.values()), top_lj, lj[top_lj], sum(lj.values())))
sys.exit(top_jp != top_lj)
EOF
	ok "[$name] jit.profile ranks $want first too"
}

one gsub clean string.gsub 1 1 "$prog" gsub "$n"
one sort order table.sort 0 1 "$prog" sort "$n"
one concat join table.concat 1 1 "$prog" concat "$n"
one format render string.format 1 1 "$prog" format "$n"

# Debian's lua-markdown (scripts/setup.sh installs it).
md=$(modpath markdown)
if [ -n "$md" ]; then
	cat >"$T/md.lua" <<'EOF'
local markdown = require("markdown")
local parts = {}
for i = 1, tonumber(arg[1]) do
	parts[#parts + 1] = ("## Heading %d\n\nSome *emphasis* and **strong** text with `code`, a [link](http://example.com/%d) and \\* escaped \\_ chars.\n\n- item one\n- item two\n\n    code block %d\n\n"):format(i, i, i)
end
local html = markdown(table.concat(parts))
print(#html)
EOF
	one markdown unescape_special_chars string.gsub 1 0 "$T/md.lua" 300
else
	echo "info: $test_name: no lua-markdown (scripts/setup.sh installs it): its run left out"
fi
