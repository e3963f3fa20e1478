#!/usr/bin/python3
"""Export eight torchvision classification networks to ONNX for nnbench and the anchors.

The large-network benchmark set of issue 35: resnet18, resnet50, mobilenet_v2, mobilenet_v3_small,
efficientnet_b0, squeezenet1_1, shufflenet_v2_x1_0 and regnet_y_400mf, each built with
`weights=None` (the speed of a network does not depend on its trained values; no download), in
eval mode, exported at 1x3x224x224 (batch 1, ONNX opset 13, constants folded). The files are large
(resnet50: 98 MB) and are written to a cache folder, never into git:

    /usr/bin/python3 bench/models/export_torchvision.py [--out DIR] [--only NAME,...] [--dynamic-batch]

DIR defaults to build/bench-models/torchvision inside the repository (build*/ is git-ignored).
An existing file is kept unless --force is given. --dynamic-batch also writes NAME.dyn.onnx with a
free batch dimension (for ONNX Runtime at batch N; nnd reads either).

Needs Debian's python3-torch, python3-torchvision and python3-onnx (use /usr/bin/python3):
    apt-get install -y python3-torch python3-torchvision python3-onnx

Weights come from torch's default initialisers with a fixed seed, so reruns on the same package
versions write the same values. BatchNorm keeps its initial statistics (mean 0, variance 1): the
passes fold it into the convolutions the same way whatever its values.
"""

import argparse
import os
import sys

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_OUT = os.path.join(REPO, "build", "bench-models", "torchvision")

MODELS = [
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "efficientnet_b0",
    "squeezenet1_1",
    "shufflenet_v2_x1_0",
    "regnet_y_400mf",
]


def export(name, path, dynamic):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.rand(1, 3, 224, 224)
    kwargs = {}
    if dynamic:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=13, do_constant_folding=True,
                          input_names=["input"], output_names=["output"], **kwargs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="folder for NAME.onnx (default: %(default)s)")
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--dynamic-batch", action="store_true", help="also write NAME.dyn.onnx with a free batch axis")
    ap.add_argument("--force", action="store_true", help="rewrite files that exist")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or MODELS
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit("export_torchvision.py: unknown model(s): " + ", ".join(unknown) + " (known: " + ", ".join(MODELS) + ")")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in names:
        for dynamic in ([False, True] if args.dynamic_batch else [False]):
            path = os.path.join(args.out, name + (".dyn" if dynamic else "") + ".onnx")
            if os.path.exists(path) and not args.force:
                print("kept    " + path)
                continue
            tmp = path + ".tmp"
            export(name, tmp, dynamic)
            os.replace(tmp, path)
            print("wrote   %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


if __name__ == "__main__":
    main()
