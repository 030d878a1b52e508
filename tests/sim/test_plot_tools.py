#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test_plot_tools.py - what pcm-plot and pcm-sweep-plot draw, read back from
matplotlib's figures rather than looked at: 64 flows in 64 distinct styles,
more flows by class, a failure's interval shaded, a baseline under the run,
and a sweep's policies side by side with the seeds' spread as error bars;
pcm-sweep-plot run as pcm-sim sweep runs it (-j 2, --wait for "go").

    test_plot_tools.py TOOLS_DIR   (the directory of pcm-plot and pcm-sweep-plot)

Exits 77 without matplotlib.
"""
import importlib.machinery
import importlib.util
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


def load(path, name):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Keep:
    """Stands in for pyplot's close(): keeps the figures to read them."""

    def __init__(self, plt):
        self.plt, self.figures = plt, []

    def __getattr__(self, name):
        return getattr(self.plt, name)

    def close(self, fig):
        self.figures.append(fig)


def write(path, header, rows):
    with open(path, "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


def flows_records(d, n_flows, failure=True):
    """uet-flows.csv and goodput.csv of @n_flows flows over 10 samples, and a failure."""
    os.makedirs(d, exist_ok=True)
    flows, goodput = [], []
    for t in range(10):
        for i in range(n_flows):
            flows.append((t * 10000000, i, n_flows, 0, "swift" if i % 2 else "dctcp",
                          4184 * (1 + (i + t) % 7), 1 << 20, 0, 0, 0, 0, t))
            goodput.append((t * 10000000, i, i, n_flows, 4096 * t * (1 + i % 3)))
    write(os.path.join(d, "uet-flows.csv"), "time_ps,nic,peer,group,policy,cwnd_bytes,rate,"
          "inflight_bytes,backlog_bytes,base_rtt_ps,last_rtt_ps,feeds", flows)
    write(os.path.join(d, "goodput.csv"), "time_ps,flow,src,dst,delivered_bytes", goodput)
    write(os.path.join(d, "failures.csv"), "link_a,link_b,at_ps,until_ps,loss",
          [("agg0.0", "core0", 20000000, 40000000, 1)] if failure else [])
    write(os.path.join(d, "fct.csv"), "flow,src,dst,bytes,post_ps,send_complete_ps,"
          "recv_complete_ps,msg_complete_ps,fct_ps",
          [(i, i, n_flows, 4096, 0, 1, 1, 1000000 * (i + 1), 1000000 * (i + 1))
           for i in range(n_flows)])


def test_flow_styles(plot, plt, tmp):
    styles = {plot.flow_style(i) for i in range(64)}
    check(len(styles) == 64, "64 flows get 64 distinct (colour, line style) pairs: %d"
          % len(styles))
    d = os.path.join(tmp, "r64")
    flows_records(d, 64)
    keep = Keep(plt)
    plot.plot_cwnd(keep, plot.Run(d), None, os.path.join(d, "cwnd.png"))
    ax = keep.figures[-1].axes[0]
    lines = [(l.get_color(), l.get_linestyle()) for l in ax.get_lines()]
    check(len(lines) == 64 and len(set(lines)) == 64,
          "cwnd.png draws 64 flows in 64 distinct styles (%d lines, %d styles)"
          % (len(lines), len(set(lines))))
    check(any(p.get_label().startswith("link agg0.0-core0 down") for p in ax.patches),
          "cwnd.png shades the link failure")
    spans = [p for p in ax.patches if p.get_label().startswith("link")]
    if spans:
        xs = [v[0] for v in spans[0].get_xy()]
        check(abs(min(xs) - 20) < 1e-9 and abs(max(xs) - 40) < 1e-9,
              "the shading spans the failure, 20 to 40 us: %s" % xs)


def test_many_flows_by_class(plot, plt, tmp):
    d = os.path.join(tmp, "r100")
    flows_records(d, 100, failure=False)
    keep = Keep(plt)
    what = plot.plot_cwnd(keep, plot.Run(d), None, os.path.join(d, "cwnd.png"))
    ax = keep.figures[-1].axes[0]
    labels = sorted(l.get_label() for l in ax.get_lines())
    check(labels == ["dctcp: median of 50 flows (band: min-max)",
                     "swift: median of 50 flows (band: min-max)"],
          "100 flows are drawn as 2 classes: %s (%s)" % (labels, what))


def test_goodput_and_baseline(plot, plt, tmp):
    run, base = os.path.join(tmp, "run"), os.path.join(tmp, "base")
    flows_records(run, 4)
    flows_records(base, 4, failure=False)
    keep = Keep(plt)
    plot.plot_goodput(keep, plot.Run(run), plot.Run(base), os.path.join(run, "goodput.png"))
    ax = keep.figures[-1].axes[0]
    mine = [l for l in ax.get_lines() if not l.get_label().startswith("_")]
    grey = [l for l in ax.get_lines() if l.get_color() == plot.BASELINE]
    check(len(mine) == 4 and len(grey) == 4,
          "goodput.png: 4 flows over 4 baseline flows in grey (%d, %d)" % (len(mine), len(grey)))
    # flow 0 -> 4 delivers 4096 B per 10 us sample: 3.2768 Gbit/s
    ys = [y for l in mine if l.get_label() == "0 -> 4" for y in l.get_ydata()]
    check(ys and abs(ys[0] - 3.2768) < 1e-6, "flow 0's goodput is 3.2768 Gbit/s: %s" % ys[:3])
    keep = Keep(plt)
    plot.plot_fct(keep, plot.Run(run), plot.Run(base), os.path.join(run, "fct.png"))
    labels = [l.get_label() for l in keep.figures[-1].axes[0].get_lines()]
    check(len(labels) == 2 and labels[0].startswith("baseline: base"),
          "fct-cdf.png has the run and the baseline: %s" % labels)


def test_sweep_plot(sweep, plt, tmp):
    d = os.path.join(tmp, "sweep")
    os.makedirs(d)
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        for i, (pol, seed, jain) in enumerate([("a", 1, 0.5), ("a", 2, 0.7), ("b", 1, 0.9),
                                                ("b", 2, 0.9)]):
            f.write(json.dumps({"cell": i, "scenario_file": "s.yaml", "policy": pol,
                                "seed": seed, "status": "ok",
                                "result": {"jain": jain, "fct_us": {"max": 10}}}) + "\n")
        f.write(json.dumps({"cell": 4, "scenario_file": "s.yaml", "policy": "b", "seed": 3,
                            "status": "failed"}) + "\n")
    records = sweep.read_records(os.path.join(d, "results.jsonl"))
    keep = Keep(plt)
    sweep.plot_metric(keep, records, sweep.METRICS[1], os.path.join(d, "jain.png"))
    ax = keep.figures[-1].axes[0]
    bars = sorted((round(p.get_x(), 3), round(p.get_height(), 3)) for p in ax.patches)
    check([h for _, h in bars] == [0.6, 0.9], "jain: policy a's mean 0.6 beside b's 0.9: %s"
          % bars)
    check("1 cells not ok" in ax.get_title(), "the failed cell is counted: %s" % ax.get_title())
    caps = [l for l in ax.get_lines() if len(l.get_ydata()) == 1]
    spans = sorted(round(float(l.get_ydata()[0]), 3) for l in caps)
    check(0.5 in spans and 0.7 in spans, "a's error bar spans its seeds, 0.5 to 0.7: %s" % spans)
    keep = Keep(plt)
    sweep.plot_metric(keep, records, sweep.METRICS[0], os.path.join(d, "fct.png"))
    check(keep.figures[-1].axes[0].get_ylabel() == "max FCT (us)",
          "without an ideal, the FCT figure shows max FCT")
    # a metric with no fallback that only some cells have (here one): those are drawn
    with open(os.path.join(d, "results.jsonl"), "a") as f:
        f.write(json.dumps({"cell": 5, "scenario_file": "s.yaml", "policy": "a", "seed": 3,
                            "status": "ok", "result": {"retransmits": 7}}) + "\n")
    records = sweep.read_records(os.path.join(d, "results.jsonl"))
    keep = Keep(plt)
    sweep.plot_metric(keep, records, sweep.METRICS[2], os.path.join(d, "retransmits.png"))
    heights = [round(p.get_height(), 3) for p in keep.figures[-1].axes[0].patches]
    check(heights == [7.0], "retransmits: the one cell that has them: %s" % heights)


def test_sweep_plot_wait(tools, tmp):
    """--wait draws only after "go" on stdin, every figure (here in 2 processes), in order."""
    d = os.path.join(tmp, "sweep-wait")
    os.makedirs(d)
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        for i, pol in enumerate(["a", "b"]):
            f.write(json.dumps({"cell": i, "scenario_file": "s.yaml", "policy": pol, "seed": 1,
                                "status": "ok",
                                "result": {"jain": 0.9, "fct_us": {"max": 10}, "retransmits": 1,
                                           "goodput_gbps": 50, "drops": 0}}) + "\n")
    tool = [sys.executable, os.path.join(tools, "pcm-sweep-plot"), "--wait", "-j", "2", d]
    out = os.path.join(d, "plots")
    r = subprocess.run(tool, input="", capture_output=True, text=True)
    check(r.returncode == 0 and not os.path.exists(out),
          "--wait without go draws nothing and exits 0: %d %s" % (r.returncode, r.stderr))
    r = subprocess.run(tool, input="go\n", capture_output=True, text=True)
    lines = r.stdout.splitlines()
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(r.returncode == 0 and len(lines) == 5 and "fct-over-ideal.png" in lines[0]
          and "drops.png" in lines[4], "after go, five lines in order: %s %s" % (lines, r.stderr))
    check(names == ["drops.png", "fct-over-ideal.png", "goodput.png", "jain.png",
                    "retransmits.png"], "after go, the five figures: %s" % names)


def main(argv):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("skip: no matplotlib (python3-matplotlib)")
        return 77
    tools = argv[1]
    plot = load(os.path.join(tools, "pcm-plot"), "pcm_plot")
    sweep = load(os.path.join(tools, "pcm-sweep-plot"), "pcm_sweep_plot")
    with tempfile.TemporaryDirectory() as tmp:
        test_flow_styles(plot, plt, tmp)
        test_many_flows_by_class(plot, plt, tmp)
        test_goodput_and_baseline(plot, plt, tmp)
        test_sweep_plot(sweep, plt, tmp)
        test_sweep_plot_wait(tools, tmp)
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
