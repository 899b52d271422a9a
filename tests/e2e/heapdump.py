"""Parse `ljlog dump -v` HEAP output into snapshots (tests/e2e/heap*.sh).

snapshots: list (log order) of dicts:
  vm, seq, objs {id: Obj}, roots [(name, id)], summary {...}, parts {...}
"""
import re
import sys

OBJ = re.compile(r'^    object #(\d+) (\w+) size (\d+)( unreachable)?'
                 r'(?: at 0x([0-9a-f]+))? "(.*)"$')
REF = re.compile(r'^      ([a-z ]+?)( weak)? ([\[.(].*) -> #(\d+)$')
ROOT = re.compile(r'^    root "(.*)" -> #(\d+)$')
SUM = re.compile(r'^  vm (\d+), snapshot (\d+): (\d+) objects, (\d+) bytes, '
                 r'(\d+) unreachable, gc_total (\d+), other (\d+), '
                 r'rest (-?\d+), pause (\d+) ns, gc (\w+)$')
PART = re.compile(r'^    part "(.*)" (\d+)$')


class Obj:
    def __init__(self, oid, typ, size, unreachable, text, addr=None):
        self.id, self.type, self.size = oid, typ, size
        self.unreachable, self.text = unreachable, text
        self.addr = addr  # its block's address (version 10), else None
        self.refs = []  # (kind, weak, label, target)

    def ref(self, label, kind=None):
        """Targets of the references with this label (and kind)."""
        return [r[3] for r in self.refs
                if r[2] == label and (kind is None or r[0] == kind)]


def parse(path):
    snaps, cur, obj = [], None, None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = OBJ.match(line)
        if m:
            if cur is None:
                cur = {"objs": {}, "roots": [], "parts": {}}
            obj = Obj(int(m[1]), m[2], int(m[3]), bool(m[4]), m[6],
                      int(m[5], 16) if m[5] else None)
            if obj.id in cur["objs"]:
                raise SystemExit("object #%d twice in one snapshot" % obj.id)
            cur["objs"][obj.id] = obj
            continue
        m = REF.match(line)
        if m and obj is not None:
            obj.refs.append((m[1], bool(m[2]), m[3], int(m[4])))
            continue
        m = ROOT.match(line)
        if m:
            if cur is None:
                cur = {"objs": {}, "roots": [], "parts": {}}
            cur["roots"].append((m[1], int(m[2])))
            continue
        m = SUM.match(line)
        if m:
            if cur is None:
                cur = {"objs": {}, "roots": [], "parts": {}}
            cur.update(vm=int(m[1]), seq=int(m[2]), objects=int(m[3]),
                       bytes=int(m[4]), unreachable=int(m[5]),
                       gc_total=int(m[6]), other=int(m[7]), rest=int(m[8]),
                       pause=int(m[9]), gc=m[10])
            snaps.append(cur)
            cur, obj = None, None
            continue
        m = PART.match(line)
        if m and snaps:
            snaps[-1]["parts"][m[1]] = int(m[2])
    return snaps


def globals_of(s):
    """The globals table of a snapshot: the 'main thread env' root."""
    for name, oid in s["roots"]:
        if name == "main thread env":
            return s["objs"][oid]
    raise SystemExit("no 'main thread env' root")


def check_sums(s, where):
    """The identity: objects + parts == gc_total, and the counts agree."""
    objs = s["objs"].values()
    problems = []
    if s["objects"] != len(s["objs"]):
        problems.append("objects %d, records %d" % (s["objects"], len(s["objs"])))
    if s["bytes"] != sum(o.size for o in objs):
        problems.append("bytes %d, sizes sum to %d" % (s["bytes"], sum(o.size for o in objs)))
    if s["unreachable"] != sum(o.unreachable for o in objs):
        problems.append("unreachable count")
    if s["bytes"] + sum(s["parts"].values()) != s["gc_total"] or s["rest"] != 0:
        problems.append("bytes %d + parts %d != gc_total %d (rest %d)" % (
            s["bytes"], sum(s["parts"].values()), s["gc_total"], s["rest"]))
    for o in objs:
        for r in o.refs:
            if r[3] not in s["objs"]:
                problems.append("#%d refers to #%d, not in the snapshot" % (o.id, r[3]))
                break
    if problems:
        raise SystemExit("%s: %s" % (where, "; ".join(problems[:5])))
