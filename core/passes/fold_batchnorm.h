// fold_batchnorm: removes BatchNormalization nodes by folding their per-channel affine
// y = s * x + t (s = gamma / sqrt(var + eps), t = beta - mean * s) into a neighbouring linear layer.
//
// Backward (producer side): BN(P(x)) with P a Conv/DepthwiseConv/SeparableConv/Dense whose only
// reader is the BN, with linear activation and no fused residual, and the BN over the last
// (channel) axis:
//     s * (W x + b) + t = (s W) x + (s b + t)
// exactly, for every output position, padding or not (the scale multiplies whole outputs).
//
// Forward (consumer side), for BN after the activation as in Conv -> ReLU -> BN -> Conv: BN whose
// output is read only by one Conv (any groups) or Dense node (as its data input):
//     C(s * x + t) = sum over taps k inside the input of W_k (s x_k + t)
//                  = (W s) x + sum over taps inside the input of W_k t
// The last sum is the same constant b' - b for every output position only when no tap of any
// output position falls into the zero padding: the padded zeros are zeros of the BN *output*
// (C pads s x + t with 0, not with t), so a folded C' would see s*0 + (t folded into the bias)
// where the original saw 0. Hence forward folding is done only when
//   - the consumer reads no padding (valid padding, or same/causal padding that works out to
//     zero pad on both axes), or t == 0 for every channel (then padding is harmless), and
//   - the BN output has no other reader (else the BN would have to stay anyway).
// Dense has no padding, so folding into Dense (over the last axis) is always exact.
// Depthwise/Separable consumers are not forward-folded (the BN stays; the JIT runs it as one
// affine kernel, with a following ReLU fused into it by fuse_activation).
//
// The algebra is done in double from the float weights and rounded to float once per weight.
#pragma once

#include <vector>

#include "core/passes/pass.h"

namespace nnd::passes {

// Per-channel scale and shift of an inference BatchNorm, in double.
struct ChannelAffine {
  std::vector<double> scale, shift;
};
ChannelAffine batchnorm_affine(const BatchNormParams& bn);

// Output side: kernel whose innermost C contiguous elements run over the C output channels
// (Conv (kh,kw,cin_g,C), Dense (in,C), pointwise (1,1,mid,C), Depthwise (kh,kw,cin,dm) with
// C = cin*dm): kernel *= s[c], bias = s * bias + t (bias created when empty).
void fold_affine_into_outputs(const ChannelAffine& a, Weights& kernel, Weights& bias);

// Input side of a grouped convolution kernel (kh, kw, cin_g, filters) with `groups` groups (Dense:
// (in, units), groups 1): kernel[.., ci, f] *= s[g*cin_g + ci] and
// bias[f] += sum over kh, kw, ci of kernel[.., ci, f] * t[g*cin_g + ci] (exact only without padding
// taps; see the header comment).
void fold_affine_into_inputs(const ChannelAffine& a, int64_t groups, Weights& kernel, Weights& bias);

// True when a Conv with this window over an input of spatial size (h, w) reads no padding.
bool conv_reads_no_padding(const Window& win, int64_t h, int64_t w);

class FoldBatchNorm final : public Pass {
 public:
  std::string name() const override { return "fold_batchnorm"; }
  bool run(Graph& g) override;
};

}  // namespace nnd::passes
