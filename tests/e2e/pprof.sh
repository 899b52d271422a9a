#!/bin/sh
# ljlog e2e: `ljlog export --format pprof` read by Go's `go tool pprof`
# (-raw, -top, -tags): samples, allocations and calls, each from its own
# log and all three from one, against `ljlog report --json` and `ljlog
# folded` (pprof_check.py computes both sides); call counts are first
# checked against a debug.sethook counter, inuse bytes against the
# program's own live heap. A truncated or altered profile must fail the
# same check. Then the command's errors.
. "$(dirname "$0")/lib.sh"

need_go
pprof_script
gotool version >/dev/null 2>&1 || skip "'go version' does not run"

# export NAME: $T/NAME.ljlog -> $T/NAME.pb.gz (exit 0, the note on stderr).
export_pprof() {
	ljlog export --format pprof -o "$T/$1.pb.gz" "$T/$1.ljlog" \
		2>"$T/$1.export.err" ||
		{ show "$T/$1.export.err"; fail "$1: ljlog export --format pprof failed"; }
	grep -q "pprof leaves out" "$T/$1.export.err" ||
		fail "$1: no note on stderr of what pprof leaves out"
	[ "$(head -c 2 "$T/$1.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
		fail "$1: $T/$1.pb.gz is not gzipped"
}

# inputs NAME: report --json and the folded stacks of $T/NAME.ljlog.
inputs() {
	report_json "$T/$1.ljlog" "$T/$1.json"
	ljlog folded "$T/$1.ljlog" >"$T/$1.folded" 2>/dev/null ||
		fail "$1: ljlog folded failed"
	ljlog folded --calls "$T/$1.ljlog" >"$T/$1.fcalls" 2>/dev/null ||
		fail "$1: ljlog folded --calls failed"
}

# check NAME [PPROF] [LIVE]: pprof_check.py on NAME's export (or PPROF).
check() {
	python3 "$E2E/pprof_check.py" "$T/pprof" "${2:-$T/$1.pb.gz}" \
		"$T/$1.json" "$T/$1.folded" "$T/$1.fcalls" "${3:--}"
}

# -- Samples --------------------------------------------------------------------
profile "file=$T/smp.ljlog,sample" "$E2E/report.lua" >/dev/null 2>"$T/smp.err" ||
	{ show "$T/smp.err"; fail "the sampled run failed"; }
check_complete "$T/smp.ljlog"
inputs smp
[ "$(json_get "$T/smp.json" 'd["samples"] > 20')" = true ] ||
	fail "samples: fewer than 20 samples ($(json_get "$T/smp.json" 'd["samples"]'))"
export_pprof smp
check smp >"$T/smp.check" 2>&1 || { cat "$T/smp.check" >&2; fail "samples: pprof differs"; }
ok "samples: $(cat "$T/smp.check")"
"$T/pprof" -raw -symbolize=none "$T/smp.pb.gz" 2>/dev/null | grep -q '^PeriodType: cpu nanoseconds$' ||
	fail "samples: PeriodType is not 'cpu nanoseconds'"

# A wall-clock log says wall.
profile "file=$T/wall.ljlog,sample=2ms,wall" "$E2E/report.lua" >/dev/null 2>"$T/wall.err" ||
	{ show "$T/wall.err"; fail "the wall-clock run failed"; }
inputs wall
export_pprof wall
check wall >"$T/wall.check" 2>&1 || { cat "$T/wall.check" >&2; fail "wall: pprof differs"; }
"$T/pprof" -raw -symbolize=none "$T/wall.pb.gz" 2>/dev/null >"$T/wall.raw"
grep -q '^PeriodType: wall nanoseconds$' "$T/wall.raw" && grep -q '^Period: 2000000$' "$T/wall.raw" ||
	{ show "$T/wall.raw"; fail "wall: PeriodType/Period are not wall nanoseconds / 2000000"; }
ok "wall: $(cat "$T/wall.check")"

# -- Allocations ---------------------------------------------------------------------
profile "file=$T/alloc.ljlog,alloc" "$E2E/alloc.lua" >"$T/alloc.out" 2>"$T/alloc.err" ||
	{ show "$T/alloc.err"; fail "the allocation run failed"; }
check_complete "$T/alloc.ljlog"
inputs alloc
export_pprof alloc
check alloc "" "$(cat "$T/alloc.out")" >"$T/alloc.check" 2>&1 ||
	{ cat "$T/alloc.check" >&2; fail "alloc: pprof differs"; }
ok "alloc: $(cat "$T/alloc.check")"

# -- Calls (counts checked against the hook first) ---------------------------------
calls_match "$E2E/calls.lua" calls >/dev/null
cp "$T/calls.ljlog" "$T/cl.ljlog"
inputs cl
export_pprof cl
check cl >"$T/cl.check" 2>&1 || { cat "$T/cl.check" >&2; fail "calls: pprof differs"; }
ok "calls (counts as debug.sethook's): $(cat "$T/cl.check")"

# -- All three in one profile: the same totals per function in the report,
# folded and pprof ----------------------------------------------------------------------
profile "file=$T/all.ljlog,calls,alloc,sample" "$E2E/report.lua" >/dev/null 2>"$T/all.err" ||
	{ show "$T/all.err"; fail "the calls,alloc,sample run failed"; }
inputs all
export_pprof all
check all >"$T/all.check" 2>&1 || { cat "$T/all.check" >&2; fail "calls,alloc,sample: pprof differs"; }
[ "$(wc -l <"$T/all.check")" -eq 3 ] ||
	{ cat "$T/all.check" >&2; fail "calls,alloc,sample: not all three sample groups were checked"; }
ok "calls,alloc,sample in one profile: $(tr '\n' ';' <"$T/all.check")"

# -- The check can fail -------------------------------------------------------------------
sz=$(wc -c <"$T/all.pb.gz")
head -c $((sz / 2)) "$T/all.pb.gz" >"$T/trunc.pb.gz"
if check all "$T/trunc.pb.gz" >"$T/trunc.check" 2>&1; then
	fail "a truncated profile passed the check"
fi
ok "a profile cut to $((sz / 2)) of $sz bytes fails the check: $(head -c 200 "$T/trunc.check" | tr '\n' ' ')"
# Same length, valid gzip, other figures: the samples profile as the calls
# profile's.
if check all "$T/smp.pb.gz" >"$T/other.check" 2>&1; then
	fail "another log's profile passed the check"
fi
ok "another log's profile fails the check"

# -- Errors ------------------------------------------------------------------------------
expect_status() { # WHAT STATUS PATTERN COMMAND...
	local what=$1 want=$2 pat=$3 rc=0
	shift 3
	"$@" >"$T/e.out" 2>"$T/e.err" || rc=$?
	[ "$rc" -eq "$want" ] || { show "$T/e.err"; fail "$what: exit $rc, expected $want"; }
	grep -q "$pat" "$T/e.err" || { show "$T/e.err"; fail "$what: no '$pat' on stderr"; }
}
expect_status "unknown format" 2 "unknown format 'nope'" ljlog export --format nope -o "$T/x" "$T/smp.ljlog"
expect_status "no format" 2 "no --format" ljlog export -o "$T/x" "$T/smp.ljlog"
expect_status "no output" 2 "no output given" ljlog export --format pprof "$T/smp.ljlog"
expect_status "unwritable output" 2 "cannot write $T/no/such/dir/x.pb.gz" \
	ljlog export --format pprof -o "$T/no/such/dir/x.pb.gz" "$T/smp.ljlog"
expect_status "missing log" 2 "" ljlog export --format pprof -o "$T/x" "$T/no-such.ljlog"
profile "file=$T/gc.ljlog,gc" "$E2E/report.lua" >/dev/null 2>&1 || fail "the gc-only run failed"
expect_status "nothing to export" 1 "nothing to export" \
	ljlog export --format pprof -o "$T/gc.pb.gz" "$T/gc.ljlog"
[ ! -e "$T/gc.pb.gz" ] || fail "nothing to export: $T/gc.pb.gz left behind"
# Only a regular file is removed after a failure: not a FIFO (nor
# /dev/null, which the fuzzer writes to).
mkfifo "$T/fifo"
cat "$T/fifo" >/dev/null &
track_pid $!
expect_status "nothing to export to a FIFO" 1 "nothing to export" \
	ljlog export --format pprof -o "$T/fifo" "$T/gc.ljlog"
[ -p "$T/fifo" ] || fail "nothing to export: the FIFO given as output was removed"
ljlog export --help | grep -q 'inuse_space/bytes' || fail "export --help says nothing of inuse_space"
ok "errors: unknown format, no format, no output, unwritable output, missing log, nothing to export (exit 2; nothing to export: 1; no file left, a FIFO kept)"
