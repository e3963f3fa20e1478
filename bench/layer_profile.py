#!/usr/bin/python3
"""Per-layer profile of one model on nnd's JIT: time share, us per call, GFLOP/s and % of peak.

    bench/layer_profile.py MODEL [--isa auto] [--repeat N] [--peak GFLOPS] [--cpu 1] [--top K]

Runs `nnrun MODEL --repeat N` under `perf record -e cpu-clock -F 1000` with NND_PERF_MAP=1 (each
kernel is named "nnd:<step>-<layer>: <kernel>" in the profile), pinned to one core, and combines
  - each kernel's share of the samples (perf report),
  - nnrun's median time per call in the thread's CPU time (nnrun --cpu-time: perf's cpu-clock
    samples count CPU time too), so a layer's us = share x median,
  - each layer's FLOPs per sample from `nninfo` (direct-convolution FLOPs; a batch-norm or
    activation the passes fused into a convolution is charged to that convolution's kernels
    only through their time, not their FLOPs),
into one row per layer, costliest first: a layer's share is of the samples in JIT code (the
process also loads and compiles the model), its us that share of the median call. --peak is the machine's FMA peak for the ISA in GFLOP/s
(nnbench prints it: its "% peak" column divides by the peak it measured in the same run); without
it the %-of-peak column is left out.

Needs Linux perf (Debian `linux-perf`). Shares and CPU times hold better than wall times on a loaded
machine, but caches shared with other processes still slow it: compare only figures of one run.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))


def layer_flops(nninfo, model):
    out = subprocess.run([nninfo, model], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    flops = {}
    for line in out.splitlines():
        f = line.split()
        # "#  layer  class  ir-kind  (shape...)  params  FLOPs  jit"
        if len(f) >= 6 and f[0].isdigit() and f[-1] in ("yes", "no"):
            try:
                flops[f[1]] = int(f[-2])
            except ValueError:
                pass
    return flops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("model")
    ap.add_argument("--isa", default="auto")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--peak", type=float, default=0.0)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()
    nnrun = os.path.join(args.build, "tools", "cli", "nnrun")
    nninfo = os.path.join(args.build, "tools", "cli", "nninfo")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "p.perf")
        env = dict(os.environ, NND_PERF_MAP="1")
        run = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-o", data, "taskset", "-c",
                              args.cpu, nnrun, args.model, "--isa", args.isa, "--repeat", str(args.repeat), "--cpu-time"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        m = re.search(r"median ([0-9.]+) ms", run.stdout)
        isa = re.search(r"^isa (\S+)", run.stdout, re.M)
        if run.returncode != 0 or not m:
            sys.exit("layer_profile.py: nnrun failed:\n" + run.stdout[-2000:])
        median_us = float(m.group(1)) * 1000
        rep = subprocess.run(["perf", "report", "-i", data, "--sort", "sym", "--stdio"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
    flops = layer_flops(nninfo, args.model)
    layers = {}  # layer -> [share, kernels]
    other = 0.0
    for line in rep.splitlines():
        mm = re.match(r"\s+([0-9.]+)%\s+\[\.\]\s+nnd:(\d+)-([^:]+): (.*)$", line)
        if mm:
            share, name, kernel = float(mm.group(1)), mm.group(3).strip(), mm.group(4).strip()
            entry = layers.setdefault(name, [0.0, []])
            entry[0] += share
            entry[1].append(kernel)
            continue
        mo = re.match(r"\s+([0-9.]+)%\s", line)
        if mo:
            other += float(mo.group(1))
    total_flops = sum(flops.values())
    print("%s, isa %s: median %.1f us per call over %d calls, %.1f MFLOP per sample (%.1f GFLOP/s overall%s)" %
          (args.model, isa.group(1) if isa else "?", median_us, args.repeat, total_flops / 1e6,
           total_flops / median_us / 1e3, ", peak %.0f" % args.peak if args.peak else ""))
    print("  %6s %9s %8s %7s  %s" % ("share", "us", "GFLOP/s", "% peak" if args.peak else "", "layer: kernels"))
    jit_total = sum(v[0] for v in layers.values()) or 1.0
    for name, (share, kernels) in sorted(layers.items(), key=lambda kv: -kv[1][0])[:args.top]:
        share = 100 * share / jit_total  # of the JIT code's samples: loading and compiling are not
        us = share / 100 * median_us
        f = flops.get(name, 0)
        gf = f / us / 1e3 if us > 0 and f else 0
        peak = "%6.0f%%" % (100 * gf / args.peak) if args.peak and gf else ""
        print("  %5.1f%% %9.1f %8.1f %7s  %s: %s" % (share, us, gf, peak, name, ", ".join(sorted(set(kernels)))))
    print("  (shares of the samples in JIT code, %.1f%% of all; the rest is loading, compiling, the run loop and "
          "helpers: a layer's us is its share of the median)" % jit_total)


if __name__ == "__main__":
    main()
