#!/usr/bin/env bash
# ljlog e2e: 10,000 load() chunks, freed and their addresses reused while
# ljlog runs, all decode with their own names and exact call counts.
# Twice: under luajit (its own allocator), and in the C host with a malloc
# allocator (lua_newstate), so that under AddressSanitizer any read of a
# freed prototype is caught.
. "$(dirname "$0")/lib.sh"

n=${CHUNKS_N:-10000}
opts="calls,alloc,gc,buffer=4k,flush=1ms"

# check_chunks LOG COUNTS: every chunk's main and inner functions have the
# counts the chunks counted themselves.
check_chunks() {
	check_complete "$1"
	report_json "$1" "$T/r.json"
	python3 - "$2" "$T/r.json" "$n" <<'EOF' || fail "$3: chunk counts differ (see above)"
import json, re, sys
counts, jpath, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = {}
for ln in open(counts):
    name, main, inner = ln.split()
    want[(name, 0)] = int(main)
    if int(inner):
        want[(name, 2)] = int(inner)
assert len([k for k in want if k[1] == 0]) == n, "the program wrote %d chunks" % len(want)
d = json.load(open(jpath))
got, bad = {}, []
for f in d["functions"]:
    m = re.fullmatch(r"=?(chunk\d{5})", f["file"])
    if f["kind"] != "lua" or not m:
        if "chunk" in f["name"] and re.search(r"chunk\d{5}", f["name"]):
            bad.append("odd entry %r" % f)
        continue
    key = (m.group(1), f["line"])
    if key in got:
        bad.append("two entries for %s:%d" % key)
    got[key] = f["calls"]
    shown = f["name"] == "main chunk (%s)" % m.group(1) if f["line"] == 0 else \
        re.search(r":%d\)?$" % f["line"], f["name"]) and m.group(1) in f["name"]
    if not shown:
        bad.append("name %r for %s line %d" % (f["name"], f["file"], f["line"]))
for key in sorted(set(want) | set(got)):
    # A function mapped (named) with its chunk but never called: 0 calls.
    if want.get(key) != got.get(key) and not (key not in want and got.get(key) == 0):
        bad.append("%s:%d: the chunk counted %s calls, ljlog reports %s"
                   % (key[0], key[1], want.get(key), got.get(key)))
if bad:
    print("\n".join(bad[:30]), file=sys.stderr)
    print("(%d differences)" % len(bad), file=sys.stderr)
    sys.exit(1)
print("ok: chunks: %d functions of %d chunks, exact names and counts (%d calls)"
      % (len(want), n, sum(want.values())))
EOF
}

profile "file=$T/lj.ljlog,$opts" "$E2E/chunks.lua" 1 "$T/lj.txt" "$n" \
	2>"$T/lj.err" || { show "$T/lj.err"; fail "the profiled luajit run failed"; }
check_chunks "$T/lj.ljlog" "$T/lj.txt" "luajit"
ok "luajit with its own allocator: $n chunks decode"

host --malloc --script "$E2E/chunks.lua" --options "file=$T/host.ljlog,$opts" \
	-- "$T/host.txt" "$n" >"$T/host.out" 2>"$T/host.err" ||
	{ show "$T/host.err"; fail "the host run (malloc allocator) failed"; }
check_chunks "$T/host.ljlog" "$T/host.txt" "host"
ok "C host with lua_newstate(malloc allocator): $n chunks decode"
