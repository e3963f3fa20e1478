#!/usr/bin/python3
"""Time nnd against ONNX Runtime and CompiledNN side by side: fresh processes, pinned, rotated rounds.

    bench/side_by_side.py [options] MODEL...

Per model, every engine runs as its own process pinned to one core (taskset -c CPU), once per
round, in an order rotated each round; each process times ITERS calls and prints its minimum and
median. The table gives per engine the best minimum and the median of the rounds' medians (us),
and each anchor's time over the first nnd engine's (>1: nnd is faster). The machine's load
(/proc/loadavg) before and after is printed with the figures: compare only figures of one run.

Engines (comma-separated --engines; default nnd:auto,ort,cnn):
  nnd:ISA[:tN]  build's nnrun --isa ISA [--threads N] --repeat ITERS (ISA: auto, sse4.1, avx2,
                avx512, neon); auto uses nnrun's default calibration cache (the ISA nnd serves)
  ort           ANCHORS/ort_c on the model's ONNX file (MODEL itself, or the .h5's .onnx twin),
                one thread, all graph optimisations
  cnn           ANCHORS/cnn_harness on a Keras .h5 with the NAO settings (sse: SSE only, no FMA);
                bop's input 0 is fed as camera bytes, as the anchors' README says
An engine that cannot run a model (no twin, no .h5 for CompiledNN) is left out of that model's
rows with a note. --threads-cpus 0,1 pins multi-thread nnd engines to two cores (default: the
same single core as the others, which measures nothing but overhead).

Examples:
  bench/side_by_side.py ../shared/models/*.h5
  bench/side_by_side.py --engines nnd:auto,nnd:avx2,ort build/bench-models/torchvision/*.onnx
  bench/side_by_side.py --engines nnd:avx512,nnd:avx512:t2 --threads-cpus 0,1 ../shared/models/bop.h5
  bench/side_by_side.py --cpu-time --iters 20 build/bench-models/torchvision/*.onnx   (a loaded machine)
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))

NNRUN_RE = re.compile(r"run \(batch \d+\) min ([0-9.]+) ms, median ([0-9.]+) ms")
ANCHOR_RE = re.compile(r"run_us min ([0-9.]+) median ([0-9.]+)")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def twin_onnx(model):
    if model.endswith(".onnx"):
        return model
    twin = os.path.splitext(model)[0] + ".onnx"
    return twin if os.path.exists(twin) else None


def command(engine, model, args):
    """(argv, output regex, factor to us) that times `engine` on `model`, or (None, None, why)."""
    parts = engine.split(":")
    if parts[0] == "nnd":
        isa = parts[1] if len(parts) > 1 else "auto"
        cmd = [args.nnrun, model, "--isa", isa, "--repeat", str(args.iters)]
        cpus = args.cpu
        if len(parts) > 2 and parts[2].startswith("t"):
            cmd += ["--threads", parts[2][1:]]
            cpus = args.threads_cpus or args.cpu
        if args.batch > 1:
            cmd += ["--batch", str(args.batch)]
        if args.cpu_time:
            cmd += ["--cpu-time"]
        return ["taskset", "-c", cpus] + cmd, NNRUN_RE, 1000.0
    if engine == "ort":
        onnx = twin_onnx(model)
        if not onnx:
            return None, None, "no ONNX twin"
        path = onnx
        if args.batch > 1:
            dyn = os.path.splitext(onnx)[0] + ".dyn.onnx"
            if not os.path.exists(dyn):
                return None, None, "batch %d needs %s (../shared/anchors/mkdyn.py)" % (args.batch, dyn)
            path = dyn
        return ["taskset", "-c", args.cpu, os.path.join(args.anchors, "ort_c"), path, str(args.batch),
                str(args.iters)], ANCHOR_RE, 1.0
    if engine == "cnn":
        if not model.endswith(".h5"):
            return None, None, "CompiledNN reads Keras .h5 only"
        if args.batch > 1:
            return None, None, "CompiledNN runs batch 1"
        u8 = "1" if os.path.basename(model).startswith("bop") else "0"
        return ["taskset", "-c", args.cpu, os.path.join(args.anchors, "cnn_harness"), model, "sse", u8,
                str(args.iters)], ANCHOR_RE, 1.0
    sys.exit("side_by_side.py: unknown engine '%s'" % engine)


def run_once(cmd, regex, scale):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = regex.search(p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("%s failed (rc %d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
    return float(m.group(1)) * scale, float(m.group(2)) * scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--engines", default="nnd:auto,ort,cnn")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=200, help="timed calls per process (default 200)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--cpu", default="1", help="the core every single-thread process is pinned to (default 1)")
    ap.add_argument("--threads-cpus", default="", help="cores for nnd:ISA:tN engines (e.g. 0,1)")
    ap.add_argument("--nnrun", default=os.path.join(REPO, "build", "tools", "cli", "nnrun"))
    ap.add_argument("--anchors", default="/work/anchors", help="folder of ort_c and cnn_harness")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time every engine in its thread's CPU time (nnrun --cpu-time, and the anchors rebuilt with a "
                         "CPU-time clock by bench/anchors/build_cpu_time.sh into --cpu-anchors)")
    ap.add_argument("--cpu-anchors", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "nnd-anchors-cpu-time"))
    args = ap.parse_args()
    if args.cpu_time:
        subprocess.run([os.path.join(HERE, "anchors", "build_cpu_time.sh"), args.anchors, args.cpu_anchors], check=True,
                       stdout=subprocess.DEVNULL)
        args.anchors = args.cpu_anchors
    engines = [e for e in args.engines.split(",") if e]
    print("side_by_side: %d rounds x %d calls, batch %d, %s, pinned to cpu %s%s; load %s" %
          (args.rounds, args.iters, args.batch, "thread CPU time" if args.cpu_time else "wall time", args.cpu,
           ", threads on " + args.threads_cpus if args.threads_cpus else "", loadavg()))
    for model in args.models:
        runnable = []
        for e in engines:
            cmd, regex, how = command(e, model, args)
            if cmd is None:
                print("  %s: %s left out (%s)" % (os.path.basename(model), e, how))
            else:
                runnable.append((e, cmd, (regex, how)))
        mins = {e: [] for e, _, _ in runnable}
        meds = {e: [] for e, _, _ in runnable}
        for r in range(args.rounds):
            order = runnable[r % len(runnable):] + runnable[:r % len(runnable)]
            for e, cmd, (regex, scale) in order:
                mn, md = run_once(cmd, regex, scale)
                mins[e].append(mn)
                meds[e].append(md)
        base = next((e for e, _, _ in runnable if e.startswith("nnd")), None)
        print("%s (load %s)" % (model, loadavg()))
        print("  %-16s %10s %10s %12s %12s" % ("engine", "min us", "med us", "x min", "x med"))
        for e, _, _ in runnable:
            mn, md = min(mins[e]), statistics.median(meds[e])
            ratio = ""
            if base and e != base:
                ratio = "%12.2f %12.2f" % (mn / min(mins[base]), md / statistics.median(meds[base]))
            print("  %-16s %10.1f %10.1f %s" % (e, mn, md, ratio))
    print("load after: %s" % loadavg())


if __name__ == "__main__":
    main()
