#!/usr/bin/env python3
# ljlog e2e: compare a frame of `ljlog top` (plain text, -n 0) with
# `ljlog report --json` of the same log.
# Usage: top_frame.py TOP_OUT REPORT_JSON [WHICH]
#   WHICH: "last" (default): the last frame must be the final one ("end")
#          and its totals must equal the report's, function by function;
#   "count": print the number of frames;
import json, re, sys

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)"
                 r"\s+(\d+)\s+(\d+)  (.+)$")
HEAD = re.compile(r"^== frame (\d+) \((\w+)\) ==$")


def frames(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        m = HEAD.match(line)
        if m:
            out.append({"n": int(m.group(1)), "state": m.group(2), "rows": {},
                        "header": []})
            continue
        if not out:
            sys.exit("text before the first '== frame' line: %r" % line)
        m = ROW.match(line)
        if m:
            out[-1]["rows"][m.group(9)] = {
                "samples": int(m.group(2)), "alloc_bytes": int(m.group(6)),
                "calls": int(m.group(8)), "samples_last": int(m.group(1)),
                "calls_last": int(m.group(7))}
        else:
            out[-1]["header"].append(line)
    return out


fr = frames(sys.argv[1])
which = sys.argv[3] if len(sys.argv) > 3 else "last"
if which == "count":
    print(len(fr))
    sys.exit(0)
if not fr:
    sys.exit("no frame")
nums = [f["n"] for f in fr]
if nums != list(range(1, len(fr) + 1)):
    sys.exit("frames not numbered 1..N: %s" % nums)
last = fr[-1]
if last["state"] != "end":
    sys.exit("the last frame is '%s', not 'end'" % last["state"])
rep = json.load(open(sys.argv[2]))
fns = {f["name"]: f for f in rep["functions"]}
head = "\n".join(last["header"])
m = re.search(r"samples (\d+), dropped (\d+)", head)
if not m:
    sys.exit("no samples/dropped in the header:\n" + head)
if (int(m.group(1)), int(m.group(2))) != (rep["samples"],
                                          rep["samples_dropped"]):
    sys.exit("header samples/dropped %s, report %d/%d" % (
        m.groups(), rep["samples"], rep["samples_dropped"]))
m = re.search(r"vms (\d+)", head)
if not m or int(m.group(1)) != rep["vms"]:
    sys.exit("header vms %s, report %d" % (m and m.group(1), rep["vms"]))
# Every row equals the report; every function with a count is a row.
for name, r in last["rows"].items():
    f = fns.get(name)
    if f is None:
        sys.exit("top shows %r, which the report does not have" % name)
    for k in ("calls", "samples", "alloc_bytes"):
        if r[k] != f.get(k, 0):
            sys.exit("%s of %r: top %d, report %d" % (k, name, r[k],
                                                      f.get(k, 0)))
m = re.search(r"sorted by ([a-z ]+);", head)
field = {"samples": "samples", "self time": "self_ns",
         "alloc bytes": "alloc_bytes"}.get(m and m.group(1))
if not field:
    sys.exit("no sort key in the header:\n" + head)
shown = 0
for name, f in fns.items():
    key = f.get(field, 0)
    if key and name not in last["rows"]:
        sys.exit("%r has %s %d in the report, not in top" % (name, field, key))
    if not key and name in last["rows"]:
        sys.exit("%r has no %s in the report, but is in top" % (name, field))
    shown += name in last["rows"]
print("ok: %d functions (%s) equal the report" % (shown, field))
