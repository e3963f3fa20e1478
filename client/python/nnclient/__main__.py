"""python3 -m nnclient: list the models an nnd daemon serves, or run a smoke inference.

    python3 -m nnclient [--endpoint E]                      # daemon version and served models
    python3 -m nnclient [--endpoint E] infer MODEL [--batch N] [--save DIR]

Exit status: 0 success, 1 daemon or model error (the message names the status), 2 usage error.
"""

import argparse
import os
import sys
import time

import numpy as np

import nnclient


def _models(c: nnclient.Client) -> int:
    try:
        d = c.daemon_info()
        print(f"nnd {d['version']} (git {d['git_revision']}), pid {d['pid']}, "
              f"{d['models']} model(s), {d['clients']} client(s)")
    except nnclient.Error as e:
        if e.status != nnclient.Status.E_PROTOCOL:
            raise
        print("nnd (version unknown: the daemon is older than this library)")
    models = c.models()
    if not models:
        print("(no models served)")
    for m in models:
        print(f"{m.name}  version {m.version}  engine {m.engine}  max_batch {m.max_batch}")
        for kind, ts in (("input ", m.inputs), ("output", m.outputs)):
            for t in ts:
                print(f"  {kind} {t.name:<24} {str(t.shape):<20} {t.dtype}")
    return 0


def _infer(c: nnclient.Client, model: str, batch: int, save: str) -> int:
    info = c.model_info(model)
    inputs = nnclient.deterministic_input(info, batch)
    for t, a in zip(info.inputs, inputs):
        print(f"input  {t.name}: {a.shape} {a.dtype} from pattern")
    t0 = time.perf_counter()
    outs = c.infer(info, inputs)
    ms = (time.perf_counter() - t0) * 1e3
    print(f"model {info.name} (version {info.version}, engine {info.engine}): batch {batch} in "
          f"{ms:.3f} ms")
    for t, o in zip(info.outputs, outs):
        print(f"output {t.name}: {o.shape} float32  min {o.min():.6g} max {o.max():.6g}")
        if save:
            os.makedirs(save, exist_ok=True)
            path = os.path.join(save, t.name.replace("/", "_") + ".npy")
            np.save(path, o)
            print(f"wrote {path}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m nnclient",
        description="Ask a running nnd daemon for its models, or run a smoke inference on "
                    "nnrun's deterministic input pattern. The daemon is reached at --endpoint "
                    "(or $NND_ENDPOINT, default \"nnd\"); a value containing '/' is a socket "
                    "path. libnnclient is loaded from $NNCLIENT_LIBRARY, the build tree or the "
                    "system.")
    p.add_argument("--endpoint", "-e", help="daemon endpoint name or socket path")
    p.add_argument("--version", action="version",
                   version=f"nnclient (libnnclient {nnclient.version()}, {nnclient.library_path()})")
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("models", help="daemon version and served models (the default)")
    inf = sub.add_parser("infer", help="run MODEL once on the deterministic pattern")
    inf.add_argument("model")
    inf.add_argument("--batch", type=int, default=1, help="samples (default 1)")
    inf.add_argument("--save", metavar="DIR", help="write DIR/<output name>.npy for each output")
    a = p.parse_args(argv)
    if a.cmd == "infer" and a.batch < 1:
        p.error("--batch must be >= 1")
    try:
        with nnclient.Client(a.endpoint) as c:
            if a.cmd == "infer":
                return _infer(c, a.model, a.batch, a.save)
            return _models(c)
    except nnclient.Error as e:
        print(f"nnclient: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
