#!/usr/bin/env bash
# ljlog e2e: heap snapshots of a heap built by construction (heap.lua).
# Every object and reference the program made is in the snapshot with the
# size LuaJIT gives it, named as the program named it; the sizes add up to
# LuaJIT's own heap total in every snapshot, mid-cycle ones included; IDs
# hold across snapshots, and an address reused by a new object gets a new
# one. `ljlog heap` lists what `ljlog dump -v` shows.
. "$(dirname "$0")/lib.sh"

log=$T/heap.ljlog
N=100
rc=0
profile "file=$log" "$E2E/heap.lua" "$N" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "heap.lua exited with status $rc"; }
expect_eq "the last ljlog.snapshot() returns" true "$(cat "$T/out")"
check_complete "$log"
$LJLOG dump -v "$log" >"$T/dump" || fail "ljlog dump -v failed"
$LJLOG heap --json "$log" >"$T/list.json" || fail "ljlog heap --json failed"

python3 - "$T/dump" "$T/list.json" "$N" "$E2E" <<'PY' || fail "see above"
import json, sys
sys.path.insert(0, sys.argv[4])
import heapdump
snaps = heapdump.parse(sys.argv[1])
lst = json.load(open(sys.argv[2]))["snapshots"]
N = int(sys.argv[3])
def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
def one(xs, what):
    if len(xs) != 1:
        die("%s: %d references, not 1" % (what, len(xs)))
    return xs[0]

if len(snaps) != 45:
    die("%d snapshots decoded, the program took 45" % len(snaps))
for i, s in enumerate(snaps):
    heapdump.check_sums(s, "snapshot %d" % (i + 1))
    if s["seq"] != i + 1 or s["vm"] != snaps[0]["vm"]:
        die("snapshot %d numbered %d" % (i + 1, s["seq"]))
    e = lst[i]
    for k in ("objects", "bytes", "gc_total"):
        if e[k] != s[k]:
            die("ljlog heap --json snapshot %d %s %d, dump %d" % (i + 1, k, e[k], s[k]))
    if e["index"] != i + 1 or e["rest"] != 0 or e["pause_ns"] != s["pause"]:
        die("ljlog heap --json snapshot %d: %r" % (i + 1, e))
print("ok: 45 snapshots, objects + %s == gc_total in each" % ", ".join(sorted(snaps[0]["parts"])))

s = snaps[0]
O = s["objs"]
G = heapdump.globals_of(s)
def glob(name):
    return O[one(G.ref("." + name, "field"), "_G." + name)]
def first_elem(t, what):
    x = O[one(t.ref("[1]", "array"), what + "[1]")]
    return x.text

# N strings of 30 bytes, named by index, 56 bytes each.
h = glob("HOLDER")
if h.type != "table":
    die("HOLDER is a %s" % h.type)
for i in range(1, N + 1):
    st = O[one(h.ref("[%d]" % i, "array"), "HOLDER[%d]" % i)]
    want = "heapstr%09d" % i + "y" * 14
    if st.type != "string" or st.size != 56 or st.text != want:
        die("HOLDER[%d]: %s size %d %r, want string size 56 %r" % (i, st.type, st.size, st.text, want))
if len([r for r in h.refs if r[0] == "array"]) != N:
    die("HOLDER has %d array references" % len([r for r in h.refs if r[0] == "array"]))
print("ok: HOLDER: %d strings of 56 bytes, named [1]..[%d]" % (N, N))

# Hash keys: string, number, boolean, object.
nm = glob("NAMED")
okey = glob("OKEY")
for label, text in ((".alpha", "under alpha"), ("[42]", "under 42"),
                    ("[true]", "under true"), ("[#%d]" % okey.id, "under okey")):
    v = O[one(nm.ref(label, "field"), "NAMED" + label)]
    if first_elem(v, "NAMED" + label) != text:
        die("NAMED%s holds %r" % (label, first_elem(v, label)))
if okey.id not in [r[3] for r in nm.refs if r[0] == "key"]:
    die("NAMED has no key reference to OKEY")
print("ok: NAMED: fields .alpha, [42], [true], [#okey] and the key itself")

# Weak keys and values.
wk, wkey = glob("WK"), glob("WKEY")
kr = [r for r in wk.refs if r[0] == "key" and r[3] == wkey.id]
vr = [r for r in wk.refs if r[0] == "field" and r[2] == "[#%d]" % wkey.id]
if len(kr) != 1 or not kr[0][1] or len(vr) != 1 or vr[0][1]:
    die("WK: key refs %r, value refs %r (want a weak key, a strong value)" % (kr, vr))
if [r[0] for r in wk.refs if r[0] == "metatable"] != ["metatable"]:
    die("WK has no metatable reference")
wv = glob("WV")
hv = [r for r in wv.refs if r[2] == ".held"]
if len(hv) != 1 or not hv[0][1] or hv[0][3] != one(nm.ref(".alpha"), "alpha"):
    die("WV.held: %r (want weak, to NAMED.alpha)" % hv)
print("ok: weak key and weak value flagged, strong ones not")

# A suspended coroutine's locals.
co = glob("CO")
if co.type != "thread" or co.text != "coroutine":
    die("CO is %s %r" % (co.type, co.text))
locs = {}
for kind, weak, label, tgt in co.refs:
    if kind == "stack":
        locs[label.split(" of ")[0].split(" ", 2)[-1] if label.count(" ") > 2 else ""] = tgt
if "colocal" not in locs or first_elem(O[locs["colocal"]], "colocal") != "co local":
    die("CO's stack has no local 'colocal' holding the table: %r" % co.refs)
if "arg1" not in locs or first_elem(O[locs["arg1"]], "arg1") != "co arg":
    die("CO's stack has no local 'arg1': %r" % co.refs)
fn_of = [r[2] for r in co.refs if r[0] == "stack" and " colocal " in r[2]][0]
fid = int(fn_of.split("#")[-1].rstrip(")"))
if O[fid].type != "function" or not O[fid].text.endswith("heap.lua:27"):
    die("colocal's frame function is %s %r" % (O[fid].type, O[fid].text))
print("ok: CO: stack slots 'colocal' and 'arg1' of the function at heap.lua:27")

# Closed and open upvalues.
cl = glob("CLOSED")
uv = O[one(cl.ref("(upvalue captured)", "upvalue"), "CLOSED upvalue")]
if uv.type != "upvalue" or uv.text != "closed":
    die("CLOSED's upvalue is %s %r" % (uv.type, uv.text))
if first_elem(O[one(uv.ref("(value)", "value"), "value")], "captured") != "closed upvalue":
    die("the closed upvalue's value")
inner = glob("INNER")
ou = O[one(inner.ref("(upvalue openv)", "upvalue"), "INNER upvalue")]
if ou.type != "upvalue" or ou.text != "open":
    die("INNER's upvalue is %s %r" % (ou.type, ou.text))
if first_elem(O[one(ou.ref("(value)", "value"), "value")], "openv") != "open upvalue":
    die("the open upvalue's value")
if ou.id not in [r[3] for r in glob("CO2").refs if r[0] == "open upvalue"]:
    die("CO2 does not list the open upvalue")
print("ok: upvalues 'captured' (closed) and 'openv' (open, listed by its thread)")

# Userdata and cdata with metatables.
ud = glob("UD")
if ud.type != "userdata" or not ud.text.endswith(" mt HeapProxy") or not ud.ref("(metatable)"):
    die("UD: %s %r %r" % (ud.type, ud.text, ud.refs))
pt = glob("PT")
if pt.type != "cdata" or not pt.text.startswith("ctype ") or pt.size != 16 + 4:
    die("PT: %s size %d %r (want cdata of 16 + 4 bytes)" % (pt.type, pt.size, pt.text))
print("ok: userdata with metatable HeapProxy; cdata %r, 20 bytes" % pt.text)

# IDs hold: snapshot 2 has every object of snapshot 1 under the same ID.
s2 = snaps[1]
same = [i for i in O if i in s2["objs"] and s2["objs"][i].type == O[i].type]
if heapdump.globals_of(s2).ref(".HOLDER") != [h.id] or len(same) < len(O) - 5:
    die("snapshot 2 keeps %d of snapshot 1's %d IDs" % (len(same), len(O)))
print("ok: snapshot 2 keeps %d of snapshot 1's %d IDs (HOLDER #%d in both)" % (len(same), len(O), h.id))

# A freed table's address reused: a new ID.
s3, s4 = snaps[2], snaps[3]
vid = one(heapdump.globals_of(s3).ref(".VICTIM"), "VICTIM")
rid = one(heapdump.globals_of(s4).ref(".REBORN"), "REBORN")
if vid == rid or vid in s4["objs"]:
    die("VICTIM #%d, REBORN #%d at its address (in snapshot 4: %s)" % (vid, rid, vid in s4["objs"]))
if rid in s3["objs"]:
    die("REBORN's ID #%d was already in snapshot 3" % rid)
print("ok: VICTIM #%d freed, REBORN at its address is #%d" % (vid, rid))

# Mid-cycle snapshots.
states = sorted(set(x["gc"] for x in snaps[4:]))
if states == ["pause"]:
    die("no snapshot taken mid-cycle")
for x in snaps[4:]:
    hh = heapdump.globals_of(x).ref(".HOLDER")
    if hh != [h.id] or len([r for r in x["objs"][h.id].refs if r[0] == "array"]) != N:
        die("a mid-cycle snapshot (gc %s) lost HOLDER" % x["gc"])
print("ok: snapshots in GC states %s add up and keep HOLDER" % ", ".join(states))

# IDs hold across frees: thousands of objects were freed between the
# snapshots; HOLDER's strings keep their IDs in all of them.
ids1 = [r[3] for r in h.refs if r[0] == "array"]
for i, x in enumerate(snaps):
    hx = x["objs"][heapdump.globals_of(x).ref(".HOLDER")[0]]
    if [r[3] for r in hx.refs if r[0] == "array"] != ids1:
        die("snapshot %d: HOLDER's strings have other IDs" % (i + 1))
print("ok: HOLDER's %d strings keep their IDs in all %d snapshots" % (len(ids1), len(snaps)))
PY
ok "construction checked (see above)"

# ljlog heap: the other modes.
$LJLOG heap --by type --snapshot 1 --json "$log" >"$T/bytype.json" || fail "--by type"
python3 - "$T/bytype.json" "$T/dump" "$E2E" <<'PY' || fail "--by type"
import json, sys
sys.path.insert(0, sys.argv[3])
import heapdump
s = heapdump.parse(sys.argv[2])[0]
d = json.load(open(sys.argv[1]))
for t in d["types"]:
    objs = [o for o in s["objs"].values() if o.type == t["type"]]
    if t["objects"] != len(objs) or t["bytes"] != sum(o.size for o in objs):
        print("FAIL: --by type %r, the dump says %d objects %d bytes" % (t, len(objs), sum(o.size for o in objs)))
        sys.exit(1)
PY
ok "heap --by type: objects and bytes by type as the dump's objects"

hid=$(python3 -c "
import sys; sys.path.insert(0, '$E2E'); import heapdump
s = heapdump.parse('$T/dump')[0]; h = s['objs'][heapdump.globals_of(s).ref('.HOLDER')[0]]
print(h.ref('[7]')[0])")
$LJLOG heap --path-to "$hid" --snapshot 1 --json "$log" >"$T/path.json" || fail "--path-to $hid"
expect_eq "path to HOLDER[7]: last step" "[7] $hid string" \
	"$(json_get "$T/path.json" '" ".join([d["path"][-1]["ref"], str(d["path"][-1]["id"]), d["path"][-1]["type"]])')"
expect_eq "path to HOLDER[7]: from a root" true "$(json_get "$T/path.json" '"root" in d["path"][0]')"
$LJLOG heap --path-to "$hid" --snapshot 1 "$log" | grep -q '\[7\] -> #'"$hid"' string 56 "heapstr000000007' ||
	fail "--path-to text: $($LJLOG heap --path-to "$hid" --snapshot 1 "$log")"
ok "heap --path-to: HOLDER[7] reached from root $(json_get "$T/path.json" 'd["path"][0]["root"]') in $(json_get "$T/path.json" 'len(d["path"])') steps"

$LJLOG heap --diff 3 4 --json "$log" >"$T/diff.json" || fail "--diff 3 4"
rid=$(python3 -c "
import sys; sys.path.insert(0, '$E2E'); import heapdump
s = heapdump.parse('$T/dump')[3]; print(heapdump.globals_of(s).ref('.REBORN')[0])")
expect_eq "diff 3 4 lists REBORN as new" true \
	"$(json_get "$T/diff.json" "any(o['id'] == $rid and o['type'] == 'table' for o in d['new'])")"
ok "heap --diff 3 4: REBORN #$rid is new"

# Bad requests.
rc=0; $LJLOG heap --snapshot 99 --by type "$log" >/dev/null 2>"$T/e" || rc=$?
expect_eq "--snapshot 99: exit status" 1 "$rc"
grep -q "no snapshot 99" "$T/e" || fail "--snapshot 99 message: $(cat "$T/e")"
rc=0; $LJLOG heap --path-to 999999999 --snapshot 1 "$log" >/dev/null 2>"$T/e" || rc=$?
expect_eq "--path-to unknown ID: exit status" 1 "$rc"
rc=0; $LJLOG heap --by size "$log" >/dev/null 2>"$T/e" || rc=$?
expect_eq "--by size: exit status" 2 "$rc"
$LJLOG heap --help | grep -q "usage: ljlog heap" || fail "heap --help"
ok "no such snapshot, no such ID: exit status 1 (as export); bad --by value: 2; each with a message"
