#!/usr/bin/python3
"""Quantized ONNX fixtures for nnd's int8 reference engine (issue 33; docs/int8.md).

Builds small QLinearConv / QLinearMatMul / ConvInteger / MatMulInteger graphs and QDQ graphs (as
ONNX Runtime's quantizer writes them) with python3-onnx, seeded inputs, and expected outputs from
ONNX Runtime's own int8 execution (onnxruntime-node, graph optimizations "all": the QDQ patterns
are fused into its integer kernels). Writes tests/data/onnx_quant/: <case>.onnx, <case>.in.<i>.npy,
<case>.out.<i>.npy (float32; an integer output holds its integers) and manifest.json.

    /usr/bin/python3 tools/onnx_fixtures/make_quant_fixtures.py [--out DIR]

Needs Debian's python3-onnx and python3-numpy, Node 20 and the onnxruntime-node package of
package.json here (installed with `npm ci --ignore-scripts` when node_modules is missing). The C++
tests read the files only. Deterministic: every case seeds numpy from the CRC32 of its name.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OPSET = 13
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def scalar(name, value, dtype):
    return init(name, np.array(value, dtype=dtype))


def model(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="nnd make_quant_fixtures")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def vinfo(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# Each case returns (model, [input arrays], {output name: (quantization step, tolerance in units, why)}).
# The step is the output's scale for a dequantized output and 1 for an integer one; nnd's output
# must be within tolerance * step of ONNX Runtime's (0: equal).

@case
def q_qlinearconv_u8(name):
    r = rng(name)
    x = r.uniform(-3, 3, (1, 3, 9, 8)).astype(np.float32)
    w = r.integers(-128, 128, (4, 3, 3, 3), dtype=np.int8)
    b = r.integers(-3000, 3000, (4,), dtype=np.int32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    inits = [scalar("xs", 0.025, np.float32), scalar("xz", 120, np.uint8), init("w", w), scalar("ws", 0.0041, np.float32),
             scalar("wz", 0, np.int8), scalar("ys", 0.37, np.float32), scalar("yz", 131, np.uint8), init("b", b)]
    m = model(name, nodes, [vinfo("x", TensorProto.FLOAT, [1, 3, 9, 8])],
              [vinfo("y", TensorProto.FLOAT, [1, 4, 5, 4]), vinfo("yq", TensorProto.UINT8, [1, 4, 5, 4])], inits)
    return m, [x], {"y": (0.37, 0, "QLinearConv: nnd's order of operations is ONNX Runtime's"), "yq": (1, 0, "integers")}


@case
def q_qlinearconv_s8_depthwise_per_channel(name):
    r = rng(name)
    c = 4
    x = r.uniform(-2, 2, (1, c, 7, 7)).astype(np.float32)
    w = r.integers(-128, 128, (c, 1, 3, 3), dtype=np.int8)
    b = r.integers(-500, 500, (c,), dtype=np.int32)
    ws = np.array([0.011, 0.0032, 0.027, 0.0009], dtype=np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"], group=c,
                         pads=[1, 0, 1, 2], dilations=[1, 1]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    inits = [scalar("xs", 0.017, np.float32), scalar("xz", -3, np.int8), init("w", w), init("ws", ws),
             init("wz", np.zeros(c, np.int8)), scalar("ys", 0.021, np.float32), scalar("yz", 5, np.int8), init("b", b)]
    m = model(name, nodes, [vinfo("x", TensorProto.FLOAT, [1, c, 7, 7])], [vinfo("y", TensorProto.FLOAT, [1, c, 7, 7])], inits)
    return m, [x], {"y": (0.021, 0, "depthwise QLinearConv, per-channel int8 weights")}


@case
def q_qlinearconv_u8_input_worst_case(name):
    # uint8 camera bytes straight into QLinearConv; x in {0, 255} and w in {-128, 127}: |acc| up to
    # 255 * 128 * 576 = 18.8M > 2^24, where float32(acc) rounds before the requantization.
    r = rng(name)
    x = (r.integers(0, 2, (1, 64, 5, 5)) * 255).astype(np.uint8)
    w = np.where(r.integers(0, 2, (6, 64, 3, 3)) == 1, 127, -128).astype(np.int8)
    w[0] = -128  # every product at its extreme in filter 0
    x[0, :, 1:4, 1:4] = 255
    nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["yq"])]
    inits = [scalar("xs", 1.0 / 255, np.float32), scalar("xz", 0, np.uint8), init("w", w), scalar("ws", 0.003, np.float32),
             scalar("wz", 0, np.int8), scalar("ys", 0.55, np.float32), scalar("yz", 128, np.uint8)]
    m = model(name, nodes, [vinfo("x", TensorProto.UINT8, [1, 64, 5, 5])], [vinfo("yq", TensorProto.UINT8, [1, 6, 3, 3])], inits)
    return m, [x], {"yq": (1, 0, "integers; accumulators beyond 2^24")}


@case
def q_qlinearmatmul(name):
    r = rng(name)
    x = r.uniform(-1, 4, (3, 12)).astype(np.float32)
    w = r.integers(-128, 128, (12, 5), dtype=np.int8)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    inits = [scalar("xs", 0.02, np.float32), scalar("xz", 50, np.uint8), init("w", w), scalar("ws", 0.013, np.float32),
             scalar("wz", 0, np.int8), scalar("ys", 0.09, np.float32), scalar("yz", 100, np.uint8)]
    m = model(name, nodes, [vinfo("x", TensorProto.FLOAT, [3, 12])], [vinfo("y", TensorProto.FLOAT, [3, 5])], inits)
    return m, [x], {"y": (0.09, 0, "QLinearMatMul")}


@case
def q_convinteger_matmulinteger(name):
    r = rng(name)
    x = r.integers(0, 256, (1, 2, 6, 6), dtype=np.uint8)
    v = r.integers(0, 256, (1, 16), dtype=np.uint8)
    w = r.integers(-128, 128, (3, 2, 3, 3), dtype=np.int8)
    b = r.integers(-128, 128, (16, 6), dtype=np.int8)
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "xz"], ["acc"], pads=[1, 1, 1, 1]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["accf", "s"], ["y"]),
        helper.make_node("MatMulInteger", ["v", "b", "vz", "bz"], ["macc"]),
        helper.make_node("Cast", ["macc"], ["z"], to=TensorProto.FLOAT),
    ]
    inits = [init("w", w), scalar("xz", 128, np.uint8), scalar("s", 0.001, np.float32), init("b", b), scalar("vz", 100, np.uint8),
             init("bz", np.array([0, 1, -2, 3, 0, -1], np.int8))]
    m = model(name, nodes, [vinfo("x", TensorProto.UINT8, [1, 2, 6, 6]), vinfo("v", TensorProto.UINT8, [1, 16])],
              [vinfo("y", TensorProto.FLOAT, [1, 3, 6, 6]), vinfo("z", TensorProto.FLOAT, [1, 6])], inits)
    return m, [x, v], {"y": (0.001, 0, "ConvInteger accumulator times a float scale"), "z": (1, 0, "MatMulInteger accumulator")}


def qdq(x, out, scale, zp, nodes, prefix):
    """x -> QuantizeLinear -> DequantizeLinear -> out, with initializers named prefix_s, prefix_z."""
    nodes.append(helper.make_node("QuantizeLinear", [x, prefix + "_s", prefix + "_z"], [prefix + "_q"]))
    nodes.append(helper.make_node("DequantizeLinear", [prefix + "_q", prefix + "_s", prefix + "_z"], [out]))


@case
def q_qdq_conv_relu_pool_gemm(name):
    # The QDQ layout ONNX Runtime's quantize_static writes (per-channel int8 weights, int32 biases at
    # x_scale * w_scale, uint8 activations; the Relu's output quantized with zero point 0).
    r = rng(name)
    x = r.uniform(-1, 1, (1, 3, 10, 10)).astype(np.float32)
    wc = r.integers(-127, 128, (6, 3, 3, 3), dtype=np.int8)
    wcs = r.uniform(0.002, 0.01, 6).astype(np.float32)
    xs = np.float32(0.008)
    bc = r.integers(-2000, 2000, 6).astype(np.int32)
    wg = r.integers(-127, 128, (4, 6 * 5 * 5), dtype=np.int8)  # Gemm transB: (N, K)
    ag = np.float32(0.02)
    wgs = np.float32(0.004)
    bg = r.integers(-1000, 1000, 4).astype(np.int32)
    nodes = []
    qdq("x", "xd", xs, 128, nodes, "x")
    nodes += [
        helper.make_node("DequantizeLinear", ["wc", "wc_s", "wc_z"], ["wcd"], axis=0),
        helper.make_node("DequantizeLinear", ["bc", "bc_s", "bc_z"], ["bcd"], axis=0),
        helper.make_node("Conv", ["xd", "wcd", "bcd"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c"], ["cr"]),
    ]
    qdq("cr", "crd", ag, 0, nodes, "a")
    nodes.append(helper.make_node("MaxPool", ["crd"], ["p"], kernel_shape=[2, 2], strides=[2, 2]))
    qdq("p", "pd", ag, 0, nodes, "p")
    nodes.append(helper.make_node("Flatten", ["pd"], ["f"], axis=1))
    qdq("f", "fd", ag, 0, nodes, "f")
    nodes += [
        helper.make_node("DequantizeLinear", ["wg", "wg_s", "wg_z"], ["wgd"]),
        helper.make_node("DequantizeLinear", ["bg", "bg_s", "bg_z"], ["bgd"]),
        helper.make_node("Gemm", ["fd", "wgd", "bgd"], ["g"], transB=1),
    ]
    qdq("g", "y", 0.05, 120, nodes, "y")
    inits = [scalar("x_s", xs, np.float32), scalar("x_z", 128, np.uint8), init("wc", wc), init("wc_s", wcs),
             init("wc_z", np.zeros(6, np.int8)), init("bc", bc), init("bc_s", (xs * wcs).astype(np.float32)),
             init("bc_z", np.zeros(6, np.int32))]
    for p in ("a", "p", "f"):
        inits += [scalar(p + "_s", ag, np.float32), scalar(p + "_z", 0, np.uint8)]
    inits += [init("wg", wg), scalar("wg_s", wgs, np.float32), scalar("wg_z", 0, np.int8), init("bg", bg),
              scalar("bg_s", np.float32(ag * wgs), np.float32), scalar("bg_z", 0, np.int32),
              scalar("y_s", 0.05, np.float32), scalar("y_z", 120, np.uint8)]
    m = model(name, nodes, [vinfo("x", TensorProto.FLOAT, [1, 3, 10, 10])], [vinfo("y", TensorProto.FLOAT, [1, 4])], inits)
    return m, [x], {"y": (0.05, 0, "QDQ Conv+Relu and Gemm fused to integer layers, MaxPool between equal quantizations")}


@case
def q_qdq_add_avgpool(name):
    # QDQ Add and average pools: ONNX Runtime runs QLinearAdd / QLinearAveragePool /
    # QLinearGlobalAveragePool (float32 intermediates ONNX does not specify); nnd runs
    # Dequantize -> float64 operation -> Quantize. One unit apart at most, where a result falls
    # near a rounding tie.
    r = rng(name)
    x = r.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    y0 = r.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    nodes = []
    qdq("x", "xd", 0.009, 110, nodes, "x")
    qdq("y0", "yd", 0.011, 140, nodes, "v")
    nodes.append(helper.make_node("Add", ["xd", "yd"], ["s"]))
    qdq("s", "sd", 0.017, 125, nodes, "s")
    nodes.append(helper.make_node("AveragePool", ["sd"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]))
    qdq("ap", "apd", 0.013, 128, nodes, "p")
    nodes.append(helper.make_node("GlobalAveragePool", ["apd"], ["g"]))
    qdq("g", "out", 0.004, 128, nodes, "o")
    inits = []
    for p, s, z in (("x", 0.009, 110), ("v", 0.011, 140), ("s", 0.017, 125), ("p", 0.013, 128), ("o", 0.004, 128)):
        inits += [scalar(p + "_s", s, np.float32), scalar(p + "_z", z, np.uint8)]
    m = model(name, nodes, [vinfo("x", TensorProto.FLOAT, [1, 4, 6, 6]), vinfo("y0", TensorProto.FLOAT, [1, 4, 6, 6])],
              [vinfo("out", TensorProto.FLOAT, [1, 4, 1, 1]), vinfo("sd", TensorProto.FLOAT, [1, 4, 6, 6]), vinfo("apd", TensorProto.FLOAT, [1, 4, 6, 6])],
              inits)
    why = "nnd runs QDQ Add / AveragePool / GlobalAveragePool in float (docs/int8.md); ONNX Runtime's fused int8 kernels may round a tie the other way"
    return m, [x, y0], {"out": (0.004, 1, why), "sd": (0.017, 1, why), "apd": (0.013, 1, why)}


def run_ort(jobs, workdir):
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    path = os.path.join(workdir, "jobs.json")
    with open(path, "w") as f:
        json.dump({"jobs": jobs}, f)
    out = subprocess.run(["node", os.path.join(HERE, "ort_expected.mjs"), path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("ort_expected.mjs failed:\n" + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "onnx_quant"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nnd-quant-fixtures-")
    try:
        manifest = {"generator": "tools/onnx_fixtures/make_quant_fixtures.py", "expected_from": None, "cases": []}
        jobs_all, jobs_plain, built = [], [], []
        for fn in CASES:
            name = fn.__name__
            m, inputs, outs = fn(name)
            mpath = os.path.join(tmp, name + ".onnx")
            onnx.save(m, mpath)
            ins = []
            for i, (vi, arr) in enumerate(zip(m.graph.input, inputs)):
                f = "%s.in.%d.npy" % (name, i)
                np.save(os.path.join(tmp, f), arr)
                ins.append({"name": vi.name, "file": os.path.join(tmp, f), "dtype": str(arr.dtype), "shape": list(arr.shape)})
            outputs = [o.name for o in m.graph.output]
            for level, jobs, tag in (("all", jobs_all, "out"), ("disabled", jobs_plain, "plain")):
                jobs.append({"model": mpath, "optimization": level, "inputs": [{"name": i["name"], "file": i["file"]} for i in ins],
                             "outputs": [{"name": o, "file": os.path.join(tmp, "%s.%s.%d.npy" % (name, tag, k))} for k, o in enumerate(outputs)]})
            built.append((name, m, ins, outputs, outs))
        res_all = run_ort(jobs_all, tmp)
        run_ort(jobs_plain, tmp)
        manifest["expected_from"] = "onnxruntime-node %s, graph optimizations all (int8 kernels)" % res_all["ort_version"]
        for name, m, ins, outputs, outs in built:
            entry = {"name": name, "model": name + ".onnx", "covers": sorted({n.op_type for n in m.graph.node}),
                     "inputs": [{"name": i["name"], "file": os.path.basename(i["file"]), "dtype": i["dtype"], "shape": i["shape"]} for i in ins],
                     "outputs": []}
            for k, o in enumerate(outputs):
                step, tol, why = outs[o]
                got = np.load(os.path.join(tmp, "%s.out.%d.npy" % (name, k)))
                plain = np.load(os.path.join(tmp, "%s.plain.%d.npy" % (name, k)))
                units = float(np.max(np.abs(got.astype(np.float64) - plain)) / step) if got.size else 0.0
                entry["outputs"].append({"name": o, "file": "%s.out.%d.npy" % (name, k), "shape": list(got.shape), "step": step,
                                         "tolerance_units": tol, "why": why,
                                         "ort_fused_vs_unfused_units": round(units, 3)})
            manifest["cases"].append(entry)
        os.makedirs(args.out, exist_ok=True)
        for f in os.listdir(args.out):
            os.remove(os.path.join(args.out, f))
        for name, _, ins, outputs, _ in built:
            shutil.copy(os.path.join(tmp, name + ".onnx"), args.out)
            for i in ins:
                shutil.copy(i["file"], args.out)
            for k in range(len(outputs)):
                shutil.copy(os.path.join(tmp, "%s.out.%d.npy" % (name, k)), args.out)
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        for c in manifest["cases"]:
            print(c["name"], [(o["name"], o["ort_fused_vs_unfused_units"]) for o in c["outputs"]])
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
