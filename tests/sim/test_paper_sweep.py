#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test_paper_sweep.py - the PCM paper's incast study as pcm-sim runs it
(scenarios/sweeps/paper.yaml, all 200 cells): the shape docs/paper-sweep.md
reads off its figures, checked on the records.

    test_paper_sweep.py PCM_SIM GRID

- every cell runs, and the comparison figures are drawn (with matplotlib);
- in every configuration the incast-tuned window (mprdma-iw4) has the lower
  mean maximum FCT over the ideal;
- at 4 and 8 senders it drops nothing, and with 64 KB messages its maximum
  FCT is at least 2x shorter;
- the gain shrinks as messages grow: at each degree, 64 KB gains more than
  256 KB;
- over the whole grid it avoids at least 80% of the drops.

In the 'slow' suite (200 cells, about 10 CPU seconds).
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: %s" % what)


def run(pcm_sim, grid, out):
    p = subprocess.run([pcm_sim, "sweep", grid, "-o", out, "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout, end="")
    check(p.returncode == 0, "pcm-sim sweep exits 0: %d" % p.returncode)
    check("200 of 200 cells recorded: 200 ok" in p.stdout, "all 200 cells ran and are ok")
    cells = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    return cells, p.stdout


def by_configuration(cells):
    fct = collections.defaultdict(list)
    drops = collections.Counter()
    for c in cells:
        if c["status"] != "ok":
            continue
        key = (c["configuration"], c["policy"])
        fct[key].append(c["result"]["max_fct_over_ideal"])
        drops[key] += c["result"]["drops"]
    mean = {k: sum(v) / len(v) for k, v in fct.items()}
    return mean, drops


def main(argv):
    pcm_sim, grid = argv[1], argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        cells, log = run(pcm_sim, grid, os.path.join(tmp, "paper"))
        if "pcm-sweep-plot:" in log:
            for fig in ("fct-over-ideal.png", "drops.png"):
                check(os.path.getsize(os.path.join(tmp, "paper", "plots", fig)) > 4096,
                      "%s is drawn" % fig)
    mean, drops = by_configuration(cells)
    speedup = {}
    for n in (4, 8, 16, 32, 64):
        for size in ("64KB", "256KB"):
            c = "%dx%s" % (n, size)
            base, tuned = mean.get((c, "mprdma")), mean.get((c, "mprdma-iw4"))
            if base is None or tuned is None:
                check(False, "%s has records of both policies" % c)
                continue
            speedup[c] = base / tuned
            print("%-9s mprdma %.2f  mprdma-iw4 %.2f  speedup %.2f  drops %d -> %d" %
                  (c, base, tuned, speedup[c], drops[(c, "mprdma")],
                   drops[(c, "mprdma-iw4")]))
            check(tuned < base, "%s: the tuned window's max FCT is lower" % c)
            if n <= 8:
                check(drops[(c, "mprdma-iw4")] == 0, "%s: the tuned window drops nothing" % c)
                check(drops[(c, "mprdma")] > 0, "%s: one BDP per sender drops" % c)
    for n in (4, 8):
        c = "%dx64KB" % n
        check(speedup.get(c, 0) >= 2.0, "%s: at least 2x: %.2f" % (c, speedup.get(c, 0)))
    for n in (4, 8, 16, 32, 64):
        small, large = speedup.get("%dx64KB" % n, 0), speedup.get("%dx256KB" % n, 0)
        check(small > large, "%d senders: 64 KB gains more than 256 KB: %.2f, %.2f" %
              (n, small, large))
    base = sum(v for (c, p), v in drops.items() if p == "mprdma")
    tuned = sum(v for (c, p), v in drops.items() if p == "mprdma-iw4")
    avoided = 1 - tuned / base if base else 0
    print("drops: mprdma %d, mprdma-iw4 %d: %.1f%% avoided" % (base, tuned, 100 * avoided))
    check(avoided >= 0.8, "at least 80%% of the drops avoided: %.1f%%" % (100 * avoided))
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("ok: the paper's incast study has its shape")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
