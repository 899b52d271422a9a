#!/usr/bin/env python3
"""ljlog bench: paired CPU-time ratios with a confidence interval.

  bench/paired.py [-n ROUNDS] [-w] NAME=COMMAND... -- BASE_NAME

Runs every COMMAND (a shell command line) once per round, in a rotating
order, and takes each child's CPU time (user + sys, all its threads, from
wait4). For each NAME but the base it prints the median over the rounds of
the ratio to the base run of the same round, with a 90% bootstrap interval
of that median: on a shared, noisy machine the interval says how far the
figure can be trusted. It also prints the ratio of the two configurations'
best (least) times, the figure bench/run.sh gives. With -w, the same for
wall-clock time too (a writer thread moves work off the program's thread:
wall time shows what the program waits, CPU time what the machine pays).
Never used as a test threshold.
"""
import os, random, statistics, subprocess, sys, time

def cpu_of(cmd):
    """(CPU seconds, wall seconds) of one run of cmd."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("paired.py: %r exited with %d" % (cmd, os.waitstatus_to_exitcode(status)))
    return ru.ru_utime + ru.ru_stime, wall

def show(t, names, base, what, rng):
    for n in names:
        if n == base:
            continue
        q = [a / b for a, b in zip(t[n], t[base])]
        med = statistics.median(q)
        boot = sorted(statistics.median(rng.choices(q, k=len(q))) for _ in range(2000))
        lo, hi = boot[int(0.05 * len(boot))], boot[int(0.95 * len(boot)) - 1]
        print("  %-12s %.3fx %s (90%% interval %.3f-%.3f)  best/best %.3fx" %
              (n, med, what, lo, hi, min(t[n]) / min(t[base])))

def main(argv):
    rounds, wall = 11, False
    while argv[:1] in (["-n"], ["-w"]):
        if argv[0] == "-w":
            wall, argv = True, argv[1:]
        else:
            rounds, argv = int(argv[1]), argv[2:]
    if "--" not in argv:
        sys.exit(__doc__)
    i = argv.index("--")
    cfgs = [a.split("=", 1) for a in argv[:i]]
    base = argv[i + 1]
    names = [n for n, _ in cfgs]
    if base not in names:
        sys.exit("paired.py: no configuration named %r" % base)
    t = {n: [] for n in names}
    tw = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(cfgs)
        for n, c in cfgs[k:] + cfgs[:k]:
            cpu, w = cpu_of(c)
            t[n].append(cpu)
            tw[n].append(w)
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rng = random.Random(1)
    print("%s: median %.4f s CPU over %d rounds" % (base, statistics.median(t[base]), rounds))
    show(t, names, base, "CPU ", rng)
    if wall:
        print("%s: median %.4f s wall" % (base, statistics.median(tw[base])))
        show(tw, names, base, "wall", rng)

main(sys.argv[1:])
