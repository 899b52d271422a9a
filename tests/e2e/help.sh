#!/usr/bin/env bash
# ljlog e2e: help, man page, README and the code agree. The command table
# (reader/cli/main.c cmds[]), each command's option table (its getopt_long
# struct option and short-option string) and the export formats
# (reader/cli/export.c formats[]) are read from the source; then:
# - `ljlog --help` lists every command of the table and no other, and its
#   exit statuses are the man page's EXIT STATUS entries;
# - `ljlog CMD --help` and `-h` exit 0 on stdout, start with 'usage: ljlog
#   CMD', name every option of the table (long and short), and every
#   option they define (an indented '-x' or '--name' line, or in the usage
#   lines) is in the table;
# - man/ljlog.1 has each command in SYNOPSIS and in COMMANDS, each
#   SYNOPSIS line of a command names only its options, and every long
#   option of the table appears in the man page;
# - every export format is in `ljlog --help`, `ljlog export --help` and
#   the man page, and `export --help` lists no other;
# - the README shows every command;
# - a usage error says one line and "see 'ljlog CMD --help'".
. "$(dirname "$0")/lib.sh"

python3 - "$top_srcdir" "$LJLOG" <<'PY' || fail "help, man page and code disagree (see above)"
import glob, os, re, subprocess, sys

src, ljlog = sys.argv[1:]
bad = []


def run(*args):
    p = subprocess.run([ljlog, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


main = open(os.path.join(src, "reader/cli/main.c")).read()
m = re.search(r"cmds\[\] = \{(.*?)\};", main, re.S)
cmds = dict(re.findall(r'\{"(\w+)",\s*(cli_\w+)\}', m.group(1)))
if len(cmds) < 9:
    sys.exit("FAIL: could not read the command table: %r" % cmds)

cli_h = open(os.path.join(src, "reader/cli/cli.h")).read()
# Each command's options: its file is the one that defines cli_CMD.
opts = {}
short_of = {}  # (command, long option) -> its short option
for c, fn in cmds.items():
    for f in glob.glob(os.path.join(src, "reader/cli/*.c")):
        s = open(f).read()
        if not re.search(r"^int %s\(int argc" % fn, s, re.M):
            continue
        t = re.search(r"struct option \w+\[\] = \{(.*?)\};", s, re.S)
        body = t.group(1)
        # The shared narrowing options (cli.h's CLI_NARROW_OPTIONS).
        if "CLI_NARROW_OPTIONS" in body:
            m = re.search(r"#define CLI_NARROW_OPTIONS(.*?)\n\n", cli_h, re.S)
            body = body.replace("CLI_NARROW_OPTIONS", m.group(1).replace("\\\n", "\n"))
        ents = re.findall(r'\{"([\w-]+)",\s*\w+,\s*NULL,\s*([^}]*)\}', body)
        longs = [e[0] for e in ents]
        for e in ents:
            if re.fullmatch(r"'.'", e[1].strip()):
                short_of[(c, e[0])] = e[1].strip()[1]
        sh = re.search(r'getopt_long\(argc, argv, "([^"]*)"', s).group(1)
        shorts = [x for x in sh if x not in "+:"]
        opts[c] = (set(longs), set(shorts))
    if c not in opts or not opts[c][0]:
        sys.exit("FAIL: no option table found for %s" % c)

# ljlog --help
rc, out, err = run("--help")
if rc != 0 or err:
    bad.append("ljlog --help: exit %d, stderr %r" % (rc, err))
sec = out.split("Commands")[1].split("\n\n")[0]
listed = set(re.findall(r"^  (\w+)\s", sec, re.M))
for c in set(cmds) - listed:
    bad.append("ljlog --help does not list command %s" % c)
for c in listed - set(cmds):
    bad.append("ljlog --help lists %s, which is no command" % c)
ex = out[out.index("Exit status"):]
help_status = set(int(x) for x in re.findall(r"(?<![\w+])(\d{1,3})(?![\w+])", ex))

# ljlog CMD --help
for c, (longs, shorts) in sorted(opts.items()):
    for h in ("--help", "-h"):
        rc, out, err = run(c, h)
        if rc != 0 or err or not out.startswith("usage: ljlog %s" % c):
            bad.append("ljlog %s %s: exit %d, stderr %r, starts %r" % (c, h, rc, err, out[:30]))
    text = out
    for o in longs:
        if not re.search(r"(?<![\w-])--%s(?![\w-])" % re.escape(o), text):
            bad.append("ljlog %s --help does not name --%s" % (c, o))
    for o in shorts:
        if not re.search(r"(?<![\w-])-%s(?![\w-])" % re.escape(o), text):
            bad.append("ljlog %s --help does not name -%s" % (c, o))
    usage = text.split("\n\n")[0]
    defined = re.findall(r"^\s{2,}(?:-(\w), )?--([\w-]+)", text, re.M)
    defined_l = set(d[1] for d in defined) | set(re.findall(r"(?<![\w-])--([\w-]+)", usage))
    defined_s = set(d[0] for d in defined if d[0]) | set(re.findall(r"^\s{2,}-(\w)\b", text, re.M)) | \
        set(re.findall(r"\[-(\w)\b", usage))
    for o in defined_l - longs:
        bad.append("ljlog %s --help defines --%s, which the option table has not" % (c, o))
    for o in defined_s - shorts:
        bad.append("ljlog %s --help defines -%s, which the option table has not" % (c, o))
    # A usage error: one line, then where to look.
    rc, out, err = run(c, "--no-such-option")
    lines = err.splitlines()
    if rc != 2 or len(lines) != 2 or lines[1] != "see 'ljlog %s --help'" % c:
        bad.append("ljlog %s --no-such-option: exit %d, stderr %r" % (c, rc, err))

# The man page.
man = open(os.path.join(src, "man/ljlog.1")).read()
syn = man.split(".SH SYNOPSIS")[1].split(".SH ")[0]
segs = {}
for part in re.split(r"\n\.br\n", syn):
    mm = re.match(r"\s*\.B ljlog (\w+)", part)
    if mm:
        segs.setdefault(mm.group(1), []).append(part)
for c in set(segs) - set(cmds):
    bad.append("man SYNOPSIS: ljlog %s is no command" % c)
commands = man.split(".SH COMMANDS")[1].split("\n.SH ")[0]
for c, (longs, shorts) in sorted(opts.items()):
    if c not in segs:
        bad.append("man SYNOPSIS has no 'ljlog %s'" % c)
        continue
    if not re.search(r"^\.TP\n\.B %s$" % c, commands, re.M):
        bad.append("man COMMANDS has no entry for %s" % c)
    seg = "\n".join(segs[c])
    sl = set(re.findall(r"\\-\\-(\w(?:\w|\\-)*)", seg))
    sl = set(x.replace("\\-", "-") for x in sl)
    ss = set(re.findall(r"(?<!\\-)\\-(\w)(?!\w)", seg))
    for o in sl - longs:
        bad.append("man SYNOPSIS of %s names --%s, which the option table has not" % (c, o))
    for o in ss - shorts:
        bad.append("man SYNOPSIS of %s names -%s, which the option table has not" % (c, o))
    for o in longs - {"help"}:
        # Long or short form in the synopsis; the long form in the page.
        if o not in sl and short_of.get((c, o)) not in ss:
            bad.append("man SYNOPSIS of %s does not name --%s" % (c, o))
        if "\\-\\-" + o.replace("-", "\\-") not in man:
            bad.append("man page does not name %s --%s" % (c, o))
man_status = set(int(x) for x in re.findall(
    r"^\.B (\d+)$", man.split(".SH EXIT STATUS")[1].split("\n.SH ")[0], re.M))
if help_status != man_status:
    bad.append("exit statuses: ljlog --help %s, man EXIT STATUS %s" % (sorted(help_status), sorted(man_status)))

# Export formats.
exp = open(os.path.join(src, "reader/cli/export.c")).read()
ft = exp.split("formats[] = {")[1].split("\n};")[0]
formats = set(re.findall(r'^    \{"(\w+)",', ft, re.M))
if len(formats) < 4:
    bad.append("could not read the export formats: %r" % formats)
rc, mainhelp, _ = run("--help")
rc, exphelp, _ = run("export", "--help")
listed = set(re.findall(r"^  (\w+)\s{2,}\S", exphelp.split("Formats:")[1].split("\n\n")[0], re.M))
for f in formats:
    if not re.search(r"\b%s\b" % f, mainhelp):
        bad.append("ljlog --help does not name export format %s" % f)
    if f not in listed:
        bad.append("ljlog export --help does not list format %s" % f)
    if not re.search(r"(\\-\\-format\\fR \\fB|\\-\\-format |^\.B )%s\b" % f, man, re.M):
        bad.append("man page does not name export format %s" % f)
for f in listed - formats:
    bad.append("ljlog export --help lists format %s, which is not in the table" % f)

readme = open(os.path.join(src, "README.md")).read()
for c in cmds:
    if not re.search(r"\bljlog %s\b" % c, readme):
        bad.append("README does not show ljlog %s" % c)

for b in bad:
    print("FAIL: %s" % b)
if bad:
    sys.exit(1)
print("ok: %d commands, %d options, %d formats, exit statuses %s: help, man page, README and tables agree"
      % (len(cmds), sum(len(l) + len(s) for l, s in opts.values()), len(formats), sorted(man_status)))
PY
ok "help, man page, README and the command, option and format tables agree"
