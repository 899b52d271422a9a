#!/usr/bin/env bash
# ljlog e2e: the reader never crashes on a damaged log.
# From one complete log, checked block by block (the checksums the format
# names: XXH32 of each header, our own; XXH3 of each payload, version 13's
# flag, from the system's libxxhash), make damaged copies: cut at random offsets,
# and random bytes changed inside a payload *with both checksums fixed up*,
# so that the decoder (not just the checksum) meets bad varints, lengths
# and IDs. `ljlog check`, `ljlog dump -v` and `ljlog report --json` must
# end with a documented exit status (0 ok, 1 truncated, 3 corrupt, and for
# check 4: a changed END may name a write error), never
# a signal, a time out or a sanitizer report; a cut log is always exactly
# "truncated" (check exit 1).
. "$(dirname "$0")/lib.sh"

[ -x "$LJLOG" ] || fail "the ljlog CLI is not built ($LJLOG)"
good=$T/good.ljlog
profile "file=$good,buffer=4k" "$E2E/calls.lua" >/dev/null 2>"$T/err" ||
	{ show "$T/err"; fail "the calls.lua run failed"; }
check_complete "$good"

python3 - "$good" "$LJLOG" "$T" "${FUZZ_N:-60}" <<'EOF' || fail "the reader mishandled damaged logs (see above)"
import ctypes, ctypes.util, os, random, re, struct, subprocess, sys

good, ljlog, tmp, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
M = 0xFFFFFFFF
P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393

def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M

def xxh32(data, seed=0):
    """XXH32 as specified by xxHash (doc/xxhash_spec.md)."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 16 <= n:
            for j in range(4):
                (w,) = struct.unpack_from("<I", data, i + 4 * j)
                v[j] = rotl((v[j] + w * P2) & M, 13) * P1 & M
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 4 <= n:
        (w,) = struct.unpack_from("<I", data, i)
        h = rotl((h + w * P3) & M, 17) * P4 & M
        i += 4
    while i < n:
        h = rotl((h + data[i] * P5) & M, 11) * P1 & M
        i += 1
    h ^= h >> 15
    h = h * P2 & M
    h ^= h >> 13
    h = h * P3 & M
    h ^= h >> 16
    return h

assert xxh32(b"") == 0x02CC5D05 and xxh32(b"a") == 0x550D7456, "our XXH32 is wrong"

# Payloads (version 13, header flag bit 0): XXH3-64's low 32 bits, from
# libxxhash (installed with libxxhash-dev), not from ljlog.
_lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
_lib.XXH3_64bits.restype = ctypes.c_uint64
_lib.XXH3_64bits.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
def xxh3_32(data):
    return _lib.XXH3_64bits(bytes(data), len(data)) & M

assert _lib.XXH3_64bits(b"", 0) == 0x2D06800538D394C2, "libxxhash's XXH3 is not XXH3"

data = open(good, "rb").read()
blocks, off = [], 8
while off < len(data):
    sync, kind, flags, length, pck, hck = struct.unpack_from("<HBBIII", data, off)
    payload = data[off + 16: off + 16 + length]
    if sync != 0xB10C or not flags & 1 or hck != xxh32(data[off:off + 12]) or pck != xxh3_32(payload):
        print("block at offset %d: no XXH3 flag, or sync/checksums do not match XXH32 "
              "(header) and XXH3 (payload) of the bytes" % off, file=sys.stderr)
        sys.exit(1)
    blocks.append((off, kind, length))
    off += 16 + length
if off != len(data) or blocks[-1][1] != 2:
    print("the intact log does not end with its END block", file=sys.stderr)
    sys.exit(1)
print("ok: fuzz: %d blocks, every header checksum is the XXH32 of its bytes, every "
      "payload checksum (flag XXH3) the XXH3 of its bytes" % len(blocks))

def refix(buf, boff):
    """Recompute both checksums of the block at boff."""
    length = struct.unpack_from("<I", buf, boff + 4)[0]
    struct.pack_into("<I", buf, boff + 8, xxh3_32(bytes(buf[boff + 16: boff + 16 + length])))
    struct.pack_into("<I", buf, boff + 12, xxh32(bytes(buf[boff: boff + 12])))

def run(path, *args):
    try:
        p = subprocess.run([ljlog] + list(args) + [path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.returncode, p.stderr.decode(errors="replace")

rng = random.Random(20240611)
bad, counts = [], {"cut": 0, "payload": 0, "length": 0}
path = os.path.join(tmp, "damaged.ljlog")
middle = [b for b in blocks[1:-1] if b[2] > 0]
for i in range(n):
    buf = bytearray(data)
    what = ("cut", "payload", "payload", "length")[i % 4]
    if what == "cut":
        cut = rng.randrange(0, len(data))
        buf = buf[:cut]
        desc = "cut at %d" % cut
    elif what == "payload":
        boff, kind, length = rng.choice(middle)
        changes = []
        for _ in range(rng.choice((1, 1, 2, 4))):
            at = boff + 16 + rng.randrange(length)
            buf[at] = rng.choice((0x00, 0xFF, 0x80, 0x7F, rng.randrange(256)))
            changes.append(at)
        refix(buf, boff)
        desc = "block at %d (kind %d): bytes %s changed, checksums fixed" % (boff, kind, changes)
    else:
        boff, kind, length = rng.choice(blocks[1:])
        new = rng.choice((0, 1, length - 1, length + 1, 1 << 26, (1 << 26) + 1, 0xFFFFFFFF))
        struct.pack_into("<I", buf, boff + 4, new & M)
        refix(buf, boff)
        desc = "block at %d (kind %d): length %d -> %d, checksums fixed" % (boff, kind, length, new & M)
    counts[what] += 1
    open(path, "wb").write(buf)
    for args, allowed in ((("check",), (0, 1, 3, 4)), (("dump", "-v"), (0, 1, 3)),
                          (("report", "--json"), (0, 1, 3))):
        rc, err = run(path, *args)
        if what == "cut" and args == ("check",):
            allowed = (1,)
        if rc not in allowed or re.search(r"Sanitizer|runtime error", err):
            bad.append("%s: ljlog %s: exit %s (allowed %s)\n%s"
                       % (desc, " ".join(args), rc, allowed, err[:600]))
    if len(bad) >= 5:
        break
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: fuzz: %d cut, %d payload-changed and %d length-changed logs: check, dump -v "
      "and report --json end with 0/1/3, never a signal or a sanitizer report; "
      "every cut log checks as truncated" % (counts["cut"], counts["payload"], counts["length"]))
EOF
