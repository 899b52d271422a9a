#!/usr/bin/env python3
# ljlog e2e: compare a frame of `ljlog top` (plain text, -n 0) with
# `ljlog report --json` of the same log.
# Usage: top_frame.py TOP_OUT REPORT_JSON [WHICH]
#   WHICH: "last" (default): the last frame must be the final one ("end")
#          and its totals must equal the report's, function by function;
#   "count": print the number of frames;
import json, re, sys

HEAD = re.compile(r"^== frame (\d+) \((\w+)\) ==$")
# A table's heading: its columns, then "function"; columns are two spaces
# apart (a value may hold one space: "1.5 ms", "12 B").
COLS = re.compile(r"^\s*((?:\S+\s{2,})*)function$")


def fmt_bytes(n):
    """ljlog's byte count with its unit (cli_fmt_bytes)."""
    if n < 1024:
        return "%d B" % n
    v, u = n / 1024, 0
    while u < 2 and v >= 1023.95:
        v /= 1024
        u += 1
    return ("%.2f %s" if u == 2 else "%.1f %s") % (v, ("KiB", "MiB", "GiB")[u])


def frames(path):
    out = []
    cols = None
    for line in open(path):
        line = line.rstrip("\n")
        m = HEAD.match(line)
        if m:
            out.append({"n": int(m.group(1)), "state": m.group(2), "rows": {},
                        "header": [], "cols": None})
            cols = None
            continue
        if not out:
            sys.exit("text before the first '== frame' line: %r" % line)
        m = COLS.match(line)
        if m and cols is None:
            cols = m.group(1).split()
            out[-1]["cols"] = cols
            continue
        cells = re.split(r"\s{2,}", line.strip(), maxsplit=len(cols or []))
        if cols is not None and len(cells) == len(cols) + 1 and \
                not line.startswith(("(", "\u2026")) and \
                all(re.match(r"^[\d.]+( ms| s| B| KiB| MiB| GiB)?$", c)
                    for c in cells[:-1]):
            out[-1]["rows"][cells[-1]] = dict(zip(cols, cells[:-1]))
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
# Columns of families not recorded are left out, the others shown.
cols = last["cols"] or []
rec = rep["recorded"]
for fam, names in (("sample", ("smp.last", "smp.total")),
                   ("calls", ("self.last", "self.total", "calls.last", "calls")),
                   ("alloc", ("alloc.last", "alloc.total"))):
    for c in names:
        if (c in cols) != bool(rec[fam]):
            sys.exit("column %s %s, but %s was %srecorded: %s" % (
                c, "shown" if c in cols else "left out", fam,
                "" if rec[fam] else "not ", cols))
# Every row equals the report; every function with a count is a row.
for name, r in last["rows"].items():
    f = fns.get(name)
    if f is None:
        sys.exit("top shows %r, which the report does not have" % name)
    # Samples as the report's table counts them: a builtin's for its Lua
    # caller (samples_lua).
    for col, k, fmt in (("calls", "calls", str), ("smp.total", "samples_lua", str),
                        ("alloc.total", "alloc_bytes", fmt_bytes)):
        if col in r and r[col] != fmt(f.get(k, 0)):
            sys.exit("%s of %r: top %s, report %s" % (k, name, r[col],
                                                      fmt(f.get(k, 0))))
    if "self.total" in r and not re.match(r"^[\d.]+ (ms|s)$", r["self.total"]):
        sys.exit("self.total of %r without a unit: %r" % (name, r["self.total"]))
m = re.search(r"sorted by ([a-z ]+);", head)
field = {"samples": "samples_lua", "self time": "self_ns",
         "alloc bytes": "alloc_bytes", "calls": "calls"}.get(m and m.group(1))
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
