#include "core/ir/layers.h"

namespace nnd {

namespace {
// Indexed like LayerParams' alternatives; the static_assert below keeps the two in step.
constexpr const char* kKindNames[] = {
    "Dense",   "Conv",       "DepthwiseConv", "SeparableConv",  "ConvTranspose",
    "BatchNorm", "LayerNorm", "Activation",   "Relu",           "Elu",
    "ThresholdedRelu", "PRelu", "Softmax",    "Pool",           "GlobalPool",
    "Flatten", "Reshape",    "Permute",       "RepeatVector",   "Identity",
    "ZeroPadding", "Cropping", "UpSampling",  "Merge",          "Concat",
    "Recurrent", "Resize",     "Gather",
};
static_assert(std::size(kKindNames) == std::variant_size_v<LayerParams>,
              "every LayerParams alternative needs a name");
}  // namespace

const char* layer_kind_name(const LayerParams& p) { return kKindNames[p.index()]; }

}  // namespace nnd
