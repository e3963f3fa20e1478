#!/usr/bin/python3
"""ONNX loader fixtures for nnd: small models, inputs and expected outputs.

Writes tests/data/onnx/<case>.onnx, <case>.in.<i>.npy, <case>.out.<i>.npy, manifest.json and the
negative cases in tests/data/onnx/bad/. See README.md next to this file.

Two kinds of case:
  * torch cases: a torch.nn.Module exported with torch.onnx.export. Expected outputs come from
    the same module run in float64 (weights and inputs are the float32 values, widened). Every
    export is also run with ONNX Runtime and must agree with the float64 result to within
    1e-4 * max(1, |expected|) per element, or the generator fails (guards against bad exports).
  * hand-built cases: graphs torch cannot emit (tf2onnx / old-opset style), written with
    onnx.helper. Expected outputs come from ONNX Runtime; each also has an independent float64
    reference (numpy/torch) that ORT must match with the same tolerance.

Usage: /usr/bin/python3 tools/onnx_fixtures/make_fixtures.py [--only REGEX] [--out DIR]
  --only REGEX  build and check only matching cases into a scratch directory (nothing in the
                repository is written, no manifest); for debugging a case.
  --out DIR     output directory (default: <repo>/tests/data/onnx).

Needs Debian's python3-torch, python3-torchvision, python3-onnx, python3-numpy (use
/usr/bin/python3) and Node 20 with onnxruntime-node (npm ci --ignore-scripts in this folder; the
script runs that itself when node_modules is missing).
"""

import argparse
import copy
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "onnx")
GENERATOR = "tools/onnx_fixtures/make_fixtures.py"
RTOL = 1e-4  # |ort - expected| <= RTOL * max(1, |expected|), elementwise

EVAL = torch.onnx.TrainingMode.EVAL
PRESERVE = torch.onnx.TrainingMode.PRESERVE

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ---------------------------------------------------------------------------------------------
# helpers


def seed_of(name):
    return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF


class Rng:
    """Per-case random source: numpy for data, torch's global RNG (seeded here) for module init."""

    def __init__(self, name):
        s = seed_of(name)
        torch.manual_seed(s)
        self.g = np.random.default_rng(s)

    def randn(self, *shape, scale=1.0):
        return (self.g.standard_normal(shape) * scale).astype(np.float32)

    def uniform(self, lo, hi, *shape):
        return self.g.uniform(lo, hi, shape).astype(np.float32)

    def tensor(self, *shape, scale=1.0):
        return torch.from_numpy(self.randn(*shape, scale=scale))


def randomize_norms(module, rng):
    """Non-trivial running stats and affine parameters for every BatchNorm / LayerNorm."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.from_numpy(rng.randn(c, scale=0.5)))
                m.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 2.0, c)))
                if m.affine:
                    m.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, c)))
                    m.bias.copy_(torch.from_numpy(rng.randn(c, scale=0.2)))
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                shape = tuple(m.normalized_shape)
                m.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, *shape)))
                m.bias.copy_(torch.from_numpy(rng.randn(*shape, scale=0.2)))
    return module


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def flatten_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res.extend(flatten_outputs(o))
    return res


def dims_of(value_info):
    dims = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def op_types(model):
    seen = []
    for n in model.graph.node:
        t = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"
        if t not in seen:
            seen.append(t)
    return seen


def ir_for(opset):
    return helper.find_min_ir_version_for([helper.make_opsetid("", opset)])


class G:
    """Tiny onnx.helper graph builder for the hand-built cases."""

    def __init__(self, name, opset):
        self.name, self.opset = name, opset
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def input(self, name, shape, elem=TensorProto.FLOAT):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def output(self, name, shape, elem=TensorProto.FLOAT):
        self.outputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, out=None, n_out=1, **attrs):
        self.count += 1
        if out is None:
            outs = [f"{op.lower()}_{self.count}" + (f"_{k}" if n_out > 1 else "") for k in range(n_out)]
        else:
            outs = [out] if isinstance(out, str) else list(out)
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=f"{op}_{self.count}", **attrs))
        return outs[0] if len(outs) == 1 else outs

    def model(self):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, initializer=self.inits)
        m = helper.make_model(graph, producer_name="nnd make_fixtures.py",
                              opset_imports=[helper.make_opsetid("", self.opset)],
                              ir_version=ir_for(self.opset))
        onnx.checker.check_model(m, full_check=True)
        return m


def torch_case(module, inputs, opset, dyn, desc, fold=True, training=EVAL, layout="NCHW",
               input_names=None, output_names=None, dynamic_axes=None, later=False):
    return dict(kind="torch", module=module, inputs=inputs, opset=opset, dyn=dyn, desc=desc,
                fold=fold, training=training, layout=layout, input_names=input_names,
                output_names=output_names, dynamic_axes=dynamic_axes, later=later)


def hand_case(g, inputs, desc, ref, layout="NCHW", dyn=False):
    return dict(kind="hand", model=g.model(), inputs=inputs, desc=desc, ref=ref, layout=layout,
                dyn=dyn, opset=g.opset, later=False)


class Seq(nn.Module):
    """nn.Sequential-like wrapper whose forward is a lambda (keeps cases short)."""

    def __init__(self, fn, **mods):
        super().__init__()
        self.fn = fn
        for k, v in mods.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def act(name, module, opset, dyn, desc, shape=(4, 6, 6), scale=3.0):
    rng = Rng(name)
    n = 2 if dyn else 1
    x = rng.randn(n, *shape, scale=scale)
    return torch_case(module, [x], opset, dyn, desc)


# ---------------------------------------------------------------------------------------------
# torch cases: convolutions


@case
def conv_bn_relu():
    rng = Rng("conv_bn_relu")
    m = randomize_norms(nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()), rng)
    return torch_case(m, [rng.randn(2, 3, 16, 16)], 13, True, training=PRESERVE,
                      desc="Conv2d k3 p1 + BatchNorm2d + ReLU; exported with TrainingMode.PRESERVE on an "
                           "eval-mode module so BatchNormalization stays a separate node")


@case
def conv_bn_relu_fused():
    rng = Rng("conv_bn_relu_fused")
    m = randomize_norms(nn.Sequential(nn.Conv2d(3, 6, 3, bias=False), nn.BatchNorm2d(6), nn.ReLU()), rng)
    return torch_case(m, [rng.randn(1, 3, 12, 12)], 11, False,
                      desc="Conv2d k3 p0 without bias + BatchNorm2d + ReLU, TrainingMode.EVAL: the exporter "
                           "folds BN into the Conv weights and adds a bias")


@case
def conv_depthwise():
    rng = Rng("conv_depthwise")
    m = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU())
    return torch_case(m, [rng.randn(2, 8, 12, 12)], 13, True, desc="depthwise Conv2d groups=C=8, multiplier 1")


@case
def conv_depthwise_mult2():
    rng = Rng("conv_depthwise_mult2")
    m = nn.Conv2d(6, 12, 3, padding=1, groups=6)
    return torch_case(m, [rng.randn(1, 6, 10, 10)], 15, False,
                      desc="depthwise Conv2d groups=C=6, multiplier 2 (12 output channels)")


@case
def conv_grouped():
    rng = Rng("conv_grouped")
    m = nn.Conv2d(8, 12, 3, padding=1, groups=2)
    return torch_case(m, [rng.randn(2, 8, 10, 10)], 17, True, desc="grouped Conv2d groups=2 (8 -> 12)")


@case
def conv_dilation2():
    rng = Rng("conv_dilation2")
    m = nn.Sequential(nn.Conv2d(4, 6, 3, dilation=2, padding=2), nn.ReLU(),
                      nn.Conv2d(6, 5, 3, dilation=(2, 1), padding=(0, 1)))
    return torch_case(m, [rng.randn(2, 4, 16, 16)], 11, True,
                      desc="Conv2d dilation 2 padding 2, then dilation (2,1) padding (0,1)")


@case
def conv_stride2():
    rng = Rng("conv_stride2")
    m = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                      nn.Conv2d(8, 6, 3, stride=2, padding=0))
    return torch_case(m, [rng.randn(1, 3, 15, 15)], 13, False,
                      desc="Conv2d stride 2 padding 1 on odd 15x15 (-> 8x8), then stride 2 padding 0 on even "
                           "8x8 (-> 3x3, last row/column unused)")


@case
def conv_stride_dilation():
    rng = Rng("conv_stride_dilation")
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, dilation=2, padding=2), nn.ReLU(),          # few channels (planar on SSE4.1)
        nn.Conv2d(8, 20, (3, 2), stride=(2, 3), dilation=(3, 2), padding=(1, 2)),  # direct, rectangular
        nn.Conv2d(20, 20, 3, stride=2, dilation=2, padding=1, groups=20),        # depthwise
        nn.Conv2d(20, 12, 2, stride=(1, 2), dilation=(2, 3), groups=2),          # grouped, no padding
        nn.ConvTranspose2d(12, 6, 3, stride=2, dilation=2, padding=1, output_padding=1))
    return torch_case(m, [rng.randn(2, 3, 49, 79)], 13, True,
                      desc="strides and dilations above 1 together (PyTorch allows it, Keras does not): Conv2d "
                           "s2 d2 p2 on 3 channels, s(2,3) d(3,2) k(3,2), depthwise s2 d2, grouped s(1,2) d(2,3), "
                           "ConvTranspose2d s2 d2 output_padding 1")


@case
def conv1d_stride_dilation():
    rng = Rng("conv1d_stride_dilation")
    m = nn.Sequential(nn.Conv1d(5, 16, 3, stride=2, dilation=3, padding=3), nn.ReLU(),
                      nn.Conv1d(16, 16, 4, stride=3, dilation=2, groups=16),
                      nn.Conv1d(16, 7, 2, stride=2, dilation=4, padding=1))
    return torch_case(m, [rng.randn(1, 5, 97)], 17, False, layout="NCW",
                      desc="Conv1d with strides and dilations above 1 together: s2 d3 p3, depthwise k4 s3 d2, "
                           "k2 s2 d4 p1")


@case
def conv_pad0_rect():
    rng = Rng("conv_pad0_rect")
    m = nn.Sequential(nn.Conv2d(3, 5, (3, 5), padding=0), nn.ReLU(),
                      nn.Conv2d(5, 4, (1, 3), stride=(1, 2), padding=(0, 1)))
    return torch_case(m, [rng.randn(2, 3, 12, 14)], 15, True,
                      desc="rectangular kernels: Conv2d k(3,5) p0, then k(1,3) stride (1,2) padding (0,1)")


@case
def conv_asym_pad():
    rng = Rng("conv_asym_pad")
    m = nn.Sequential(nn.ZeroPad2d((1, 2, 0, 1)), nn.Conv2d(3, 4, 3))
    return torch_case(m, [rng.randn(1, 3, 10, 11)], 13, False,
                      desc="asymmetric padding via nn.ZeroPad2d((left 1, right 2, top 0, bottom 1)) before a "
                           "k3 p0 Conv2d; opset 13 exports the pads through a ConstantOfShape/Concat/Reshape/"
                           "Slice/Transpose/Cast chain into Pad (constant-foldable)")


@case
def conv1d_whistle():
    rng = Rng("conv1d_whistle")
    feat = nn.Sequential(
        nn.Conv1d(1, 8, 9, stride=2, padding=4), nn.BatchNorm1d(8, eps=1e-3), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(8, 16, 5, padding=2), nn.BatchNorm1d(16, eps=1e-3), nn.ReLU(), nn.MaxPool1d(2))
    head = nn.Linear(16, 3)
    m = randomize_norms(Seq(lambda s, x: s.head(s.feat(x).mean(dim=2)), feat=feat, head=head), rng)
    return torch_case(m, [rng.randn(2, 1, 256)], 13, True, training=PRESERVE, layout="NCW",
                      desc="1-D whistle-detector-like stack: [Conv1d + BatchNorm1d(eps 1e-3) + ReLU + "
                           "MaxPool1d(2)] x2, mean over time (ReduceMean), Linear(16,3) (Gemm); PRESERVE "
                           "export keeps BatchNormalization on 3-D tensors")


@case
def conv_transpose2d():
    rng = Rng("conv_transpose2d")
    m = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
    return torch_case(m, [rng.randn(2, 8, 8, 8)], 13, True,
                      desc="ConvTranspose2d k3 stride 2 padding 1 output_padding 1 (8x8 -> 16x16)")


@case
def conv_transpose2d_k4_groups():
    rng = Rng("conv_transpose2d_k4_groups")
    m = nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1, groups=2, bias=False)
    return torch_case(m, [rng.randn(1, 4, 6, 6)], 17, False,
                      desc="ConvTranspose2d k4 stride 2 padding 1 groups 2 no bias (6x6 -> 12x12; weight "
                           "layout [Cin, Cout/groups, kH, kW])")


# ---------------------------------------------------------------------------------------------
# torch cases: dense


@case
def mlp_walk_policy():
    rng = Rng("mlp_walk_policy")
    m = nn.Sequential(nn.Linear(48, 64), nn.ELU(), nn.Linear(64, 64), nn.ELU(), nn.Linear(64, 12))
    return torch_case(m, [rng.randn(2, 48)], 11, True, layout="NC",
                      desc="walking-policy MLP: Linear(48,64) ELU Linear(64,64) ELU Linear(64,12) (Gemm transB=1)")


@case
def matmul_3d_const():
    rng = Rng("matmul_3d_const")
    w2 = nn.Parameter(rng.tensor(8, 4, scale=0.5))
    m = Seq(lambda s, x: torch.matmul(s.lin(x), s.w2), lin=nn.Linear(16, 8), w2=w2)
    return torch_case(m, [rng.randn(2, 5, 16)], 15, True, layout="NTC",
                      desc="nn.Linear on a 3-D input (MatMul with the transposed weight + Add) followed by "
                           "torch.matmul with a constant [8,4] weight")


# ---------------------------------------------------------------------------------------------
# torch cases: normalization


@case
def batchnorm2d():
    rng = Rng("batchnorm2d")
    m = randomize_norms(nn.BatchNorm2d(6), rng)
    return torch_case(m, [rng.randn(2, 6, 8, 8, scale=2.0)], 13, True,
                      desc="BatchNorm2d (eval, random running stats) directly on the input: not fused, "
                           "stays BatchNormalization")


@case
def layernorm_op17():
    rng = Rng("layernorm_op17")
    m = randomize_norms(nn.LayerNorm(16), rng)
    return torch_case(m, [rng.randn(2, 5, 16, scale=2.0)], 17, True, layout="NTC",
                      desc="LayerNorm(16) on [N,5,16] -> LayerNormalization (opset 17)")


@case
def layernorm_op13():
    rng = Rng("layernorm_op13")
    m = randomize_norms(nn.LayerNorm((4, 6)), rng)
    return torch_case(m, [rng.randn(2, 3, 4, 6, scale=2.0)], 13, True,
                      desc="LayerNorm((4,6)) over the last two dims, opset 13: decomposed "
                           "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add pattern")


# ---------------------------------------------------------------------------------------------
# torch cases: activations (elementwise on [N,4,6,6], values ~N(0,3))


@case
def act_relu():
    return act("act_relu", nn.ReLU(), 11, False, "ReLU")


@case
def act_leaky_relu():
    return act("act_leaky_relu", nn.LeakyReLU(0.1), 13, True, "LeakyReLU(0.1)")


@case
def act_prelu():
    rng = Rng("act_prelu")
    m = nn.PReLU(4)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(rng.uniform(0.05, 0.5, 4)))
    return torch_case(m, [rng.randn(2, 4, 6, 6, scale=3.0)], 15, True,
                      desc="PReLU per channel (4 random slopes; slope tensor [4,1,1])")


@case
def act_elu():
    return act("act_elu", nn.ELU(alpha=0.5), 17, False, "ELU(alpha 0.5)")


@case
def act_selu():
    return act("act_selu", nn.SELU(), 11, True, "SELU")


@case
def act_relu6():
    return act("act_relu6", nn.ReLU6(), 13, False, "ReLU6 -> Clip with min/max inputs (opset 11+ form)")


@case
def act_hardtanh():
    return act("act_hardtanh", nn.Hardtanh(-0.5, 2.0), 15, True, "Hardtanh(-0.5, 2.0) -> Clip")


@case
def act_sigmoid():
    return act("act_sigmoid", nn.Sigmoid(), 17, True, "Sigmoid")


@case
def act_hardsigmoid():
    return act("act_hardsigmoid", nn.Hardsigmoid(), 11, False, "Hardsigmoid -> HardSigmoid(alpha 1/6, beta 0.5)")


@case
def act_hardswish_op13():
    return act("act_hardswish_op13", nn.Hardswish(), 13, True,
               "Hardswish at opset 13 -> HardSigmoid(alpha 1/6) + Mul")


@case
def act_hardswish_op17():
    return act("act_hardswish_op17", nn.Hardswish(), 17, False, "Hardswish at opset 17 -> HardSwish")


@case
def act_tanh():
    return act("act_tanh", nn.Tanh(), 13, True, "Tanh")


@case
def act_softplus():
    return act("act_softplus", nn.Softplus(), 15, False, "Softplus (beta 1)")


@case
def act_softsign():
    return act("act_softsign", nn.Softsign(), 11, True,
               "Softsign: torch 1.13 exports x / (1 + |x|) as Abs/Add/Div, not the Softsign op")


@case
def act_gelu():
    return act("act_gelu", nn.GELU(), 13, False, "GELU exact: Div(sqrt 2) Erf Add Mul Mul pattern")


@case
def act_gelu_tanh():
    return act("act_gelu_tanh", nn.GELU(approximate="tanh"), 17, True,
               "GELU approximate='tanh': Mul/Add/Tanh pattern")


@case
def act_silu():
    return act("act_silu", nn.SiLU(), 15, True, "SiLU -> Sigmoid + Mul")


@case
def softmax_dim1_op11():
    return act("softmax_dim1_op11", nn.Softmax(dim=1), 11, True,
               "Softmax over channels of [N,5,3,4] at opset 11: exported as Transpose + Softmax(axis -1) + "
               "Transpose", shape=(5, 3, 4), scale=2.0)


@case
def softmax_dim1_op13():
    return act("softmax_dim1_op13", nn.Softmax(dim=1), 13, False,
               "Softmax over channels of [N,5,3,4] at opset 13: Softmax(axis 1)", shape=(5, 3, 4), scale=2.0)


@case
def softmax_last_op17():
    return act("softmax_last_op17", nn.Softmax(dim=-1), 17, True, "Softmax over the last dim of [N,3,10]",
               shape=(3, 10), scale=2.0)


@case
def logsoftmax_dim1_op13():
    return act("logsoftmax_dim1_op13", nn.LogSoftmax(dim=1), 13, True, "LogSoftmax over channels of [N,5,3,4]",
               shape=(5, 3, 4), scale=2.0)


@case
def logsoftmax_last_op11():
    return act("logsoftmax_last_op11", nn.LogSoftmax(dim=-1), 11, False,
               "LogSoftmax over the last dim of [N,3,10] at opset 11", shape=(3, 10), scale=2.0)


# ---------------------------------------------------------------------------------------------
# torch cases: pooling and reductions


@case
def maxpool_k3s2p1():
    rng = Rng("maxpool_k3s2p1")
    return torch_case(nn.MaxPool2d(3, 2, 1), [rng.randn(2, 4, 12, 12)], 13, True,
                      desc="MaxPool2d k3 s2 p1 (padding must act as -inf: inputs are mostly negative in places)")


@case
def maxpool_ceil():
    rng = Rng("maxpool_ceil")
    return torch_case(nn.MaxPool2d(3, 2, ceil_mode=True), [rng.randn(1, 4, 10, 10)], 11, False,
                      desc="MaxPool2d k3 s2 ceil_mode=True on 10x10 -> 5x5 (floor would give 4x4)")


@case
def avgpool_k2s2():
    rng = Rng("avgpool_k2s2")
    return torch_case(nn.AvgPool2d(2, 2), [rng.randn(2, 4, 11, 11)], 17, True,
                      desc="AvgPool2d k2 s2 on odd 11x11 -> 5x5")


@case
def avgpool_k3s2p1_incpad():
    rng = Rng("avgpool_k3s2p1_incpad")
    return torch_case(nn.AvgPool2d(3, 2, 1, count_include_pad=True), [rng.randn(1, 4, 11, 11)], 13, False,
                      desc="AvgPool2d k3 s2 p1 count_include_pad=True (torch exports an explicit Pad + "
                           "AveragePool, or AveragePool count_include_pad=1)")


@case
def avgpool_k3s2p1_excpad():
    rng = Rng("avgpool_k3s2p1_excpad")
    return torch_case(nn.AvgPool2d(3, 2, 1, count_include_pad=False), [rng.randn(2, 4, 11, 11)], 15, True,
                      desc="AvgPool2d k3 s2 p1 count_include_pad=False")


@case
def global_avgpool():
    rng = Rng("global_avgpool")
    m = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.AdaptiveAvgPool2d(1))
    return torch_case(m, [rng.randn(2, 3, 9, 7)], 13, True,
                      desc="Conv2d + AdaptiveAvgPool2d(1) -> GlobalAveragePool (output [N,6,1,1])")


@case
def global_maxpool():
    rng = Rng("global_maxpool")
    return torch_case(nn.AdaptiveMaxPool2d(1), [rng.randn(1, 6, 9, 7)], 17, False,
                      desc="AdaptiveMaxPool2d(1) (torch 1.13 exports MaxPool with the full 9x7 kernel)")


@case
def reduce_mean():
    rng = Rng("reduce_mean")
    m = Seq(lambda s, x: (x.mean(dim=(2, 3)), x.mean(dim=(2, 3), keepdim=True)))
    return torch_case(m, [rng.randn(2, 5, 6, 7)], 11, True, output_names=["mean", "mean_keep"],
                      desc="x.mean((2,3)) keepdim False -> [N,5] and keepdim True -> [N,5,1,1] (ReduceMean)")


@case
def reduce_amax_sum():
    rng = Rng("reduce_amax_sum")
    m = Seq(lambda s, x: (torch.amax(x, dim=(2, 3)), x.sum(dim=1, keepdim=True)))
    return torch_case(m, [rng.randn(2, 5, 6, 7)], 13, True, output_names=["amax", "sum"],
                      desc="amax over (2,3) keepdim False (ReduceMax, axes attribute) and sum over dim 1 "
                           "keepdim True (ReduceSum-13, axes as an input)")


@case
def reduce_sum_op11():
    rng = Rng("reduce_sum_op11")
    m = Seq(lambda s, x: x.sum(dim=(1, 3)))
    return torch_case(m, [rng.randn(1, 5, 6, 7)], 11, False,
                      desc="sum over dims (1,3) keepdim False at opset 11 (ReduceSum, axes attribute)")


@case
def argmax_classifier():
    rng = Rng("argmax_classifier")
    m = Seq(lambda s, x: (lambda y: (y, y.argmax(1)))(s.fc(torch.flatten(s.pool(F.relu(s.conv(x))), 1))),
            conv=nn.Conv2d(3, 6, 3), pool=nn.AdaptiveAvgPool2d(1), fc=nn.Linear(6, 5))
    return torch_case(m, [rng.randn(3, 3, 8, 8)], 13, True, input_names=["x"], output_names=["logits", "label"],
                      dynamic_axes={"x": {0: "N"}, "logits": {0: "N"}, "label": {0: "N"}},
                      desc="a classifier that answers its class too: logits [N,5] and logits.argmax(1) -> int64 "
                           "[N] (ArgMax keepdims 0), free batch")


@case
def argmax_segmentation():
    rng = Rng("argmax_segmentation")
    m = Seq(lambda s, x: (lambda y: (y.argmax(1, keepdim=True), y.argmin(3)))(s.conv(x)),
            conv=nn.Conv2d(3, 4, 3, padding=1))
    return torch_case(m, [rng.randn(2, 3, 6, 7, scale=2.0)], 13, True, input_names=["x"],
                      output_names=["classes", "min_col"],
                      dynamic_axes={"x": {0: "N"}, "classes": {0: "N"}, "min_col": {0: "N"}},
                      desc="per-pixel class of an NCHW map: argmax over channels keepdim True -> int64 "
                           "[N,1,H,W], and argmin over W keepdim False -> [N,4,H] (ArgMin), free batch")


# ---------------------------------------------------------------------------------------------
# torch cases: elementwise, shape and data movement


@case
def residual_add():
    rng = Rng("residual_add")
    m = Seq(lambda s, x: F.relu(s.c2(F.relu(s.c1(x))) + x),
            c1=nn.Conv2d(6, 6, 3, padding=1), c2=nn.Conv2d(6, 6, 3, padding=1))
    return torch_case(m, [rng.randn(2, 6, 8, 8)], 15, True, desc="residual block: relu(conv(relu(conv(x))) + x)")


@case
def mul_two_inputs():
    rng = Rng("mul_two_inputs")
    m = Seq(lambda s, a, b, g: (a * b, a * g))
    ins = [rng.randn(2, 4, 6, 6), rng.randn(2, 4, 6, 6), rng.randn(2, 4, 1, 1)]
    return torch_case(m, ins, 13, True, input_names=["a", "b", "gate"], output_names=["ab", "agate"],
                      desc="three graph inputs: a*b (same shape) and a*gate with gate [N,4,1,1] (broadcast)")


@case
def bias_broadcast_add():
    rng = Rng("bias_broadcast_add")
    bias = nn.Parameter(rng.tensor(5))
    m = Seq(lambda s, x: x + s.bias.view(1, 5, 1, 1), bias=bias)
    return torch_case(m, [rng.randn(1, 5, 6, 6)], 11, False, fold=False,
                      desc="x + self.bias.view(1,C,1,1), exported without constant folding: Reshape of the "
                           "[5] parameter by a Constant shape, then Add")


@case
def concat_channels():
    rng = Rng("concat_channels")
    m = Seq(lambda s, x: torch.cat([s.a(x), s.b(x), x], dim=1),
            a=nn.Conv2d(3, 4, 3, padding=1), b=nn.Conv2d(3, 2, 1))
    return torch_case(m, [rng.randn(2, 3, 8, 8)], 17, True,
                      desc="torch.cat of two conv branches and the input on dim 1")


@case
def split_op11():
    rng = Rng("split_op11")
    m = Seq(lambda s, x: torch.split(x, [2, 6], dim=1))
    return torch_case(m, [rng.randn(2, 8, 5, 5)], 11, True, output_names=["first", "second"],
                      desc="torch.split(x, [2,6], dim=1) at opset 11 (Split with a split attribute)")


@case
def split_op13():
    rng = Rng("split_op13")
    m = Seq(lambda s, x: torch.split(x, [3, 1, 4], dim=1))
    return torch_case(m, [rng.randn(1, 8, 5, 5)], 13, False, output_names=["s0", "s1", "s2"],
                      desc="torch.split(x, [3,1,4], dim=1) at opset 13 (Split with split as an input)")


@case
def chunk_channels():
    rng = Rng("chunk_channels")
    m = Seq(lambda s, x: x.chunk(2, dim=1))
    return torch_case(m, [rng.randn(2, 8, 5, 5)], 13, True, output_names=["lo", "hi"],
                      desc="x.chunk(2, dim=1): torch 1.13 exports Shape/Gather/Add/Div/Mul/Slice chains "
                           "(dynamic batch)")


@case
def slice_steps():
    rng = Rng("slice_steps")
    m = Seq(lambda s, x: x[:, :, 1:-1, ::2])
    return torch_case(m, [rng.randn(2, 3, 8, 9)], 13, True, desc="x[:, :, 1:-1, ::2] (Slice with steps, negative end)")


@case
def flip_and_bgr():
    rng = Rng("flip_and_bgr")
    m = Seq(lambda s, x: (torch.flip(s.c(x), [3]), x[:, [2, 1, 0]] * 2.0, torch.flip(x, [1, 2])[:, :, 1::2]),
            c=nn.Conv2d(3, 4, 3, padding=1))
    return torch_case(m, [rng.randn(2, 3, 6, 7)], 13, True, output_names=["flip", "rgb", "back2"],
                      desc="torch.flip of a conv output along W (Slice step -1), x[:, [2, 1, 0]] (Gather with an "
                           "index list: BGR to RGB) and a flip of channels and rows, then every other row")


@case
def cbam_spatial_attention():
    rng = Rng("cbam_spatial_attention")

    def f(s, x):
        y = F.relu(s.c1(x))
        a = torch.cat([y.mean(dim=1, keepdim=True), y.amax(dim=1, keepdim=True)], dim=1)
        return y * torch.sigmoid(s.c2(a)), y.amin(dim=(1, 3)), y.sum(dim=(2, 3))

    m = Seq(f, c1=nn.Conv2d(3, 8, 3, padding=1), c2=nn.Conv2d(2, 1, 7, padding=3))
    return torch_case(m, [rng.randn(2, 3, 9, 10)], 13, True, output_names=["att", "amin", "sum"],
                      desc="CBAM spatial attention: mean and max over the channels (keepdim), concat, 7x7 conv, "
                           "sigmoid, scaling; amin over (C, W) and sum over (H, W)")


@case
def l2_normalize_powers():
    rng = Rng("l2_normalize_powers")

    def f(s, x):
        y = s.c(x)
        return (F.normalize(y, dim=1), torch.norm(y, p=1, dim=(2, 3)), y.pow(2).sum(dim=1),
                torch.sqrt(y.abs() + 0.5) * y.pow(3))

    m = Seq(f, c=nn.Conv2d(3, 5, 3, padding=1))
    return torch_case(m, [rng.randn(2, 3, 6, 7)], 13, True, output_names=["unit", "l1", "sumsq", "roots"],
                      desc="F.normalize over the channels (ReduceL2, Clip, Expand, Div), torch.norm p=1 over (H, W) "
                           "(ReduceL1), Pow 2 then ReduceSum, Sqrt and Abs of computed tensors, Pow 3")


@case
def pad_constant():
    rng = Rng("pad_constant")
    m = Seq(lambda s, x: F.pad(x, (1, 2, 0, 3), mode="constant", value=0.5))
    return torch_case(m, [rng.randn(2, 3, 6, 7)], 11, True,
                      desc="F.pad constant 0.5, (left 1, right 2, top 0, bottom 3)")


@case
def pad_reflect():
    rng = Rng("pad_reflect")
    m = Seq(lambda s, x: F.pad(x, (2, 1, 1, 2), mode="reflect"))
    return torch_case(m, [rng.randn(1, 3, 6, 7)], 13, False, desc="F.pad reflect (left 2, right 1, top 1, bottom 2)")


@case
def pad_replicate():
    rng = Rng("pad_replicate")
    m = Seq(lambda s, x: F.pad(x, (1, 1, 2, 0), mode="replicate"))
    return torch_case(m, [rng.randn(2, 3, 6, 7)], 17, True,
                      desc="F.pad replicate (left 1, right 1, top 2, bottom 0) -> Pad mode edge")


@case
def interp_nearest2():
    rng = Rng("interp_nearest2")
    m = Seq(lambda s, x: F.interpolate(x, scale_factor=2, mode="nearest"))
    return torch_case(m, [rng.randn(2, 3, 5, 6)], 11, True,
                      desc="F.interpolate scale 2 nearest -> Resize (asymmetric, floor)")


@case
def interp_bilinear():
    rng = Rng("interp_bilinear")
    m = Seq(lambda s, x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))
    return torch_case(m, [rng.randn(1, 3, 5, 6)], 13, False,
                      desc="F.interpolate scale 2 bilinear align_corners=False -> Resize linear pytorch_half_pixel")


@case
def interp_bilinear_ac():
    rng = Rng("interp_bilinear_ac")
    m = Seq(lambda s, x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True))
    return torch_case(m, [rng.randn(2, 3, 5, 6)], 17, True,
                      desc="F.interpolate scale 2 bilinear align_corners=True -> Resize linear align_corners")


@case
def upsample_size():
    rng = Rng("upsample_size")
    m = nn.Upsample(size=(10, 12), mode="nearest")
    return torch_case(m, [rng.randn(2, 3, 5, 4)], 13, True,
                      desc="nn.Upsample(size=(10,12)) nearest on 5x4 (scale 2 x 3): Resize with sizes built by "
                           "Shape/Slice/Concat from the dynamic batch")


@case
def flatten_linear():
    rng = Rng("flatten_linear")
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(144, 5))
    return torch_case(m, [rng.randn(2, 3, 6, 6)], 13, True, desc="Conv + ReLU + nn.Flatten (Flatten) + Linear (Gemm)")


@case
def view_flatten_dyn():
    rng = Rng("view_flatten_dyn")
    m = Seq(lambda s, x: s.fc(F.relu(s.conv(x)).view(x.size(0), -1)),
            conv=nn.Conv2d(3, 4, 3), fc=nn.Linear(4 * 4 * 4, 6))
    return torch_case(m, [rng.randn(2, 3, 6, 6)], 11, True, fold=False,
                      desc="x.view(x.size(0), -1) with a dynamic batch, no constant folding: "
                           "Shape/Gather/Unsqueeze/Concat -> Reshape (the batch comes from the input at run time)")


@case
def view_flatten_static():
    rng = Rng("view_flatten_static")
    m = Seq(lambda s, x: s.fc(F.relu(s.conv(x)).view(x.size(0), -1)),
            conv=nn.Conv2d(3, 4, 3), fc=nn.Linear(4 * 4 * 4, 6))
    return torch_case(m, [rng.randn(1, 3, 6, 6)], 13, False, fold=False,
                      desc="x.view(x.size(0), -1) with a fixed batch, no constant folding: Constant/Unsqueeze/"
                           "Concat chain into Reshape (foldable at load time); also Gemm with unfolded weights")


@case
def permute_linear():
    rng = Rng("permute_linear")
    m = Seq(lambda s, x: s.fc(x.permute(0, 2, 3, 1)), fc=nn.Linear(4, 5))
    return torch_case(m, [rng.randn(2, 4, 3, 6)], 15, True,
                      desc="permute(0,2,3,1) (Transpose) then Linear on the last dim (MatMul + Add)")


@case
def squeeze_unsqueeze():
    rng = Rng("squeeze_unsqueeze")
    m = Seq(lambda s, x: F.relu(x.squeeze(1).unsqueeze(2)))
    return torch_case(m, [rng.randn(2, 1, 6, 5)], 11, True,
                      desc="squeeze(1) then unsqueeze(2) at opset 11 (axes attributes)")


@case
def expand_broadcast():
    rng = Rng("expand_broadcast")
    m = Seq(lambda s, g: g.expand(-1, -1, 5, 6))
    return torch_case(m, [rng.randn(2, 4, 1, 1)], 13, True, fold=False,
                      desc="g.expand(-1, -1, 5, 6) on [N,4,1,1], no constant folding (Expand with a shape "
                           "computed from Shape/Gather/Concat...)")


@case
def identity_dropout():
    rng = Rng("identity_dropout")
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Dropout(0.3), nn.Identity(), nn.ReLU())
    return torch_case(m, [rng.randn(1, 3, 7, 7)], 17, False,
                      desc="Conv + Dropout(0.3) + Identity + ReLU in eval mode: the exporter drops Dropout and "
                           "Identity (see identity_dropout_nodes for explicit nodes)")


# ---------------------------------------------------------------------------------------------
# torch cases: whole networks


@case
def mobilenet_v3_small():
    rng = Rng("mobilenet_v3_small")
    m = randomize_norms(torchvision.models.mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.25), rng)
    with torch.no_grad():
        for lin in m.modules():
            if isinstance(lin, nn.Linear):  # torchvision's N(0, 0.01) init would make every logit ~1e-3
                nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
                lin.bias.copy_(torch.from_numpy(rng.randn(lin.out_features, scale=0.1)))
    return torch_case(m, [rng.randn(1, 3, 64, 64)], 13, False,
                      desc="torchvision mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.25) at "
                           "64x64, random weights and BN stats (classifier Linear layers re-initialized "
                           "Kaiming-normal so the logits are O(1)); exporter's default tensor names")


def narrow_resnet18(width, num_classes=10):
    """torchvision's resnet18 topology (BasicBlock x [2,2,2,2]) with widths w, 2w, 4w, 8w instead of 64..512."""
    from torchvision.models.resnet import BasicBlock, conv1x1

    layers = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    inplanes = width
    for i, planes in enumerate([width, width * 2, width * 4, width * 8]):
        stride = 1 if i == 0 else 2
        down = None
        if stride != 1 or inplanes != planes:
            down = nn.Sequential(conv1x1(inplanes, planes, stride), nn.BatchNorm2d(planes))
        layers.append(BasicBlock(inplanes, planes, stride, down))
        layers.append(BasicBlock(planes, planes))
        inplanes = planes
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(inplanes, num_classes)]
    return nn.Sequential(*layers)


@case
def resnet18_narrow():
    rng = Rng("resnet18_narrow")
    m = randomize_norms(narrow_resnet18(6), rng)
    return torch_case(m, [rng.randn(2, 3, 32, 32)], 15, True,
                      desc="resnet18 topology built from torchvision BasicBlock (conv7x7 s2, maxpool, 4 stages "
                           "x 2 blocks with 1x1 downsample, avgpool, fc) at widths 6/12/24/48 instead of "
                           "64..512 (the real resnet18 is 45 MB), 32x32 input")


# ---------------------------------------------------------------------------------------------
# torch cases: recurrent


@case
def lstm_fixed_batch_time_major():
    # A robot-style sequence model exported with the batch fixed to 1 that treats the time axis as
    # torch's sequence axis by reshaping across the batch: [1, T, F] -> [T, 1, F], a time-major
    # LSTM, then [T, 1, H] -> [1, T, H] and a head per step, plus the last step's features.
    rng = Rng("lstm_fixed_batch_time_major")
    T, F_, H = 6, 5, 10

    def fwd(m, x):
        seq, _ = m.lstm(x.reshape(T, 1, F_))
        seq = seq.reshape(1, T, H)
        return m.head(seq), seq[:, -1, :].unsqueeze(1) * 2.0

    m = Seq(fwd, lstm=nn.LSTM(F_, H), head=nn.Linear(H, 3))
    return torch_case(m, [rng.randn(1, T, F_)], 14, False, layout="NTC",
                      desc="fixed batch 1: x.reshape(T, 1, F) (data across axis 0), time-major nn.LSTM(5, 10), "
                           "reshape(1, T, H) back, Linear(10, 3) per step; and the last step unsqueezed")


@case
def seq_first_linear():
    # nn.MultiheadAttention's in-projection as PyTorch exports it: the batch-first input transposed
    # to [T, N, E] (batch on axis 1), Linear layers there (MatMul + Add), an element-wise product
    # with a slice of the input, and back to batch-first.
    rng = Rng("seq_first_linear")

    def fwd(m, x):
        t = x.transpose(0, 1)
        return m.k(torch.tanh(m.q(t)) * t[..., :4]).transpose(0, 1)

    m = Seq(fwd, q=nn.Linear(6, 4), k=nn.Linear(4, 2))
    return torch_case(m, [rng.randn(2, 5, 6)], 13, True, layout="NTC",
                      desc="x.transpose(0, 1) to [T, N, E], Linear(6, 4), tanh, times x[..., :4], Linear(4, 2) "
                           "over [T, N, ...], transposed back")


@case
def gru_seq_first_linear_head():
    # A seq-first recurrent layer (PyTorch's default layout) with a Linear head per step on its
    # [T, N, H] output, and an LSTM whose Linear output is added to its input (a residual).
    rng = Rng("gru_seq_first_linear_head")

    def fwd(m, x):
        t = x.transpose(0, 1)
        g = m.head(torch.relu(m.gru(t)[0])) * 0.5
        h = m.lstm(t)[0]
        return g.transpose(0, 1), (m.proj(h) + h).transpose(0, 1)

    m = Seq(fwd, gru=nn.GRU(6, 8), head=nn.Linear(8, 3), lstm=nn.LSTM(6, 6), proj=nn.Linear(6, 6))
    return torch_case(m, [rng.randn(2, 5, 6)], 13, True, layout="NTC",
                      desc="x.transpose(0, 1), nn.GRU(6, 8) and nn.LSTM(6, 6) seq-first, Linear(8, 3) head per "
                           "step on [T, N, 8] (relu, x0.5) and Linear(6, 6) + residual on [T, N, 6]; outputs "
                           "transposed back")


def attention_heads(m, q_in, kv_in, heads):
    # Scaled dot-product attention written out as a team writes it by hand (torch 1.13 has no
    # F.scaled_dot_product_attention): projections, a head split [N, T, H, D] -> [N, H, T, D], the
    # products Q·Kᵀ and softmax(scores)·V of two computed tensors, the heads merged back.
    n, tq, e = q_in.shape
    tk = kv_in.shape[1]
    d = e // heads
    q = m.q(q_in).reshape(n, tq, heads, d).transpose(1, 2)
    k = m.k(kv_in).reshape(n, tk, heads, d).transpose(1, 2)
    v = m.v(kv_in).reshape(n, tk, heads, d).transpose(1, 2)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return m.o((w @ v).transpose(1, 2).reshape(n, tq, e))


def attention_modules(e):
    return dict(q=nn.Linear(e, e), k=nn.Linear(e, e), v=nn.Linear(e, e), o=nn.Linear(e, e))


@case
def attention_self():
    rng = Rng("attention_self")
    m = Seq(lambda s, x: attention_heads(s, x, x, 2), **attention_modules(8))
    return torch_case(m, [rng.randn(2, 5, 8)], 13, True, layout="NTC",
                      desc="self-attention by hand, 2 heads of 4 over [N, 5, 8]: Linear q/k/v, reshape + "
                           "transpose to [N, H, T, D], MatMul q·kᵀ of two computed tensors, / sqrt(D), "
                           "softmax over the last axis of [N, H, T, T], MatMul with v, heads merged, Linear")


@case
def attention_self_batch1_opset17():
    rng = Rng("attention_self_batch1_opset17")
    m = Seq(lambda s, x: attention_heads(s, x, x, 4), **attention_modules(8))
    return torch_case(m, [rng.randn(1, 6, 8)], 17, False, layout="NTC",
                      desc="the same self-attention with 4 heads of 2, exported with the batch fixed to 1, "
                           "opset 17")


@case
def attention_cross():
    rng = Rng("attention_cross")

    def fwd(m, x, mem):
        y = x + attention_heads(m, x, mem, 2)  # residual, then a GELU feed-forward
        return y + m.f2(F.gelu(m.f1(y)))

    m = Seq(fwd, f1=nn.Linear(8, 16), f2=nn.Linear(16, 8), **attention_modules(8))
    return torch_case(m, [rng.randn(2, 3, 8), rng.randn(2, 7, 8)], 14, True, layout="NTC",
                      desc="cross-attention, queries [N, 3, 8] over a memory [N, 7, 8] (scores [N, 2, 3, 7]), "
                           "residual, Erf-GELU feed-forward Linear(8, 16) + Linear(16, 8), residual")


class TinyVit(nn.Module):
    # ViT's front as torchvision and timm write it: a patch embedding (Conv2d, stride = kernel),
    # the patches as tokens, a learned class token expanded over the batch and concatenated in
    # front, a learned position embedding added; then one pre-norm attention block and a Linear
    # head on the class token.
    def __init__(self, channels=16, patch=4, tokens=16, heads=2, classes=5):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, channels, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, channels) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, channels) * 0.5)
        self.norm = nn.LayerNorm(channels)
        self.head = nn.Linear(channels, classes)
        for k, v in attention_modules(channels).items():
            setattr(self, k, v)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), t], dim=1) + self.pos
        y = self.norm(t)
        t = t + attention_heads(self, y, y, self.heads)
        return self.head(t[:, 0])


@case
def vit_class_token():
    rng = Rng("vit_class_token")
    return torch_case(TinyVit(), [rng.randn(2, 3, 16, 16)], 14, True,
                      desc="tiny ViT: Conv2d(3, 16, 4, stride 4) patches as 16 tokens, a learned class token "
                           "expanded over the batch and concatenated in front, a learned [1, 17, 16] position "
                           "embedding added, LayerNorm + 2-head self-attention + residual, Linear head on token 0")


@case
def vit_class_token_batch1_opset17():
    rng = Rng("vit_class_token_batch1_opset17")
    return torch_case(TinyVit(heads=4), [rng.randn(1, 3, 16, 16)], 17, False,
                      desc="the tiny ViT with 4 heads, exported with the batch fixed to 1, opset 17")


def random_zero_parameters(module, rng):
    """Random values for parameters their module initialises to zero (torchvision's ViT head), so
    that the output depends on the whole network."""
    with torch.no_grad():
        for p in module.parameters():
            if not p.detach().abs().sum():
                p.copy_(torch.from_numpy(rng.randn(*p.shape, scale=0.2)))
    return module


class Mha(nn.Module):
    # nn.MultiheadAttention as self-attention, the way torch 1.13 exports it: one packed in-
    # projection sliced in three, the batch merged with the heads (Reshape [T, N, E] -> [T, N*H,
    # E/H]), bmm-style products, the out-projection as a Gemm on [T*N, E].
    def __init__(self, e, heads, batch_first):
        super().__init__()
        self.attn = nn.MultiheadAttention(e, heads, batch_first=batch_first)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


@case
def mha_batch1():
    rng = Rng("mha_batch1")
    return torch_case(Mha(16, 4, True), [rng.randn(1, 6, 16)], 13, False, layout="NTC",
                      desc="nn.MultiheadAttention(16, 4, batch_first=True) self-attention, exported with the "
                           "batch fixed to 1: the batch of 1 merges with the heads ([6, 1, 16] -> [6, 4, 4]), "
                           "so the loader reads the whole tensor as one sample")


@case
def mha_seq_first_fixed_opset17():
    rng = Rng("mha_seq_first_fixed_opset17")
    return torch_case(Mha(16, 4, False), [rng.randn(6, 1, 16)], 17, False, layout="TNC",
                      desc="nn.MultiheadAttention(16, 4) sequence-first, every axis fixed ([6, 1, 16]): axis 0 "
                           "(6 steps) is data, so the file is read as whole samples of [6, 1, 16]; opset 17")


@case
def mha_free_batch():
    rng = Rng("mha_free_batch")
    return torch_case(Mha(8, 2, True), [rng.randn(2, 5, 8)], 13, True, layout="NTC",
                      desc="nn.MultiheadAttention(8, 2, batch_first=True) with a free batch: the exporter "
                           "computes N*H and T*N from the batch size, so the loader reads the batch as 1, one "
                           "sample at a time, after its batch trace proved the graph keeps samples apart")


@case
def mha_seq_first_free_batch_opset14():
    rng = Rng("mha_seq_first_free_batch_opset14")
    return torch_case(Mha(16, 4, False), [rng.randn(6, 3, 16)], 14, True, layout="TNC",
                      dynamic_axes={"x": {1: "N"}, "y": {1: "N"}},
                      desc="nn.MultiheadAttention(16, 4) sequence-first with a free batch on axis 1 of [T, N, E] "
                           "(served batch first): heads merged into N*H, out-projection over T*N rows")


def transformer_encoder(layers, norm_first, activation, batch_first=True):
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, activation=activation, batch_first=batch_first,
                                       norm_first=norm_first)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False) if layers > 1 else layer


@case
def transformer_encoder_batch1_opset14():
    rng = Rng("transformer_encoder_batch1_opset14")
    m = randomize_norms(transformer_encoder(2, True, "gelu"), rng)
    return torch_case(m, [rng.randn(1, 5, 16)], 14, False, layout="NTC",
                      desc="nn.TransformerEncoder of 2 pre-norm nn.TransformerEncoderLayer(16, 2 heads, "
                           "feed-forward 32, Erf-GELU), batch_first, exported with the batch fixed to 1")


@case
def transformer_encoder_free_batch_opset14():
    rng = Rng("transformer_encoder_free_batch_opset14")
    m = randomize_norms(transformer_encoder(2, True, "gelu"), rng)
    return torch_case(m, [rng.randn(3, 5, 16)], 14, True, layout="NTC",
                      desc="nn.TransformerEncoder of 2 pre-norm nn.TransformerEncoderLayer(16, 2 heads, "
                           "feed-forward 32, Erf-GELU), batch_first, with a free batch (read one sample at a time)")


@case
def transformer_layer_seq_first_fixed():
    rng = Rng("transformer_layer_seq_first_fixed")
    m = randomize_norms(transformer_encoder(1, False, "relu", batch_first=False), rng)
    return torch_case(m, [rng.randn(7, 1, 16)], 13, False, layout="TNC",
                      desc="one post-norm nn.TransformerEncoderLayer(16, 2 heads, feed-forward 32, ReLU), "
                           "sequence-first at the fixed shape [7, 1, 16] (read as whole samples)")


@case
def torchvision_vit_batch1_opset17():
    rng = Rng("torchvision_vit_batch1_opset17")
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                             mlp_dim=64, num_classes=10)
    m = random_zero_parameters(randomize_norms(m, rng), rng)
    return torch_case(m, [rng.randn(1, 3, 32, 32)], 17, False,
                      desc="torchvision.models.VisionTransformer (image 32, patch 8, 2 layers of 2 heads, "
                           "hidden 32, MLP 64, 10 classes; the zero-initialised head made random), batch "
                           "fixed to 1, opset 17")


@case
def torchvision_vit_free_batch_opset17():
    rng = Rng("torchvision_vit_free_batch_opset17")
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                             mlp_dim=64, num_classes=10)
    m = random_zero_parameters(randomize_norms(m, rng), rng)
    return torch_case(m, [rng.randn(3, 3, 32, 32)], 17, True,
                      desc="torchvision.models.VisionTransformer as torchvision_vit_batch1_opset17 with a free "
                           "batch: the class token expanded over the batch (Expand to [N, 1, 32]), heads merged "
                           "with N; opset 17")


@case
def torchvision_swin_free_batch_opset17():
    rng = Rng("torchvision_swin_free_batch_opset17")
    from torchvision.models.swin_transformer import SwinTransformer
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                        num_classes=10)
    m = random_zero_parameters(randomize_norms(m, rng), rng)
    return torch_case(m, [rng.randn(2, 3, 64, 64)], 17, True,
                      desc="torchvision SwinTransformer as torchvision_swin_batch1_opset17 with a free batch: "
                           "windows merged with the batch (B * windows), the mask broadcast over it; opset 17")


@case
def torchvision_swin_batch1_opset17():
    rng = Rng("torchvision_swin_batch1_opset17")
    from torchvision.models.swin_transformer import SwinTransformer
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                        num_classes=10)
    m = random_zero_parameters(randomize_norms(m, rng), rng)
    return torch_case(m, [rng.randn(1, 3, 64, 64)], 17, False,
                      desc="torchvision SwinTransformer (patch 4, embed 16, 2 stages of 2 blocks, 2 and 4 heads, "
                           "window 4: shifted windows with the attention mask built from shapes by Range / "
                           "ScatterND, cyclic shift as Slice + Concat, patch merging by strided slices), batch "
                           "fixed to 1, opset 17")


@case
def lstm_batch_first():
    rng = Rng("lstm_batch_first")
    m = Seq(lambda s, x: s.rnn(x)[0], rnn=nn.LSTM(8, 16, batch_first=True))
    return torch_case(m, [rng.randn(2, 7, 8)], 13, True, layout="NTC",
                      desc="nn.LSTM(8,16, batch_first=True), single layer, output sequence [N,7,16]")


@case
def gru_bidirectional():
    rng = Rng("gru_bidirectional")
    m = Seq(lambda s, x: s.rnn(x), rnn=nn.GRU(8, 12, batch_first=True, bidirectional=True))
    return torch_case(m, [rng.randn(2, 6, 8)], 15, True, layout="NTC",
                      output_names=["y", "h_n"],
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}, "h_n": {1: "N"}},
                      desc="nn.GRU(8,12, batch_first=True, bidirectional=True): outputs [N,6,24] and h_n [2,N,12]")


@case
def rnn_relu_2layer():
    rng = Rng("rnn_relu_2layer")
    m = Seq(lambda s, x: s.rnn(x)[0], rnn=nn.RNN(5, 7, num_layers=2, nonlinearity="relu", batch_first=True))
    return torch_case(m, [rng.randn(2, 6, 5)], 14, True, layout="NTC",
                      desc="nn.RNN(5,7, num_layers=2, nonlinearity='relu', batch_first=True): two RNN nodes, "
                           "the second reading the first's Y")


@case
def lstm_bidir_2layer_last_step():
    rng = Rng("lstm_bidir_2layer_last_step")
    m = Seq(lambda s, x: s.fc(s.rnn(x)[0][:, -1, :]),
            rnn=nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True), fc=nn.Linear(16, 3))
    return torch_case(m, [rng.randn(2, 9, 6)], 17, True, layout="NTC",
                      desc="nn.LSTM(6,8, num_layers=2, bidirectional=True, batch_first=True), then "
                           "Linear(out[:, -1, :]): the classifier head PyTorch users write")


@case
def gru_hidden_only():
    rng = Rng("gru_hidden_only")
    m = Seq(lambda s, x: s.rnn(x)[1].squeeze(0), rnn=nn.GRU(4, 6, batch_first=True))
    return torch_case(m, [rng.randn(2, 5, 4)], 12, True, layout="NTC",
                      desc="nn.GRU(4,6, batch_first=True) returning only h_n.squeeze(0): Y unused")


@case
def lstm_init_states():
    rng = Rng("lstm_init_states")
    m = Seq(lambda s, x, h0, c0: s.rnn(x, (h0, c0)), rnn=nn.LSTM(6, 10, batch_first=True))
    ins = [rng.randn(2, 5, 6), rng.randn(1, 2, 10, scale=0.5), rng.randn(1, 2, 10, scale=0.5)]
    return torch_case(m, ins, 11, True, layout="NTC",
                      input_names=["x", "h0", "c0"], output_names=["y", "h_n", "c_n"],
                      dynamic_axes={"x": {0: "N"}, "h0": {1: "N"}, "c0": {1: "N"},
                                    "y": {0: "N"}, "h_n": {1: "N"}, "c_n": {1: "N"}},
                      desc="nn.LSTM(6,10, batch_first=True) with initial h0/c0 [1,N,10] as extra graph inputs; "
                           "outputs y, h_n, c_n")


# ---------------------------------------------------------------------------------------------
# hand-built cases (tf2onnx style / old opsets); expected values from ONNX Runtime


def conv_ref(x, w, b=None, pads=(0, 0, 0, 0), stride=1, dilation=1, groups=1):
    """float64 conv with ONNX pads order (top, left, bottom, right)."""
    t, l, bo, r = pads
    xt = F.pad(f64(x), (l, r, t, bo))
    return F.conv2d(xt, f64(w), None if b is None else f64(b), stride=stride, dilation=dilation, groups=groups)


def onnx_rnn_ref(op, x, W, R, B=None, h0=None, c0=None, direction="forward", lbr=0, acts=None):
    """ONNX RNN/LSTM/GRU in float64 with numpy, written from the operator spec (layout 0:
    x [T, N, F]); returns Y [T, D, N, H], Y_h [D, N, H] and, for LSTM, Y_c."""
    fns = {"Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0),
           "HardSigmoid": lambda v: np.clip(0.2 * v + 0.5, 0, 1)}
    gates = {"RNN": 1, "LSTM": 4, "GRU": 3}[op]
    acts = acts or {"RNN": ["Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}[op]
    x = np.asarray(x, np.float64)
    T, N, _ = x.shape
    D, GH, _ = W.shape
    H = GH // gates
    Y = np.zeros((T, D, N, H))
    Yh, Yc = np.zeros((D, N, H)), np.zeros((D, N, H))
    for d in range(D):
        w, r = np.asarray(W[d], np.float64), np.asarray(R[d], np.float64)
        wb = np.zeros(GH) if B is None else np.asarray(B[d][:GH], np.float64)
        rb = np.zeros(GH) if B is None else np.asarray(B[d][GH:], np.float64)
        h = np.zeros((N, H)) if h0 is None else np.asarray(h0[d], np.float64)
        c = np.zeros((N, H)) if c0 is None else np.asarray(c0[d], np.float64)
        backward = direction == "reverse" or d == 1
        f, g = fns[acts[0]], fns[acts[1] if len(acts) > 1 else acts[0]]
        hf = fns[acts[2]] if len(acts) > 2 else None
        for t in (range(T - 1, -1, -1) if backward else range(T)):
            xw, hr = x[t] @ w.T + wb, h @ r.T + rb
            if op == "RNN":
                h = f(xw + hr)
            elif op == "LSTM":
                i, o, fg, cc = (xw[:, k * H:(k + 1) * H] + hr[:, k * H:(k + 1) * H] for k in range(4))
                c = f(fg) * c + f(i) * g(cc)
                h = f(o) * hf(c)
            else:
                z = f(xw[:, :H] + hr[:, :H])
                rr = f(xw[:, H:2 * H] + hr[:, H:2 * H])
                if lbr:
                    n = g(xw[:, 2 * H:] + rr * hr[:, 2 * H:])
                else:
                    n = g(xw[:, 2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:])
                h = (1 - z) * n + z * h
            Y[t, d] = h
        Yh[d], Yc[d] = h, c
    return Y, Yh, Yc


@case
def lstm_time_major_fixed():
    rng = Rng("lstm_time_major_fixed")
    T, F_, H = 6, 5, 7
    g = G("lstm_time_major_fixed", 9)
    W, R, B = rng.randn(1, 4 * H, F_, scale=0.5), rng.randn(1, 4 * H, H, scale=0.5), rng.randn(1, 8 * H, scale=0.3)
    h0, c0 = rng.randn(1, 1, H, scale=0.5), rng.randn(1, 1, H, scale=0.5)
    for k, v in dict(W=W, R=R, B=B, h0=h0, c0=c0).items():
        g.init(k, v.astype(np.float32))
    g.init("lens", np.array([T], dtype=np.int32))
    x = g.input("x", [T, 1, F_])
    acts = ["HardSigmoid", "Tanh", "Tanh"]
    g.node("LSTM", [x, "W", "R", "B", "lens", "h0", "c0"], out=["y", "y_h"], hidden_size=H, direction="reverse",
           activations=acts)
    g.output("y", [T, 1, 1, H])
    g.output("y_h", [1, 1, H])
    xin = rng.randn(T, 1, F_)

    def ref(xin):
        Y, Yh, _ = onnx_rnn_ref("LSTM", xin, W, R, B, h0, c0, "reverse", acts=acts)
        return [Y, Yh]

    return hand_case(g, [xin], "LSTM reading a time-major graph input [6,1,5] with every axis fixed (batch on "
                               "axis 1), reverse, HardSigmoid gates, constant non-zero initial states, "
                               "sequence_lens; outputs Y [6,1,1,7] and Y_h", ref, layout="TNC")


@case
def sdpa_torch2_causal_free_batch():
    # What torch 2.x writes for nn.MultiheadAttention(batch_first=True) with need_weights=False and
    # is_causal (its F.scaled_dot_product_attention symbolic, opset 14; torch 1.13 here cannot
    # export it): the head split as views over N * H computed from Shape, the scale 1/sqrt(D) from
    # the query's last dimension, sqrt(scale) multiplied into Q and Kᵀ, the causal mask built by
    # Expand + Trilu + Equal + Where from the two sequence lengths, the heads merged over T * N
    # rows for the out-projection Gemm. The free batch is read one sample at a time.
    rng = Rng("sdpa_torch2_causal_free_batch")
    T, E, H = 5, 8, 2
    D = E // H
    g = G("sdpa_torch2_causal_free_batch", 14)
    w_in, b_in = rng.randn(E, 3 * E, scale=0.4), rng.randn(3 * E, scale=0.2)
    w_out, b_out = rng.randn(E, E, scale=0.4), rng.randn(E, scale=0.2)
    for k, v in dict(w_in=w_in, b_in=b_in, w_out=w_out, b_out=b_out).items():
        g.init(k, v.astype(np.float32))
    for k, v in dict(i0=[0], i1=[1], i2=[2], m1=[-1], m2=[-2], big=[np.iinfo(np.int64).max], heads=[H], d=[D],
                     e=[E], thirds=[E, E, E]).items():
        g.init(k, np.array(v, dtype=np.int64))
    g.init("one", np.array([1.0], dtype=np.float32))
    g.init("zero", np.array([0.0], dtype=np.float32))
    g.init("ninf", np.array([-np.inf], dtype=np.float32))
    x = g.input("x", ["N", T, E])
    xt = g.node("Transpose", [x], perm=[1, 0, 2])  # [T, N, E]
    shape = g.node("Shape", [xt])
    t_, n_ = g.node("Gather", [shape, "i0"], axis=0), g.node("Gather", [shape, "i1"], axis=0)
    qkv = g.node("Add", [g.node("MatMul", [xt, "w_in"]), "b_in"])
    q, k, v = g.node("Split", [qkv, "thirds"], n_out=3, axis=2)
    nh = g.node("Mul", [n_, "heads"])
    heads = []
    for part in (q, k, v):
        r = g.node("Reshape", [part, g.node("Concat", [t_, nh, "d"], axis=0)])  # [T, N*H, D]
        r = g.node("Transpose", [r], perm=[1, 0, 2])  # [N*H, T, D]
        heads.append(g.node("Reshape", [r, g.node("Concat", [n_, "heads", t_, "d"], axis=0)]))  # [N, H, T, D]
    q4, k4, v4 = heads
    last = g.node("Slice", [g.node("Shape", [q4]), "m1", "big"])
    scale = g.node("Div", ["one", g.node("Sqrt", [g.node("Cast", [last], to=TensorProto.FLOAT)])])
    root = g.node("Sqrt", [scale])
    qs = g.node("Mul", [q4, root])
    ks = g.node("Mul", [g.node("Transpose", [k4], perm=[0, 1, 3, 2]), root])
    tl = g.node("Slice", [g.node("Shape", [q4]), "m2", "m1"])
    sl = g.node("Slice", [g.node("Shape", [k4]), "m2", "m1"])
    ones = g.node("Expand", ["one", g.node("Concat", [tl, sl], axis=0)])
    mask = g.node("Where", [g.node("Equal", [g.node("Trilu", [ones], upper=0), "zero"]), "ninf", "zero"])
    att = g.node("Softmax", [g.node("Add", [g.node("MatMul", [qs, ks]), mask])], axis=-1)
    o = g.node("MatMul", [att, v4])  # [N, H, T, D]
    o = g.node("Transpose", [o], perm=[2, 0, 1, 3])  # [T, N, H, D]
    rows = g.node("Reshape", [o, g.node("Concat", [g.node("Mul", [t_, n_]), "e"], axis=0)])  # [T*N, E]
    proj = g.node("Gemm", [rows, "w_out", "b_out"])
    back = g.node("Reshape", [proj, g.node("Concat", [t_, n_, "e"], axis=0)])
    g.node("Transpose", [back], out="y", perm=[1, 0, 2])
    g.output("y", ["N", T, E])
    xin = rng.randn(2, T, E)

    def ref(xin):
        x64 = np.asarray(xin, np.float64)
        qkv64 = x64 @ w_in.astype(np.float64) + b_in.astype(np.float64)
        n = x64.shape[0]
        split = [qkv64[..., i * E:(i + 1) * E].reshape(n, T, H, D).transpose(0, 2, 1, 3) for i in range(3)]
        s = split[0] @ split[1].transpose(0, 1, 3, 2) / np.sqrt(D)
        s = s + np.triu(np.full((T, T), -np.inf), 1)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        o64 = (p @ split[2]).transpose(0, 2, 1, 3).reshape(n, T, E)
        return [o64 @ w_out.astype(np.float64) + b_out.astype(np.float64)]

    return hand_case(g, [xin], "torch 2.x-style nn.MultiheadAttention export with scaled_dot_product_attention "
                               "(is_causal): heads as views over N*H from Shape, 1/sqrt(D) from the query's shape "
                               "with sqrt(scale) on Q and Kᵀ, causal mask by Expand + Trilu + Equal + Where, heads "
                               "merged over T*N rows for the Gemm; free batch, opset 14", ref, layout="NTC", dyn=True)


@case
def tf_lstm_fixed_batch_reshape():
    # What tf2onnx writes for a Keras LSTM with the batch fixed to 1: its optimizer turns the
    # batch-major <-> time-major Transposes into Reshapes (only axes of length 1 move), so the
    # graph moves its single sample across axis 0; a full-range Slice over axis 0 (INT32_MAX end)
    # sits next to a real slice on axis 1.
    rng = Rng("tf_lstm_fixed_batch_reshape")
    T, F_, H, O = 5, 6, 8, 3
    g = G("tf_lstm_fixed_batch_reshape", 13)
    W, R, B = rng.randn(1, 4 * H, F_, scale=0.5), rng.randn(1, 4 * H, H, scale=0.5), rng.randn(1, 8 * H, scale=0.3)
    Wd, bd = rng.randn(H, O, scale=0.5), rng.randn(O, scale=0.3)
    for k, v in dict(W=W, R=R, B=B, Wd=Wd, bd=bd).items():
        g.init(k, v.astype(np.float32))
    imax = np.iinfo(np.int32).max
    g.init("to_time_major", np.array([T, 1, F_], dtype=np.int64))
    g.init("to_batch_major", np.array([1, T, H], dtype=np.int64))
    g.init("sq_dir", np.array([1], dtype=np.int64))
    g.init("sq_state", np.array([0], dtype=np.int64))
    g.init("starts", np.array([0, 1], dtype=np.int64))
    g.init("ends", np.array([imax, imax], dtype=np.int64))
    g.init("axes", np.array([0, 1], dtype=np.int64))
    x = g.input("input_1", [1, T, F_])
    xt = g.node("Reshape", [x, "to_time_major"])
    y, yh = g.node("LSTM", [xt, "W", "R", "B"], n_out=2, hidden_size=H)
    ys = g.node("Squeeze", [y, "sq_dir"])
    yb = g.node("Reshape", [ys, "to_batch_major"])
    tail = g.node("Slice", [yb, "starts", "ends", "axes"])
    mm = g.node("MatMul", [tail, "Wd"])
    g.node("Add", [mm, "bd"], out="dense")
    g.node("Squeeze", [yh, "sq_state"], out="state")
    g.output("dense", [1, T - 1, O])
    g.output("state", [1, H])
    xin = rng.randn(1, T, F_)

    def ref(xin):
        Y, Yh, _ = onnx_rnn_ref("LSTM", np.asarray(xin, np.float64).reshape(T, 1, F_), W, R, B)
        seq = Y[:, 0, 0, :].reshape(1, T, H)
        return [seq[:, 1:] @ Wd.astype(np.float64) + bd.astype(np.float64), Yh[0]]

    return hand_case(g, [xin], "tf2onnx-style Keras LSTM with the batch fixed to 1: Reshape [1,5,6] -> [5,1,6] "
                               "instead of a Transpose, LSTM, Squeeze, Reshape [5,1,8] -> [1,5,8], Slice "
                               "starts [0,1] ends [INT32_MAX, INT32_MAX] over axes 0 and 1, MatMul + Add; the "
                               "state Y_h squeezed on axis 0", ref, layout="NTC")


@case
def slice_batch_int32_max():
    rng = Rng("slice_batch_int32_max")
    g = G("slice_batch_int32_max", 13)
    imax = np.iinfo(np.int32).max
    g.init("starts", np.array([0, 1], dtype=np.int64))
    g.init("ends", np.array([imax, 5], dtype=np.int64))
    g.init("axes", np.array([0, 1], dtype=np.int64))
    x = g.input("x", ["N", 6, 8])
    sl = g.node("Slice", [x, "starts", "ends", "axes"])
    g.node("Relu", [sl], out="y")
    g.output("y", ["N", 4, 8])
    xin = rng.randn(2, 6, 8)
    return hand_case(g, [xin], "full-range Slice over the batch axis with tf2onnx's INT32_MAX end next to a "
                               "real slice of axis 1 (1:5), dynamic batch",
                     lambda xin: [np.maximum(np.asarray(xin, np.float64)[:, 1:5], 0)], layout="NTC", dyn=True)


@case
def gru_lbr0_bidir_state_input():
    rng = Rng("gru_lbr0_bidir_state_input")
    T, F_, H = 4, 3, 5
    g = G("gru_lbr0_bidir_state_input", 13)
    W, R, B = rng.randn(2, 3 * H, F_, scale=0.5), rng.randn(2, 3 * H, H, scale=0.5), rng.randn(2, 6 * H, scale=0.3)
    for k, v in dict(W=W, R=R, B=B).items():
        g.init(k, v.astype(np.float32))
    g.init("perm_shape", np.array([0, 0, -1], dtype=np.int64))
    x = g.input("x", ["N", T, F_])
    h = g.input("h0", [2, "N", H])
    xt = g.node("Transpose", [x], perm=[1, 0, 2])
    y, yh = g.node("GRU", [xt, "W", "R", "B", "", h], n_out=2, hidden_size=H, direction="bidirectional",
                   linear_before_reset=0)
    yt = g.node("Transpose", [y], perm=[2, 0, 1, 3])
    g.node("Reshape", [yt, "perm_shape"], out="y")
    g.node("Identity", [yh], out="h_n")
    g.output("y", ["N", T, 2 * H])
    g.output("h_n", [2, "N", H])
    xin, hin = rng.randn(2, T, F_), rng.randn(2, 2, H, scale=0.5)

    def ref(xin, hin):
        Y, Yh, _ = onnx_rnn_ref("GRU", np.transpose(xin, (1, 0, 2)), W, R, B, hin, None, "bidirectional", lbr=0)
        return [np.transpose(Y, (2, 0, 1, 3)).reshape(xin.shape[0], T, 2 * H), Yh]

    return hand_case(g, [xin, hin], "bidirectional GRU with linear_before_reset=0 and its initial state a graph "
                                    "input [2,N,5] (batch on axis 1); Y transposed batch-first and reshaped, "
                                    "h_n [2,N,5] an output", ref, layout="NTC", dyn=True)


@case
def tf_dense_nhwc():
    rng = Rng("tf_dense_nhwc")
    g = G("tf_dense_nhwc", 13)
    W = rng.randn(4, 3, 3, 3, scale=0.4)
    B = rng.randn(4, scale=0.1)
    g.init("conv_w", W)
    g.init("conv_b", B)
    wd = rng.randn(8 * 8 * 4, 10, scale=0.1)
    bd = rng.randn(10, scale=0.1)
    g.init("dense_w", wd)
    g.init("dense_b", bd)
    g.init("flat_shape", np.array([-1, 256], dtype=np.int64))
    x = g.input("input_1", ["N", 8, 8, 3])
    t = g.node("Transpose", [x], perm=[0, 3, 1, 2])
    c = g.node("Conv", [t, "conv_w", "conv_b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1],
               dilations=[1, 1])
    r = g.node("Relu", [c])
    t2 = g.node("Transpose", [r], perm=[0, 2, 3, 1])
    fl = g.node("Reshape", [t2, "flat_shape"])
    mm = g.node("MatMul", [fl, "dense_w"])
    g.node("Add", [mm, "dense_b"], out="dense")
    g.output("dense", ["N", 10])
    xin = rng.randn(2, 8, 8, 3)

    def ref(xin):
        y = F.relu(conv_ref(f64(xin).permute(0, 3, 1, 2), W, B, pads=(1, 1, 1, 1)))
        y = y.permute(0, 2, 3, 1).reshape(xin.shape[0], -1)
        return [y @ f64(wd) + f64(bd)]

    return hand_case(g, [xin], "tf2onnx-style NHWC model: Transpose(0,3,1,2) -> Conv -> Relu -> Transpose(0,2,3,1)"
                               " -> Reshape([-1,256]) -> MatMul + Add (Keras Dense)", ref, layout="NHWC", dyn=True)


@case
def tf_dense_nhwc_op9():
    rng = Rng("tf_dense_nhwc_op9")
    g = G("tf_dense_nhwc_op9", 9)
    W = rng.randn(5, 2, 3, 3, scale=0.4)
    B = rng.randn(5, scale=0.1)
    wd = rng.randn(6 * 6 * 5, 4, scale=0.1)
    bd = rng.randn(4, scale=0.1)
    g.init("conv_w", W)
    g.init("conv_b", B)
    g.init("dense_w", wd)
    g.init("dense_b", bd)
    x = g.input("input", [1, 6, 6, 2])
    t = g.node("Transpose", [x], perm=[0, 3, 1, 2])
    c = g.node("Conv", [t, "conv_w", "conv_b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    r = g.node("Relu", [c])
    t2 = g.node("Transpose", [r], perm=[0, 2, 3, 1])
    fl = g.node("Flatten", [t2], axis=1)
    mm = g.node("MatMul", [fl, "dense_w"])
    g.node("Add", [mm, "dense_b"], out="logits")
    g.output("logits", [1, 4])
    xin = rng.randn(1, 6, 6, 2)

    def ref(xin):
        y = F.relu(conv_ref(f64(xin).permute(0, 3, 1, 2), W, B, pads=(1, 1, 1, 1)))
        return [y.permute(0, 2, 3, 1).reshape(1, -1) @ f64(wd) + f64(bd)]

    return hand_case(g, [xin], "opset 9 NHWC model: Transpose -> Conv -> Relu -> Transpose -> Flatten(axis 1) -> "
                               "MatMul + Add", ref, layout="NHWC")


@case
def tf_gap_dense_softmax():
    rng = Rng("tf_gap_dense_softmax")
    g = G("tf_gap_dense_softmax", 11)
    wd = rng.randn(6, 3, scale=0.5)
    bd = rng.randn(3, scale=0.1)
    g.init("dense_w", wd)
    g.init("dense_b", bd)
    x = g.input("input", ["N", 7, 9, 6])
    gap = g.node("ReduceMean", [x], axes=[1, 2], keepdims=0)
    mm = g.node("MatMul", [gap, "dense_w"])
    logits = g.node("Add", [mm, "dense_b"], out="logits")
    g.node("Softmax", [logits], out="probs", axis=1)
    g.output("logits", ["N", 3])
    g.output("probs", ["N", 3])
    xin = rng.randn(2, 7, 9, 6, scale=2.0)

    def ref(xin):
        lg = f64(xin).mean(dim=(1, 2)) @ f64(wd) + f64(bd)
        return [lg, torch.softmax(lg, dim=1)]

    return hand_case(g, [xin], "tf2onnx global average pooling in NHWC: ReduceMean(axes [1,2], keepdims 0) -> "
                               "MatMul + Add -> Softmax-11 on axis 1 of a 2-D tensor; two graph outputs",
                     ref, layout="NHWC", dyn=True)


@case
def softmax_op11_axis1_4d():
    rng = Rng("softmax_op11_axis1_4d")
    g = G("softmax_op11_axis1_4d", 11)
    x = g.input("x", [1, 3, 4, 5])
    g.node("Softmax", [x], out="y", axis=1)
    g.node("LogSoftmax", [x], out="logy", axis=2)
    g.output("y", [1, 3, 4, 5])
    g.output("logy", [1, 3, 4, 5])
    xin = rng.randn(1, 3, 4, 5, scale=2.0)

    def ref(xin):
        t = f64(xin)
        return [torch.softmax(t.reshape(1, -1), dim=1).reshape(t.shape),
                torch.log_softmax(t.reshape(3, 20), dim=1).reshape(t.shape)]

    return hand_case(g, [xin], "Softmax-11 axis 1 on a 4-D tensor: opset < 13 semantics flatten to 2-D "
                               "[N, C*H*W], so the softmax runs over C, H and W together; LogSoftmax-11 axis 2 "
                               "likewise over [N*C, H*W]", ref)


@case
def slice_op9_attrs():
    rng = Rng("slice_op9_attrs")
    g = G("slice_op9_attrs", 9)
    x = g.input("x", [1, 6, 8, 5])
    g.node("Slice", [x], out="a", starts=[1, 2], ends=[-1, 2 ** 63 - 1], axes=[1, 2])
    g.node("Slice", [x], out="b", starts=[0, 0, -6, 1], ends=[1, 3, 1000, -1])
    g.output("a", [1, 4, 6, 5])
    g.output("b", [1, 3, 6, 3])
    xin = rng.randn(1, 6, 8, 5)

    def ref(xin):
        return [f64(xin[:, 1:-1, 2:, :]), f64(xin[0:1, 0:3, -6:, 1:-1])]

    return hand_case(g, [xin], "Slice-1 form (opset 9): starts/ends/axes attributes; INT64_MAX end, negative "
                               "start/end, end past the dim, and a Slice without axes", ref)


@case
def upsample_op9_nearest():
    rng = Rng("upsample_op9_nearest")
    g = G("upsample_op9_nearest", 9)
    g.init("scales", np.array([1.0, 1.0, 2.0, 3.0], dtype=np.float32))
    x = g.input("x", [1, 3, 4, 5])
    g.node("Upsample", [x, "scales"], out="y", mode="nearest")
    g.output("y", [1, 3, 8, 15])
    xin = rng.randn(1, 3, 4, 5)

    def ref(xin):
        return [f64(xin).repeat_interleave(2, dim=2).repeat_interleave(3, dim=3)]

    return hand_case(g, [xin], "Upsample-9 nearest with scales [1,1,2,3] as an initializer input", ref)


def resize_ref(t, out_hw, scales_hw, coord, mode, nearest_mode="round_prefer_floor"):
    """ONNX Resize on NCHW in float64, written from the operator's definition: per spatial axis
    the input coordinate of each output index, then nearest (rounded, clamped) or linear
    (clamped to the input, interpolated between floor and floor + 1)."""
    import math
    x = t.numpy()
    for axis, n_out, scale in ((2, out_hw[0], scales_hw[0]), (3, out_hw[1], scales_hw[1])):
        n_in = x.shape[axis]
        if scale is None:
            scale = n_out / n_in
        rows = []
        for i in range(n_out):
            if coord == "half_pixel":
                c = (i + 0.5) / scale - 0.5
            elif coord == "pytorch_half_pixel":
                c = (i + 0.5) / scale - 0.5 if n_out > 1 else 0.0
            elif coord == "align_corners":
                c = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
            elif coord == "asymmetric":
                c = i / scale
            elif coord == "tf_half_pixel_for_nn":
                c = (i + 0.5) / scale
            if mode == "nearest":
                frac = c - math.floor(c)
                if nearest_mode == "floor":
                    k = math.floor(c)
                elif nearest_mode == "ceil":
                    k = math.ceil(c)
                elif nearest_mode == "round_prefer_ceil":
                    k = math.ceil(c) if frac == 0.5 else math.floor(c + 0.5)
                else:
                    k = math.floor(c) if frac == 0.5 else math.floor(c + 0.5)
                k = min(max(k, 0), n_in - 1)
                rows.append(np.take(x, k, axis=axis))
            else:
                c = min(max(c, 0.0), n_in - 1)
                lo = int(math.floor(c))
                hi = min(lo + 1, n_in - 1)
                w = c - lo
                rows.append(np.take(x, lo, axis=axis) * (1 - w) + np.take(x, hi, axis=axis) * w)
        x = np.stack(rows, axis=axis)
    return torch.from_numpy(x)


def f32(v):
    return float(np.float32(v))


@case
def resize_nearest_modes():
    rng = Rng("resize_nearest_modes")
    g = G("resize_nearest_modes", 13)
    g.init("sc1", np.array([1, 1, 1.5, 0.75], dtype=np.float32))
    g.init("sz2", np.array([1, 2, 3, 8], dtype=np.int64))
    g.init("sc3", np.array([1, 1, 0.5, 0.5], dtype=np.float32))
    x = g.input("x", [1, 2, 5, 6])
    g.node("Resize", [x, "", "sc1"], out="y1", mode="nearest", coordinate_transformation_mode="half_pixel",
           nearest_mode="round_prefer_ceil")
    g.node("Resize", [x, "", "", "sz2"], out="y2", mode="nearest",
           coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="floor")
    g.node("Resize", [x, "", "sc3"], out="y3", mode="nearest", coordinate_transformation_mode="asymmetric",
           nearest_mode="ceil")
    g.output("y1", [1, 2, 7, 4])
    g.output("y2", [1, 2, 3, 8])
    g.output("y3", [1, 2, 2, 3])
    xin = rng.randn(1, 2, 5, 6)

    def ref(xin):
        t = f64(xin)
        return [resize_ref(t, (7, 4), (1.5, 0.75), "half_pixel", "nearest", "round_prefer_ceil"),
                resize_ref(t, (3, 8), (None, None), "tf_half_pixel_for_nn", "nearest", "floor"),
                resize_ref(t, (2, 3), (0.5, 0.5), "asymmetric", "nearest", "ceil")]

    return hand_case(g, [xin], "Resize-13 nearest to sizes that are no whole-number repeat: half_pixel "
                               "round_prefer_ceil by scales [1.5, 0.75], tf_half_pixel_for_nn floor to sizes "
                               "(3, 8), asymmetric ceil by 0.5", ref)


@case
def resize_linear_modes():
    rng = Rng("resize_linear_modes")
    g = G("resize_linear_modes", 13)
    g.init("sz1", np.array([2, 2, 7, 4], dtype=np.int64))
    g.init("sc2", np.array([1, 1, 1.7, 0.6], dtype=np.float32))
    g.init("sz3", np.array([2, 2, 1, 3], dtype=np.int64))
    g.init("sc4", np.array([1, 1, 0.8, 1.3], dtype=np.float32))
    x = g.input("x", [2, 2, 5, 6])
    g.node("Resize", [x, "", "", "sz1"], out="y1", mode="linear", coordinate_transformation_mode="align_corners")
    g.node("Resize", [x, "", "sc2"], out="y2", mode="linear", coordinate_transformation_mode="asymmetric")
    g.node("Resize", [x, "", "", "sz3"], out="y3", mode="linear",
           coordinate_transformation_mode="pytorch_half_pixel")
    g.node("Resize", [x, "", "sc4"], out="y4", mode="linear")
    g.output("y1", [2, 2, 7, 4])
    g.output("y2", [2, 2, 8, 3])
    g.output("y3", [2, 2, 1, 3])
    g.output("y4", [2, 2, 4, 7])
    xin = rng.randn(2, 2, 5, 6)

    def ref(xin):
        t = f64(xin)
        return [resize_ref(t, (7, 4), (None, None), "align_corners", "linear"),
                resize_ref(t, (8, 3), (f32(1.7), f32(0.6)), "asymmetric", "linear"),
                resize_ref(t, (1, 3), (None, None), "pytorch_half_pixel", "linear"),
                resize_ref(t, (4, 7), (f32(0.8), f32(1.3)), "half_pixel", "linear")]

    return hand_case(g, [xin], "Resize-13 linear to any size: align_corners to (7, 4), asymmetric by scales "
                               "[1.7, 0.6], pytorch_half_pixel to a height of 1, half_pixel (the default) by "
                               "[0.8, 1.3]; the sizes carry the batch the file declares (2)", ref)


@case
def resize_op10_shrink():
    rng = Rng("resize_op10_shrink")
    g = G("resize_op10_shrink", 10)
    g.init("sc", np.array([1, 1, 0.5, 0.75], dtype=np.float32))
    x = g.input("x", [1, 2, 6, 8])
    g.node("Resize", [x, "sc"], out="y", mode="nearest")
    g.output("y", [1, 2, 3, 6])
    xin = rng.randn(1, 2, 6, 8)

    def ref(xin):
        return [resize_ref(f64(xin), (3, 6), (0.5, 0.75), "asymmetric", "nearest", "ceil")]

    return hand_case(g, [xin], "Resize-10 nearest shrinking by scales [0.5, 0.75] (asymmetric; ONNX Runtime "
                               "rounds up when shrinking)", ref)


@case
def interp_bilinear_size():
    rng = Rng("interp_bilinear_size")
    m = Seq(lambda s, x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False))
    return torch_case(m, [rng.randn(2, 3, 5, 6)], 13, True,
                      desc="F.interpolate to size (7, 9) bilinear from 5x6 -> Resize linear pytorch_half_pixel "
                           "with sizes")


@case
def interp_nearest_shrink():
    rng = Rng("interp_nearest_shrink")
    m = Seq(lambda s, x: F.interpolate(x, size=(3, 4), mode="nearest"))
    return torch_case(m, [rng.randn(1, 3, 7, 9)], 17, False,
                      desc="F.interpolate to size (3, 4) nearest from 7x9 -> Resize nearest asymmetric floor")


@case
def interp_linear1d_ac():
    rng = Rng("interp_linear1d_ac")
    m = Seq(lambda s, x: F.interpolate(x, size=11, mode="linear", align_corners=True))
    return torch_case(m, [rng.randn(2, 4, 6)], 13, True,
                      desc="F.interpolate 1-D linear to 11 from 6, align_corners=True")


@case
def pad_op2_attr():
    rng = Rng("pad_op2_attr")
    g = G("pad_op2_attr", 9)
    x = g.input("x", [1, 3, 5, 4])
    g.node("Pad", [x], out="y", pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="constant", value=0.25)
    g.output("y", [1, 3, 8, 7])
    xin = rng.randn(1, 3, 5, 4)

    def ref(xin):
        return [f64(np.pad(xin.astype(np.float64), ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=0.25))]

    return hand_case(g, [xin], "Pad-2 attribute form (opset 9): pads attribute [0,0,1,2,0,0,2,1] (begins then ends), "
                               "mode constant, value 0.25", ref)


@case
def pad_op11_inputs():
    rng = Rng("pad_op11_inputs")
    g = G("pad_op11_inputs", 11)
    g.init("pads", np.array([0, 0, 2, 1, 0, 0, 0, 3], dtype=np.int64))
    g.init("value", np.array(-1.5, dtype=np.float32))
    x = g.input("x", [1, 2, 4, 5])
    g.node("Pad", [x, "pads", "value"], out="constant", mode="constant")
    g.node("Pad", [x, "pads"], out="edge", mode="edge")
    g.output("constant", [1, 2, 6, 9])
    g.output("edge", [1, 2, 6, 9])
    xin = rng.randn(1, 2, 4, 5)
    pw = ((0, 0), (0, 0), (2, 0), (1, 3))

    def ref(xin):
        a = xin.astype(np.float64)
        return [f64(np.pad(a, pw, constant_values=-1.5)), f64(np.pad(a, pw, mode="edge"))]

    return hand_case(g, [xin], "Pad-11 input form: pads and constant_value as initializer inputs (mode constant), "
                               "and mode edge without constant_value", ref)


@case
def clip_op6_attr():
    rng = Rng("clip_op6_attr")
    g = G("clip_op6_attr", 9)
    x = g.input("x", [1, 4, 5, 5])
    g.node("Clip", [x], out="both", min=-0.5, max=1.5)
    g.node("Clip", [x], out="max_only", max=0.75)
    g.output("both", [1, 4, 5, 5])
    g.output("max_only", [1, 4, 5, 5])
    xin = rng.randn(1, 4, 5, 5, scale=2.0)

    def ref(xin):
        t = f64(xin)
        return [t.clamp(-0.5, 1.5), t.clamp(max=0.75)]

    return hand_case(g, [xin], "Clip-6 attribute form (opset 9): min/max attributes, and max only (min defaults "
                               "to the lowest float)", ref)


@case
def clip_op11_inputs():
    rng = Rng("clip_op11_inputs")
    g = G("clip_op11_inputs", 11)
    g.init("lo", np.array(-0.5, dtype=np.float32))
    g.init("hi", np.array(1.5, dtype=np.float32))
    x = g.input("x", ["N", 4, 5, 5])
    g.node("Clip", [x, "lo", "hi"], out="both")
    g.node("Clip", [x, "", "hi"], out="max_only")
    g.node("Clip", [x, "lo"], out="min_only")
    g.output("both", ["N", 4, 5, 5])
    g.output("max_only", ["N", 4, 5, 5])
    g.output("min_only", ["N", 4, 5, 5])
    xin = rng.randn(2, 4, 5, 5, scale=2.0)

    def ref(xin):
        t = f64(xin)
        return [t.clamp(-0.5, 1.5), t.clamp(max=1.5), t.clamp(min=-0.5)]

    return hand_case(g, [xin], "Clip-11 input form: min and max as scalar initializers; min omitted with an empty "
                               "input name; max omitted (trailing input absent)", ref, dyn=True)


@case
def batchnorm_op9():
    rng = Rng("batchnorm_op9")
    g = G("batchnorm_op9", 9)
    c = 5
    scale, bias = rng.uniform(0.5, 1.5, c), rng.randn(c, scale=0.2)
    mean, var = rng.randn(c, scale=0.5), rng.uniform(0.5, 2.0, c)
    for n, a in (("gamma", scale), ("beta", bias), ("mean", mean), ("var", var)):
        g.init(n, a)
    x = g.input("x", ["N", c, 6, 6])
    g.node("BatchNormalization", [x, "gamma", "beta", "mean", "var"], out="y", epsilon=1e-3, momentum=0.99)
    g.output("y", ["N", c, 6, 6])
    xin = rng.randn(2, c, 6, 6, scale=2.0)

    def ref(xin):
        sh = (1, c, 1, 1)
        return [(f64(xin) - f64(mean).view(sh)) / torch.sqrt(f64(var).view(sh) + 1e-3) * f64(scale).view(sh)
                + f64(bias).view(sh)]

    return hand_case(g, [xin], "BatchNormalization-9 (opset 9) with epsilon 1e-3, momentum 0.99", ref, dyn=True)


@case
def squeeze_unsqueeze_op11():
    rng = Rng("squeeze_unsqueeze_op11")
    g = G("squeeze_unsqueeze_op11", 11)
    x = g.input("x", [2, 1, 5, 1])
    s = g.node("Squeeze", [x], out="squeezed", axes=[1, 3])
    g.node("Unsqueeze", [s], out="unsqueezed", axes=[1, -1])
    g.node("Squeeze", [x], out="squeezed_all")
    g.output("squeezed", [2, 5])
    g.output("unsqueezed", [2, 1, 5, 1])
    g.output("squeezed_all", [2, 5])
    xin = rng.randn(2, 1, 5, 1)

    def ref(xin):
        t = f64(xin)
        return [t[:, 0, :, 0], t, t[:, 0, :, 0]]

    return hand_case(g, [xin], "Squeeze-11/Unsqueeze-11 with axes attributes: Squeeze axes [1,3], Unsqueeze axes "
                               "[1,-1] (negative axis counts in the output rank), Squeeze without axes; fixed "
                               "batch 2 so that the axis-less Squeeze keeps the batch axis", ref,
                     layout="NCW")


@case
def argmax_ties_select_last():
    rng = Rng("argmax_ties_select_last")
    g = G("argmax_ties_select_last", 13)
    x = g.input("x", ["N", 3, 6])
    r = g.node("Relu", [x], out="relu")
    g.node("ArgMax", [r], out="first_max", axis=2, keepdims=0)
    g.node("ArgMax", [r], out="last_max", axis=-1, keepdims=0, select_last_index=1)
    g.node("ArgMin", [r], out="first_min", axis=1, keepdims=1)
    g.node("ArgMin", [r], out="last_min", axis=1, keepdims=1, select_last_index=1)
    for name, shape in (("first_max", ["N", 3]), ("last_max", ["N", 3]), ("first_min", ["N", 1, 6]),
                        ("last_min", ["N", 1, 6])):
        g.output(name, shape, TensorProto.INT64)
    xin = rng.randn(2, 3, 6)
    xin[0, 1] = -1.0  # a row of zeros after Relu: every index ties
    xin[1, 2, 1] = xin[1, 2, 4] = 9.0  # a tie for the maximum

    def ref(xin):
        y = np.maximum(f64(xin).numpy(), 0.0)

        def last(a, axis, pick):  # the index of the last extreme: the first one of the reversed axis
            n = a.shape[axis]
            return n - 1 - pick(np.flip(a, axis), axis=axis)

        return [np.argmax(y, 2), last(y, 2, np.argmax), np.argmin(y, 1)[:, None, :],
                last(y, 1, np.argmin)[:, None, :]]

    return hand_case(g, [xin], "ArgMax / ArgMin on ties (a row that Relu makes all zeros, two equal maxima): "
                               "first index by default, last with select_last_index 1; axis -1, keepdims 0 "
                               "and 1; free batch", ref, layout="NCW", dyn=True)


@case
def squeeze_unsqueeze_op13():
    rng = Rng("squeeze_unsqueeze_op13")
    g = G("squeeze_unsqueeze_op13", 13)
    g.init("sq_axes", np.array([1, 3], dtype=np.int64))
    g.init("unsq_axes", np.array([1, -1], dtype=np.int64))
    x = g.input("x", [2, 1, 5, 1])
    s = g.node("Squeeze", [x, "sq_axes"], out="squeezed")
    g.node("Unsqueeze", [s, "unsq_axes"], out="unsqueezed")
    g.node("Squeeze", [x], out="squeezed_all")
    g.output("squeezed", [2, 5])
    g.output("unsqueezed", [2, 1, 5, 1])
    g.output("squeezed_all", [2, 5])
    xin = rng.randn(2, 1, 5, 1)

    def ref(xin):
        t = f64(xin)
        return [t[:, 0, :, 0], t, t[:, 0, :, 0]]

    return hand_case(g, [xin], "Squeeze-13/Unsqueeze-13 with axes as int64 initializer inputs (same graph as "
                               "squeeze_unsqueeze_op11, fixed batch 2), Squeeze without the axes input", ref,
                     layout="NCW")


@case
def reducemean_nhwc_keepdims():
    rng = Rng("reducemean_nhwc_keepdims")
    g = G("reducemean_nhwc_keepdims", 13)
    x = g.input("x", [1, 5, 6, 4])
    g.node("ReduceMean", [x], out="gap", axes=[1, 2], keepdims=1)
    g.node("ReduceMean", [x], out="all", axes=[1, 2, 3], keepdims=1)
    g.node("ReduceMin", [x], out="cmin", axes=[-1], keepdims=0)
    g.output("gap", [1, 1, 1, 4])
    g.output("all", [1, 1, 1, 1])
    g.output("cmin", [1, 5, 6])
    xin = rng.randn(1, 5, 6, 4)

    def ref(xin):
        t = f64(xin)
        return [t.mean(dim=(1, 2), keepdim=True), t.mean(dim=(1, 2, 3), keepdim=True), t.amin(dim=3)]

    return hand_case(g, [xin], "ReduceMean-13 and ReduceMin-13 in NHWC: axes [1,2] keepdims 1 (-> [1,1,1,4]), "
                               "every axis but the batch keepdims 1 (-> [1,1,1,1]) and the minimum over the "
                               "channels keepdims 0 (-> [1,5,6])", ref, layout="NHWC")


@case
def const_ops_nhwc():
    rng = Rng("const_ops_nhwc")
    g = G("const_ops_nhwc", 13)
    c = 4
    k_mul, k_sub, k_div = rng.randn(c), rng.randn(c), rng.uniform(0.5, 2.0, c)
    g.init("k_mul", k_mul)
    g.init("k_sub", k_sub)
    g.init("k_div", k_div)
    g.init("half", np.array(0.5, dtype=np.float32))
    g.init("one", np.array(1.0, dtype=np.float32))
    g.init("four", np.array(4.0, dtype=np.float32))
    x = g.input("x", ["N", 5, 6, c])
    a = g.node("Mul", [x, "k_mul"])
    b = g.node("Add", [a, "half"])
    cc = g.node("Sub", ["one", b])
    d = g.node("Sub", [cc, "k_sub"])
    e = g.node("Div", [d, "four"])
    f = g.node("Div", ["k_div", x])
    g.node("Add", [e, f], out="y")
    g.output("y", ["N", 5, 6, c])
    xin = rng.uniform(0.5, 2.5, 2, 5, 6, c)

    def ref(xin):
        t = f64(xin)
        e = (1.0 - (t * f64(k_mul) + 0.5) - f64(k_sub)) / 4.0
        return [e + f64(k_div) / t]

    return hand_case(g, [xin], "NHWC elementwise with constants: Mul by per-channel [C], Add scalar (rank 0), "
                               "Sub with the scalar on the left and [C] on the right, Div by a scalar, Div with "
                               "the [C] constant on the left (input values in [0.5, 2.5])", ref, layout="NHWC",
                     dyn=True)


@case
def const_ops_nchw():
    rng = Rng("const_ops_nchw")
    g = G("const_ops_nchw", 11)
    c = 3
    k_add, k_mul, k_div = rng.randn(c, 1, 1), rng.randn(1, c, 1, 1), rng.uniform(0.5, 2.0, c, 1, 1)
    g.init("k_add", k_add)
    g.init("k_mul", k_mul)
    g.init("k_div", k_div)
    g.init("two", np.array([2.0], dtype=np.float32))
    g.init("three", np.array([3.0], dtype=np.float32))
    x = g.input("x", [1, c, 5, 6])
    a = g.node("Add", ["k_add", x])
    b = g.node("Mul", ["k_mul", a])
    cc = g.node("Sub", [b, "two"])
    d = g.node("Div", [cc, "k_div"])
    e = g.node("Mul", ["three", d])
    f = g.node("Div", ["two", x])
    g.node("Sub", [e, f], out="y")
    g.output("y", [1, c, 5, 6])
    xin = rng.uniform(0.5, 2.5, 1, c, 5, 6)

    def ref(xin):
        t = f64(xin)
        return [3.0 * ((f64(k_mul) * (f64(k_add) + t) - 2.0) / f64(k_div)) - 2.0 / t]

    return hand_case(g, [xin], "NCHW elementwise with constants on either side: Add [C,1,1] + x, [1,C,1,1] * y, "
                               "Sub [1]-shaped scalar, Div by [C,1,1], [1] * y, [1] / x (input in [0.5, 2.5])", ref)


@case
def div_computed():
    rng = Rng("div_computed")
    g = G("div_computed", 13)
    x = g.input("x", ["N", 3, 4, 5])
    e = g.node("Exp", [x])
    q = g.node("Div", [x, e])
    r = g.node("Reciprocal", [x])
    n = g.node("Neg", [x])
    s = g.node("Add", [q, r])
    g.node("Add", [s, n], out="y")
    g.output("y", ["N", 3, 4, 5])
    xin = rng.uniform(0.5, 2.5, 2, 3, 4, 5)

    def ref(xin):
        t = f64(xin)
        return [t / torch.exp(t) + 1.0 / t - t]

    return hand_case(g, [xin], "Div of two computed tensors (x / exp(x)), Reciprocal and Neg of a computed tensor "
                               "(input in [0.5, 2.5])", ref, dyn=True)


@case
def cast_uint8_nhwc():
    rng = Rng("cast_uint8_nhwc")
    g = G("cast_uint8_nhwc", 13)
    W = rng.randn(4, 3, 3, 3, scale=0.3)
    B = rng.randn(4, scale=0.1)
    g.init("conv_w", W)
    g.init("conv_b", B)
    g.init("mean", np.array(127.5, dtype=np.float32))
    g.init("inv_std", np.array(1.0 / 127.5, dtype=np.float32))
    x = g.input("image", [1, 8, 8, 3], elem=TensorProto.UINT8)
    f = g.node("Cast", [x], to=TensorProto.FLOAT)
    s = g.node("Sub", [f, "mean"])
    m = g.node("Mul", [s, "inv_std"])
    t = g.node("Transpose", [m], perm=[0, 3, 1, 2])
    c = g.node("Conv", [t, "conv_w", "conv_b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    r = g.node("Relu", [c])
    g.node("Transpose", [r], out="features", perm=[0, 2, 3, 1])
    g.output("features", [1, 4, 4, 4])
    xin = rng.g.integers(0, 256, (1, 8, 8, 3), dtype=np.uint8)
    inv = float(np.float32(1.0 / 127.5))

    def ref(xin):
        t = (f64(xin.astype(np.float64)) - 127.5) * inv
        return [F.relu(conv_ref(t.permute(0, 3, 1, 2), W, B, pads=(1, 1, 1, 1), stride=2)).permute(0, 2, 3, 1)]

    return hand_case(g, [xin], "uint8 NHWC image input: Cast to float, Sub 127.5, Mul 1/127.5, Transpose, Conv "
                               "stride 2, Relu, Transpose back", ref, layout="NHWC")


@case
def autopad_same():
    rng = Rng("autopad_same")
    g = G("autopad_same", 11)
    W1, B1 = rng.randn(4, 3, 3, 3, scale=0.4), rng.randn(4, scale=0.1)
    W2 = rng.randn(2, 3, 2, 2, scale=0.4)
    g.init("w1", W1)
    g.init("b1", B1)
    g.init("w2", W2)
    x = g.input("x", [1, 3, 10, 9])
    c1 = g.node("Conv", [x, "w1", "b1"], out="conv_same_upper_s2", kernel_shape=[3, 3], strides=[2, 2],
                auto_pad="SAME_UPPER")
    g.node("Conv", [x, "w2"], out="conv_same_lower_k2", kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    g.node("MaxPool", [c1], out="maxpool_same_upper", kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    g.node("AveragePool", [x], out="avgpool_same_upper", kernel_shape=[3, 3], strides=[2, 2],
           auto_pad="SAME_UPPER")
    g.output("conv_same_upper_s2", [1, 4, 5, 5])
    g.output("conv_same_lower_k2", [1, 2, 10, 9])
    g.output("maxpool_same_upper", [1, 4, 3, 3])
    g.output("avgpool_same_upper", [1, 3, 5, 5])
    xin = rng.randn(1, 3, 10, 9)

    def same_pads(size, k, s, upper):
        out = -(-size // s)
        total = max(0, (out - 1) * s + k - size)
        small, big = total // 2, total - total // 2
        return (small, big) if upper else (big, small)

    def pads4(shape, k, s, upper):
        (t, b), (l, r) = same_pads(shape[0], k, s, upper), same_pads(shape[1], k, s, upper)
        return t, l, b, r

    def ref(xin):
        c1 = conv_ref(xin, W1, B1, pads=pads4((10, 9), 3, 2, True), stride=2)
        c2 = conv_ref(xin, W2, None, pads=pads4((10, 9), 2, 1, False))
        t, l, b, r = pads4((5, 5), 3, 2, True)
        mp = F.max_pool2d(F.pad(c1, (l, r, t, b), value=-np.inf), 3, 2)
        t, l, b, r = pads4((10, 9), 3, 2, True)
        xs = F.pad(f64(xin), (l, r, t, b))
        ones = F.pad(torch.ones(1, 1, 10, 9, dtype=torch.float64), (l, r, t, b))
        ap = F.avg_pool2d(xs, 3, 2) / F.avg_pool2d(ones, 3, 2)
        return [c1, c2, mp, ap]

    return hand_case(g, [xin], "auto_pad (what padding='same' means in ONNX; torch 1.13 cannot export "
                               "padding='same'): Conv k3 s2 SAME_UPPER on 10x9 (extra pad at the end), Conv k2 "
                               "SAME_LOWER (extra pad at the start), MaxPool k3 s2 SAME_UPPER, AveragePool k3 s2 "
                               "SAME_UPPER (count_include_pad 0)", ref)


@case
def gemm_attrs():
    rng = Rng("gemm_attrs")
    g = G("gemm_attrs", 11)
    Bt = rng.randn(3, 6, scale=0.5)
    Cv = rng.randn(3, scale=0.5)
    At = rng.randn(6, 4, scale=0.5)
    g.init("B_t", Bt)
    g.init("C", Cv)
    g.init("A_t", At)
    x = g.input("x", ["N", 6])
    g.node("Gemm", [x, "B_t", "C"], out="y", alpha=0.5, beta=2.0, transB=1)
    g.node("Gemm", ["A_t", x], out="y_t", transA=1, transB=1)
    g.output("y", ["N", 3])
    g.output("y_t", [4, "N"])
    xin = rng.randn(2, 6)

    def ref(xin):
        t = f64(xin)
        return [0.5 * (t @ f64(Bt).T) + 2.0 * f64(Cv), f64(At).T @ t.T]

    return hand_case(g, [xin], "Gemm variants: alpha 0.5, beta 2.0, transB 1 with a [3] C broadcast over rows; "
                               "and a Gemm whose first operand A is the constant (transA 1) and the graph input "
                               "is B (transB 1), without C (optional input absent) -> [4,N]", ref, layout="NC",
                     dyn=True)


@case
def identity_dropout_nodes():
    rng = Rng("identity_dropout_nodes")
    g = G("identity_dropout_nodes", 11)
    x = g.input("x", [1, 3, 4, 4])
    i = g.node("Identity", [x])
    d, _mask = g.node("Dropout", [i], n_out=2, ratio=0.3)
    g.node("Relu", [d], out="y")
    g.output("y", [1, 3, 4, 4])
    xin = rng.randn(1, 3, 4, 4)

    def ref(xin):
        return [F.relu(f64(xin))]

    return hand_case(g, [xin], "explicit Identity and Dropout-10 (ratio 0.3, unused mask output) nodes: both are "
                               "identities at inference", ref)


# ---------------------------------------------------------------------------------------------
# negative cases (tests/data/onnx/bad)


def write_bad(stage, good_models):
    bad = os.path.join(stage, "bad")
    os.makedirs(bad)
    entries = []

    g = G("unknown_op", 11)
    g.init("max_boxes", np.array([3], dtype=np.int64))
    g.init("iou", np.array([0.5], dtype=np.float32))
    boxes = g.input("boxes", [1, 6, 4])
    scores = g.input("scores", [1, 1, 6])
    g.node("NonMaxSuppression", [boxes, scores, "max_boxes", "iou"], out="selected")
    g.output("selected", ["K", 3], elem=TensorProto.INT64)
    write_bytes(os.path.join(bad, "unknown_op.onnx"), g.model().SerializeToString())
    entries.append(dict(file="unknown_op.onnx", expect_substring="NonMaxSuppression",
                        why="valid ONNX (opset 11) whose only node is NonMaxSuppression, an operator the loader "
                            "does not implement; the error should name the operator"))

    src = good_models["conv_bn_relu"]
    trunc = src[:100]
    try:
        onnx.load_from_string(trunc)
        raise SystemExit("truncated model unexpectedly parses")
    except SystemExit:
        raise
    except Exception:
        pass
    write_bytes(os.path.join(bad, "truncated.onnx"), trunc)
    entries.append(dict(file="truncated.onnx", expect_substring="not an ONNX model",
                        why="the first 100 bytes of conv_bn_relu.onnx: the graph field's length prefix runs "
                            "past the end of the file (protobuf parse error)"))

    lfs = ("version https://git-lfs.github.com/spec/v1\n"
           f"oid sha256:{hashlib.sha256(src).hexdigest()}\n"
           f"size {len(src)}\n")
    write_bytes(os.path.join(bad, "model.onnx"), lfs.encode("ascii"))
    entries.append(dict(file="model.onnx", expect_substring="LFS",
                        why="a Git LFS pointer text file (the model was never fetched with git lfs pull); the "
                            "error should say so rather than report a protobuf error"))

    write_bytes(os.path.join(bad, "empty.onnx"), b"")
    entries.append(dict(file="empty.onnx", expect_substring="empty", why="zero-byte file"))

    g = G("external_data", 13)
    x = g.input("x", [1, 4])
    g.init("w", np.zeros((4, 2), dtype=np.float32))
    g.node("MatMul", [x, "w"], out="y")
    g.output("y", [1, 2])
    m = g.model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "32")):
        e = w.external_data.add()
        e.key, e.value = k, v
    write_bytes(os.path.join(bad, "external_data.onnx"), m.SerializeToString())
    entries.append(dict(file="external_data.onnx", expect_substring="external",
                        why="initializer 'w' stored as external data in weights.bin (absent); a loader that "
                            "does not support external data must refuse it instead of reading zero weights"))

    g = G("custom_domain", 13)
    x = g.input("x", [1, 3, 4, 4])
    g.nodes.append(helper.make_node("FusedConv", [x], ["y"], name="FusedConv_1", domain="com.microsoft",
                                    activation="Relu"))
    g.output("y", [1, 3, 4, 4])
    graph = helper.make_graph(g.nodes, g.name, g.inputs, g.outputs)
    m = helper.make_model(graph, producer_name="nnd make_fixtures.py", ir_version=ir_for(13),
                          opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    write_bytes(os.path.join(bad, "custom_domain.onnx"), m.SerializeToString())
    entries.append(dict(file="custom_domain.onnx", expect_substring="com.microsoft",
                        why="a node in the com.microsoft domain (FusedConv, an ONNX Runtime contrib op); the "
                            "error should name the domain"))

    # Recurrent operators with what nnd does not run: each refusal names the attribute or input.
    def lstm_graph(name, extra_inputs=(), attrs=None, T=3, F_=2, H=3):
        g = G(name, 13)
        x = g.input("x", [T, "N", F_])
        g.init("W", np.full((1, 4 * H, F_), 0.1, dtype=np.float32))
        g.init("R", np.full((1, 4 * H, H), 0.1, dtype=np.float32))
        ins = [x, "W", "R"]
        for k, v in extra_inputs:
            if v is None:
                ins.append("")
            else:
                g.init(k, v)
                ins.append(k)
        g.node("LSTM", ins, out="y", hidden_size=H, **(attrs or {}))
        g.output("y", [T, 1, "N", H])
        return g.model().SerializeToString()

    for file, data, want, why in (
        ("lstm_clip.onnx", lstm_graph("lstm_clip", attrs=dict(clip=3.0)), "clip",
         "LSTM with the clip attribute (cell clipping), which nnd does not implement"),
        ("lstm_peephole.onnx", lstm_graph("lstm_peephole", [("B", None), ("lens", None), ("h0", None), ("c0", None),
                                                            ("P", np.full((1, 9), 0.5, dtype=np.float32))]),
         "peephole", "LSTM with non-zero peephole weights P"),
        ("lstm_short_sequence.onnx", lstm_graph("lstm_short_sequence", [("B", None),
                                                                        ("lens", np.array([2], dtype=np.int32))]),
         "sequence_lens", "LSTM whose sequence_lens (2) is shorter than the 3 steps of X"),
        ("lstm_input_forget.onnx", lstm_graph("lstm_input_forget", attrs=dict(input_forget=1)), "input_forget",
         "LSTM with coupled input and forget gates"),
        ("lstm_mixed_activations.onnx", lstm_graph("lstm_mixed_activations",
                                                   attrs=dict(activations=["Sigmoid", "Tanh", "Relu"])),
         "differ", "LSTM whose g and h activations differ (Tanh, Relu)"),
    ):
        write_bytes(os.path.join(bad, file), data)
        entries.append(dict(file=file, expect_substring=want, why=why))

    manifest = {"generator": GENERATOR,
                "note": "expect_substring values are proposals for the loader's error messages; adjust them to "
                        "the loader's wording if it differs",
                "cases": entries}
    write_json(os.path.join(bad, "manifest.json"), manifest)
    return entries


# ---------------------------------------------------------------------------------------------
# driver


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def json_text(obj, level=0):
    """JSON with one key per line but lists of scalars (shapes, covers) kept on one line."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {json_text(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(inner + json_text(v, level + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json_text(obj) + "\n")


def save_npy(path, array):
    with open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(array), allow_pickle=False)


def export_torch(c, name):
    m = c["module"].eval()
    args = tuple(torch.from_numpy(a) for a in c["inputs"])
    dyn_axes = c["dynamic_axes"]
    in_names, out_names = c["input_names"], c["output_names"]
    if c["dyn"] and dyn_axes is None:
        if in_names is None:
            in_names = ["x"] if len(args) == 1 else [f"x{i}" for i in range(len(args))]
        if out_names is None:
            out_names = ["y"]
        dyn_axes = {n: {0: "N"} for n in in_names + out_names}
    if dyn_axes is not None and in_names is None:
        in_names = ["x"]
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, args, f, opset_version=c["opset"], training=c["training"],
                          do_constant_folding=c["fold"], input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn_axes)
    data = f.getvalue()
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    with torch.no_grad():
        m64 = copy.deepcopy(m).double().eval()
        out = m64(*[torch.from_numpy(a).double() for a in c["inputs"]])
    expected = [o.detach().numpy() for o in flatten_outputs(out)]
    if len(expected) != len(model.graph.output):
        raise SystemExit(f"{name}: torch returns {len(expected)} outputs, the ONNX graph has "
                         f"{len(model.graph.output)}")
    return data, model, expected


def run_ort(jobs, workdir):
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        print("installing onnxruntime-node (npm ci --ignore-scripts)", flush=True)
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    jobs_file = os.path.join(workdir, "jobs.json")
    write_json(jobs_file, {"jobs": jobs})
    res = subprocess.run(["node", os.path.join(HERE, "ort_expected.mjs"), jobs_file],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("ort_expected.mjs failed:\n" + res.stderr[-4000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def is_index(a):
    return a.dtype == np.int64


def within(actual, expected):
    if is_index(expected) or is_index(actual):  # ArgMax indices agree only when equal
        return actual.dtype == expected.dtype and bool(np.array_equal(actual, expected))
    return bool(np.all(np.abs(actual.astype(np.float64) - expected.astype(np.float64))
                       <= RTOL * np.maximum(1.0, np.abs(expected.astype(np.float64)))))


def max_abs(a, b):
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="regex: build and check only matching cases into a scratch dir")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    selected = [fn for fn in CASES if args.only is None or re.search(args.only, fn.__name__)]
    if not selected:
        raise SystemExit("no case matches")
    names = [fn.__name__ for fn in CASES]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate case names")

    work = tempfile.mkdtemp(prefix="onnx_fixtures.")
    try:
        stage = os.path.join(work, "stage")
        ortdir = os.path.join(work, "ort")
        os.makedirs(stage)
        os.makedirs(ortdir)

        built, jobs, good_models = [], [], {}
        for fn in selected:
            name = fn.__name__
            c = fn()
            if c["kind"] == "torch":
                data, model, expected = export_torch(c, name)
            else:
                model = c["model"]
                data = model.SerializeToString()
                expected = None
            good_models[name] = data
            write_bytes(os.path.join(stage, f"{name}.onnx"), data)
            init_names = {t.name for t in model.graph.initializer}
            graph_inputs = [vi for vi in model.graph.input if vi.name not in init_names]
            if len(graph_inputs) != len(c["inputs"]):
                raise SystemExit(f"{name}: {len(graph_inputs)} graph inputs, {len(c['inputs'])} arrays")
            ins = []
            for i, (vi, a) in enumerate(zip(graph_inputs, c["inputs"])):
                fname = f"{name}.in.{i}.npy"
                save_npy(os.path.join(stage, fname), a)
                ins.append(dict(name=vi.name, file=fname, dtype=str(a.dtype), shape=list(a.shape),
                                onnx_shape=dims_of(vi)))
            outs = [dict(name=vo.name, file=f"{name}.out.{i}.npy", onnx_shape=dims_of(vo))
                    for i, vo in enumerate(model.graph.output)]
            jobs.append(dict(model=os.path.join(stage, f"{name}.onnx"),
                             inputs=[dict(name=i["name"], file=os.path.join(stage, i["file"])) for i in ins],
                             outputs=[dict(name=o["name"], file=os.path.join(ortdir, o["file"])) for o in outs]))
            built.append((name, c, model, ins, outs, expected))

        ort_info = run_ort(jobs, work)
        ort_ver = ort_info["ort_version"]
        ort_label = "onnxruntime " + ".".join(ort_ver.split(".")[:2])

        manifest_cases = []
        failures = []
        for name, c, model, ins, outs, expected in built:
            ort_outs = [np.load(os.path.join(ortdir, o["file"])) for o in outs]
            if c["kind"] == "torch":
                exp32 = [e if is_index(e) else e.astype(np.float32) for e in expected]
                against, ok, diff = "onnxruntime", True, 0.0
                for e64, o in zip(expected, ort_outs):
                    if tuple(e64.shape) != tuple(o.shape):
                        failures.append(f"{name}: torch shape {e64.shape} vs ORT {o.shape}")
                        ok = False
                        continue
                    diff = max(diff, max_abs(o, e64))
                    ok = ok and within(o, e64)
                final = exp32
                expected_from = "torch float64"
            else:
                final = ort_outs
                refs = c["ref"](*c["inputs"])
                against, ok, diff = "float64 reference", True, 0.0
                for r, o in zip(refs, ort_outs):
                    r = r.numpy() if isinstance(r, torch.Tensor) else np.asarray(r)
                    if tuple(r.shape) != tuple(o.shape):
                        failures.append(f"{name}: reference shape {r.shape} vs ORT {o.shape}")
                        ok = False
                        continue
                    diff = max(diff, max_abs(o, r))
                    ok = ok and within(o, r)
                expected_from = ort_label
            if not ok:
                failures.append(f"{name}: ORT vs {against} beyond {RTOL} * max(1, |expected|): max abs {diff:.3g}")
            for o, arr in zip(outs, final):
                save_npy(os.path.join(stage, o["file"]), arr if is_index(arr) else arr.astype(np.float32))
                o["shape"] = list(arr.shape)
            covers = op_types(model)
            opset = next(op.version for op in model.opset_import if op.domain in ("", "ai.onnx"))
            entry = {
                "name": name,
                "model": f"{name}.onnx",
                "opset": opset,
                "layout": c["layout"],
                "expected_from": expected_from,
                "covers": covers,
                "desc": c["desc"],
                "dynamic_batch": bool(c["dyn"]),
            }
            if c["kind"] == "torch":
                entry["constant_folding"] = bool(c["fold"])
                entry["training_mode"] = "PRESERVE (module in eval mode)" if c["training"] == PRESERVE else "EVAL"
            if c["later"]:
                entry["later"] = True
            entry["inputs"] = ins
            entry["outputs"] = [dict(name=o["name"], file=o["file"], shape=o["shape"], onnx_shape=o["onnx_shape"])
                                for o in outs]
            entry["crosscheck"] = {"against": ort_label if c["kind"] == "torch" else "float64 reference "
                                   "(numpy/torch in make_fixtures.py)", "max_abs_diff": float(f"{diff:.3g}")}
            manifest_cases.append(entry)
            vs = "|torch-ort|" if c["kind"] == "torch" else "|ort-ref64|"
            print(f"{'FAIL' if not ok else 'ok  '} {name:28s} opset {opset:2d} {'dyn N' if c['dyn'] else 'N=1  '} "
                  f"max{vs}={diff:.2e} max|y|={max(float(np.max(np.abs(a))) if a.size else 0.0 for a in final):.3g}  "
                  f"{','.join(covers)}", flush=True)

        if failures:
            for f in failures:
                print("error:", f, file=sys.stderr)
            raise SystemExit(1)

        if args.only is not None:
            print(f"--only: checked {len(built)} case(s); nothing written")
            return

        bad = write_bad(stage, good_models)
        write_json(os.path.join(stage, "manifest.json"),
                   {"generator": GENERATOR, "cases": manifest_cases})

        sync(stage, args.out)
        total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(args.out) for f in fs)
        print(f"wrote {len(manifest_cases)} cases + {len(bad)} bad files to {os.path.relpath(args.out, REPO)} "
              f"({total / 1024:.0f} KiB), {ort_label}, torch {torch.__version__}, onnx {onnx.__version__}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sync(stage, out):
    """Make `out` hold exactly the staged files (only removes files this generator writes)."""
    for sub in ("", "bad"):
        src, dst = os.path.join(stage, sub), os.path.join(out, sub)
        os.makedirs(dst, exist_ok=True)
        wanted = set(os.listdir(src)) - ({"bad"} if sub == "" else set())
        for f in os.listdir(dst):
            p = os.path.join(dst, f)
            if os.path.isfile(p) and f not in wanted and (f.endswith((".onnx", ".npy", ".json")) or sub == "bad") \
                    and f != "README.md":
                os.remove(p)
        for f in sorted(wanted):
            shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))


if __name__ == "__main__":
    main()
