#include "core/ir/layers.h"

#include "core/ir/layer_kind_traits.h"

namespace nnd {

const char* layer_kind_name(const LayerParams& p) {
  // Generic on purpose: LayerKindTraits<T> has no primary definition, so a kind without a name
  // does not compile here.
  return std::visit([](const auto& q) { return LayerKindTraits<std::decay_t<decltype(q)>>::name; }, p);
}

}  // namespace nnd
