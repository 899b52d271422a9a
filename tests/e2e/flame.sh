#!/bin/sh
# ljlog e2e: `ljlog flame` pages in headless Chromium (flame_check.js, with
# playwright-core): frames render, the top functions show, search
# highlights the matches with the share the folded stacks give, the views
# switch (with the report's totals), zoom and orientation work, and the
# page makes no request at all and logs no error, the samples' root
# children are the folded stacks' roots, each once (stacks.lua, recorded
# with host stacks, one root tower). Chunks named like markup show as
# text. A page altered to make a request must fail the same check.
. "$(dirname "$0")/lib.sh"

need_browser
# Where timer samples land is what the page's checks follow; under
# ThreadSanitizer signals wait for the runtime's sync points, so they do
# not land in tight Lua loops (the sample_*.sh tests skip there too).
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) skip "the samples' places cannot be relied on under ThreadSanitizer" ;;
esac

# spec LOG NAME SEARCH: $T/NAME.spec from the report and folded stacks
# (SEARCH AUTO: the name of the Lua function with the most samples).
spec() {
	report_json "$1" "$T/$2.json"
	ljlog folded "$1" >"$T/$2.folded" 2>/dev/null || true
	python3 - "$T/$2.json" "$T/$2.folded" "$3" >"$T/$2.spec" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
search = sys.argv[3]
fns = d["functions"]
n = d["samples"]
if search == "AUTO":
    # The Lua function (not a main chunk) with the most samples: where the
    # samples fall depends on the machine (under ThreadSanitizer churn's
    # allocations take them all), so the search follows the log.
    lua = [f for f in fns if f["kind"] == "lua" and f["line"] > 0 and f["samples_total"] > 0]
    search = max(lua, key=lambda f: f["samples_total"])["name"].split(" ")[0]
spec = {"search": search, "views": {}, "hostile": []}
# The folded stacks' frames and roots (the page draws the same stacks: the
# report's host functions outside the VM are in neither).
frames, roots = set(), []
for ln in open(sys.argv[2], encoding="utf-8", errors="replace"):
    fr = ln.rstrip("\n").rsplit(" ", 1)[0].split(";")
    frames.update(fr)
    if fr[0] not in roots:
        roots.append(fr[0])
spec["roots"] = roots
def shown(f):
    return f["name"].replace(";", "_").replace(" ", "_") in frames
# Wide frames: the functions in at least a tenth of the samples.
top = sorted((f for f in fns if f["samples_total"] * 10 >= n and shown(f)),
             key=lambda f: -f["samples_total"])[:4]
spec["top"] = [f["name"] for f in top]
# Zoom into the function with most samples of its own that is not in
# every sample (its siblings go).
# (None when every sampled function is in every sample: a short run under
# ThreadSanitizer; report.lua's page must have one, see below.)
zc = [f for f in fns if 0 < f["samples_total"] < n and shown(f)]
spec["zoom"] = max(zc, key=lambda f: f["samples"])["name"] if zc else None
# Share of the samples whose stack has a frame matching search.
tot = hit = 0
for ln in open(sys.argv[2], encoding="utf-8", errors="replace"):
    stack, w = ln.rstrip("\n").rsplit(" ", 1)
    tot += int(w)
    if search.lower() in stack.lower():
        hit += int(w)
assert tot == n, (tot, n)
# As the page's Number.toFixed(2) rounds it: a tie goes up (58 of 64 is
# 90.625%: "90.63%", where Python's "%.2f" says 90.62).
from fractions import Fraction
c = (Fraction(10000 * hit, tot) + Fraction(1, 2)).__floor__()
spec["share"] = "%d.%02d%%" % (c // 100, c % 100)
spec["views"]["samples"] = {"label": "Samples", "total": "%d samples" % n}
if d["calls"]:
    spec["views"]["calls"] = {"label": "Call time", "total": None,
        "names": [max(fns, key=lambda f: f["self_ns"])["name"]]}
ab = sum(s["alloc_bytes"] for s in d["alloc_sites"])
if ab:
    spec["views"]["alloc"] = {"label": "Allocated bytes", "total": "%d bytes" % ab,
        "names": [max(d["alloc_sites"], key=lambda s: s["alloc_bytes"])["function"]]}
spec["hostile"] = [f["name"] for f in fns if "<" in f["name"]]
json.dump(spec, sys.stdout)
PY
		fail "$2: cannot make the page's expectations"
}

# page LOG NAME: ljlog flame -> $T/NAME.html, self-contained.
page() {
	ljlog flame -o "$T/$2.html" "$1" 2>"$T/$2.err" ||
		{ show "$T/$2.err"; fail "$2: ljlog flame failed"; }
	if grep -n -i -E '(src|href)=["'"'"']?[a-z]+:|https?://|@import|url\(' "$T/$2.html" |
		grep -v 'href="data:,"' >"$T/$2.urls"; then
		show "$T/$2.urls"
		fail "$2: the page names something to load"
	fi
}

profile "file=$T/f.ljlog,calls,alloc,sample" "$E2E/report.lua" >/dev/null 2>"$T/f.perr" ||
	{ show "$T/f.perr"; fail "the profiled run failed"; }
check_complete "$T/f.ljlog"
page "$T/f.ljlog" f
spec "$T/f.ljlog" f AUTO
grep -q '"zoom": null' "$T/f.spec" && { show "$T/f.spec"; fail "report.lua: no function to zoom into"; }
node_run "$E2E/flame_check.js" "$T/f.html" "$T/f.spec" >"$T/f.out" 2>&1 ||
	{ cat "$T/f.out" >&2; fail "report.lua (calls,alloc,sample): the page fails"; }
sed "s/^ok: flame page: /ok: $test_name: report.lua: /" "$T/f.out"

# Lua-first stacks (stacks.lua with samples and host stacks): one root
# tower, the main chunk, as wide as the samples whose folded stack starts
# there.
profile "file=$T/s.ljlog,nodefaults,sample=1ms,host" "$E2E/stacks.lua" >/dev/null 2>"$T/s.perr" ||
	{ show "$T/s.perr"; fail "the stacks.lua run failed"; }
page "$T/s.ljlog" s
spec "$T/s.ljlog" s AUTO
python3 - "$T/s.spec" "$T/s.folded" "$E2E/stacks.lua" <<'PY' || fail "stacks.lua: no tower to expect"
import json, re, sys
spec = json.load(open(sys.argv[1]))
tower = "main_chunk_(%s)" % re.sub(r"[; \n]", "_", sys.argv[3])
tot = hit = 0
for ln in open(sys.argv[2], encoding="utf-8", errors="replace"):
    st, w = ln.rstrip("\n").rsplit(" ", 1)
    tot += int(w)
    hit += int(w) if st.split(";")[0] == tower else 0
assert hit * 2 > tot, (hit, tot)
spec["tower"], spec["tower_share"] = tower, hit / tot
json.dump(spec, open(sys.argv[1], "w"))
PY
node_run "$E2E/flame_check.js" "$T/s.html" "$T/s.spec" >"$T/s.out" 2>&1 ||
	{ cat "$T/s.out" >&2; fail "stacks.lua: the page fails"; }
sed "s/^ok: flame page: /ok: $test_name: stacks.lua: /" "$T/s.out" | grep 'root'
ljlog flame --host -o "$T/sh.html" "$T/s.ljlog" 2>"$T/sh.err" || { show "$T/sh.err"; fail "ljlog flame --host failed"; }
grep -q '"_start"' "$T/sh.html" || fail "stacks.lua: _start not in the --host page"
# The Lua-first page names host frames only where a sample has no Lua frame
# (one taken while luajit closes the state, say): its folded stack then
# starts at _start, and only then may the page name it.
if ! grep -q '^_start[; ]' "$T/s.folded"; then
	! grep -q '"_start"' "$T/s.html" ||
		fail "stacks.lua: _start in the Lua-first page, though no folded stack starts there"
fi
ok "stacks.lua: ljlog flame --host keeps the host frames (_start)"

# Chunks named like markup.
profile "file=$T/h.ljlog,sample,calls" "$E2E/hostile.lua" >/dev/null 2>"$T/h.perr" ||
	{ show "$T/h.perr"; fail "the hostile run failed"; }
page "$T/h.ljlog" h
grep -q '</script><script>' "$T/h.html" && fail "hostile: '</script><script>' is in the page as is"
grep -q '<!-- x' "$T/h.html" && fail "hostile: '<!-- x' is in the page as is"
spec "$T/h.ljlog" h script
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hostile"]))' "$T/h.spec")" -ge 2 ] ||
	fail "hostile: the report has no function named like markup"
node_run "$E2E/flame_check.js" "$T/h.html" "$T/h.spec" >"$T/h.out" 2>&1 ||
	{ cat "$T/h.out" >&2; fail "hostile.lua: the page fails"; }
sed "s/^ok: flame page: /ok: $test_name: hostile.lua: /" "$T/h.out" | grep -i 'hostile\|script\|request\|error'

# A differential page (flame --base): compare.lua's version 2 (mix runs 3
# times as often, quick as often) against version 1, in the call-time
# view: mix's frame red, quick's blue, as wide as version 2 says.
for v in 1 2; do
	profile "file=$T/c$v.ljlog,calls,alloc,sample=1ms" "$E2E/compare.lua" "$v" \
		>/dev/null 2>"$T/c$v.perr" || { show "$T/c$v.perr"; fail "compare.lua $v failed"; }
done
ljlog flame --base "$T/c1.ljlog" -o "$T/c.html" "$T/c2.ljlog" 2>"$T/c.err" ||
	{ show "$T/c.err"; fail "flame --base failed"; }
grep -q '"title":"c2.ljlog against c1.ljlog","diff":true' "$T/c.html" ||
	fail "flame --base: the page is not titled for the run and its base, or not differential"
spec "$T/c2.ljlog" c AUTO
python3 - "$T/c.spec" "$T/c.json" <<'PY' || fail "compare.lua: no mix or quick to expect"
import json, sys
spec, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
name = {f["name"].split(" ")[0]: f["name"] for f in d["functions"] if f["kind"] == "lua"}
spec["diff"] = {"view": "calls", "grew": [name["mix"]], "shrank": [name["quick"]]}
json.dump(spec, open(sys.argv[1], "w"))
PY
node_run "$E2E/flame_check.js" "$T/c.html" "$T/c.spec" >"$T/c.out" 2>&1 ||
	{ cat "$T/c.out" >&2; fail "compare.lua: the differential page fails"; }
sed "s/^ok: flame page: /ok: $test_name: flame --base: /" "$T/c.out" | grep 'diff\|frames\|error'

# The check can fail: the page without its Content-Security-Policy, with an
# image to fetch.
python3 - "$T/f.html" "$T/bad.html" <<'PY'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
s = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", s, flags=re.S)
s = s.replace("<body>", '<body><img src="http://ljlog-flame.invalid/x.png">', 1)
open(sys.argv[2], "w", encoding="utf-8").write(s)
PY
if node_run "$E2E/flame_check.js" "$T/bad.html" "$T/f.spec" >"$T/bad.out" 2>&1; then
	fail "a page that loads an image passed the check"
fi
grep -q 'FAIL: flame page: no request but' "$T/bad.out" ||
	{ cat "$T/bad.out" >&2; fail "a page that loads an image failed for another reason"; }
ok "a page that loads an image fails the check ($(grep 'no request' "$T/bad.out"))"

# Errors and help.
rc=0
ljlog flame "$T/f.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'no output given' "$T/e.err" || fail "flame without -o: exit $rc, $(cat "$T/e.err")"
rc=0
ljlog flame -o "$T/no/dir/x.html" "$T/f.ljlog" >/dev/null 2>"$T/e.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "cannot write $T/no/dir/x.html" "$T/e.err" || fail "flame to an unwritable path: exit $rc, $(cat "$T/e.err")"
ljlog flame --help | grep -q 'network' || fail "flame --help says nothing of the network"
ok "errors: no -o, unwritable output (exit 2); --help"
