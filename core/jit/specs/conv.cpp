// The conv/GEMM weight layout (specs/conv.h) and the activations its epilogue fuses.
#include "core/jit/specs/conv.h"

#include <algorithm>

#include "core/util/checked_math.h"

namespace nnd::jit {

bool act_fusable(ActivationKind k) {
  return k == ActivationKind::kLinear || k == ActivationKind::kRelu || k == ActivationKind::kRelu6;
}

void pack_conv_weights(ConvSpec& s, int width, const std::vector<float>& kernel, const std::vector<float>* bias,
                       std::vector<float>& blob) {
  const int64_t cw = int64_t{s.blocking.vmax} * width, nb = ceil_div(s.cout_g, cw);
  const int64_t filters = s.cout_g * s.groups;
  s.group_weight_off.clear();
  s.group_bias_off.clear();
  auto align = [&] { blob.resize((blob.size() + 15) / 16 * 16, 0.0f); };
  for (int64_t g = 0; g < s.groups; ++g) {
    align();
    s.group_weight_off.push_back(static_cast<int64_t>(blob.size()));
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t vb = std::min<int64_t>(s.blocking.vmax, ceil_div(s.cout_g - b * cw, width));
      for (int64_t kh = 0; kh < s.kh; ++kh) {
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          for (int64_t ci = 0; ci < s.cin_g; ++ci) {
            for (int64_t j = 0; j < vb * width; ++j) {
              const int64_t oc = b * cw + j;
              blob.push_back(oc < s.cout_g
                                 ? kernel[static_cast<size_t>(((kh * s.kw + kw) * s.cin_g + ci) * filters + g * s.cout_g + oc)]
                                 : 0.0f);
            }
          }
        }
      }
    }
    align();
    s.group_bias_off.push_back(static_cast<int64_t>(blob.size()));
    for (int64_t j = 0; j < nb * cw; ++j) {
      blob.push_back(bias && j < s.cout_g ? (*bias)[static_cast<size_t>(g * s.cout_g + j)] : 0.0f);
    }
  }
}

// Whether the groups' weight and bias blocks are evenly spaced (as pack_conv_weights lays them out),
// so that one copy of the group's code can loop over them at run time.
bool uniform_groups(const ConvSpec& s) {
  if (s.groups < 2 || s.group_weight_off.size() != static_cast<size_t>(s.groups) ||
      s.group_bias_off.size() != static_cast<size_t>(s.groups)) {
    return false;
  }
  const int64_t dw = s.group_weight_off[1] - s.group_weight_off[0], db = s.group_bias_off[1] - s.group_bias_off[0];
  for (size_t g = 1; g < s.group_weight_off.size(); ++g) {
    if (s.group_weight_off[g] - s.group_weight_off[g - 1] != dw || s.group_bias_off[g] - s.group_bias_off[g - 1] != db) {
      return false;
    }
  }
  return dw == db;
}

}  // namespace nnd::jit
