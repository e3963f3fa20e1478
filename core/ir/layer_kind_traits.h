// Per-kind traits of the IR's layer kinds, and the tools that make every per-kind dispatch
// exhaustive: adding an alternative to LayerParams without a name here, a cost (cost.cpp), a dump
// (dump.cpp), a reference implementation (core/ref/reference_engine.cpp) and a decision in every
// graph pass that classifies kinds is a compile error, not a silent 0 or an empty dump.
//
// A per-kind dispatch is a visitor with one overload per kind and no catch-all:
//
//   struct FlopCounter {
//     int64_t operator()(const DenseParams& p) const { ... }
//     ...                                        // one per LayerParams alternative
//   };
//   static_assert(ExhaustiveLayerVisitor<FlopCounter>);
//
// Kinds that share an answer list themselves by name in KindsReturning<value, Kinds...>, which is
// still exhaustive: a kind nobody listed has no overload.
#pragma once

#include <concepts>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/ir/layers.h"

namespace nnd {

// Specialised once per LayerParams alternative below; the primary template has no definition, so
// a kind without traits does not compile where its traits are asked for.
template <class Params>
struct LayerKindTraits;

#define NND_LAYER_KIND(Params, kind_name)                 \
  template <>                                             \
  struct LayerKindTraits<Params> {                        \
    static constexpr const char* name = kind_name;        \
  }

NND_LAYER_KIND(DenseParams, "Dense");
NND_LAYER_KIND(ConvParams, "Conv");
NND_LAYER_KIND(DepthwiseConvParams, "DepthwiseConv");
NND_LAYER_KIND(SeparableConvParams, "SeparableConv");
NND_LAYER_KIND(ConvTransposeParams, "ConvTranspose");
NND_LAYER_KIND(BatchNormParams, "BatchNorm");
NND_LAYER_KIND(LayerNormParams, "LayerNorm");
NND_LAYER_KIND(ActivationParams, "Activation");
NND_LAYER_KIND(ReluParams, "Relu");
NND_LAYER_KIND(EluParams, "Elu");
NND_LAYER_KIND(ThresholdedReluParams, "ThresholdedRelu");
NND_LAYER_KIND(PReluParams, "PRelu");
NND_LAYER_KIND(SoftmaxParams, "Softmax");
NND_LAYER_KIND(PoolParams, "Pool");
NND_LAYER_KIND(GlobalPoolParams, "GlobalPool");
NND_LAYER_KIND(FlattenParams, "Flatten");
NND_LAYER_KIND(ReshapeParams, "Reshape");
NND_LAYER_KIND(PermuteParams, "Permute");
NND_LAYER_KIND(RepeatVectorParams, "RepeatVector");
NND_LAYER_KIND(IdentityParams, "Identity");
NND_LAYER_KIND(ZeroPaddingParams, "ZeroPadding");
NND_LAYER_KIND(CroppingParams, "Cropping");
NND_LAYER_KIND(UpSamplingParams, "UpSampling");
NND_LAYER_KIND(MergeParams, "Merge");
NND_LAYER_KIND(ConcatParams, "Concat");
NND_LAYER_KIND(RecurrentParams, "Recurrent");
NND_LAYER_KIND(ResizeParams, "Resize");
NND_LAYER_KIND(GatherParams, "Gather");
NND_LAYER_KIND(ArgMaxParams, "ArgMax");
NND_LAYER_KIND(MatMulParams, "MatMul");
NND_LAYER_KIND(ConstantParams, "Constant");
NND_LAYER_KIND(QuantizeParams, "Quantize");
NND_LAYER_KIND(DequantizeParams, "Dequantize");
NND_LAYER_KIND(QConvParams, "QConv");
NND_LAYER_KIND(QDenseParams, "QDense");

#undef NND_LAYER_KIND

template <class Params>
concept HasLayerKindTraits = requires {
  { LayerKindTraits<Params>::name } -> std::convertible_to<const char*>;
};

namespace layer_kind_detail {

// A type no visitor may accept: one that does has a catch-all overload (a generic lambda, an
// unconstrained template), which would hide a forgotten kind.
struct NotALayerKind {};

template <class Variant>
struct AllKindsHaveTraits;
template <class... Ps>
struct AllKindsHaveTraits<std::variant<Ps...>> : std::bool_constant<(HasLayerKindTraits<Ps> && ...)> {};

template <class Visitor, class Variant>
struct VisitsEveryKind;
template <class Visitor, class... Ps>
struct VisitsEveryKind<Visitor, std::variant<Ps...>>
    : std::bool_constant<(std::is_invocable_v<Visitor&, Ps&> && ...)> {};

}  // namespace layer_kind_detail

static_assert(layer_kind_detail::AllKindsHaveTraits<LayerParams>::value,
              "every LayerParams alternative needs a LayerKindTraits specialisation");

// One overload for every LayerParams alternative, and none for anything else.
template <class Visitor>
concept ExhaustiveLayerVisitor =
    layer_kind_detail::VisitsEveryKind<Visitor, LayerParams>::value &&
    !std::is_invocable_v<Visitor&, layer_kind_detail::NotALayerKind&>;

// A visitor built from one lambda (or KindsReturning) per kind.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// The same answer for the named kinds, and only for them.
template <auto kValue, class... Kinds>
struct KindsReturning {
  template <class P>
    requires(std::is_same_v<std::remove_const_t<P>, Kinds> || ...)
  constexpr auto operator()(P&) const {
    return kValue;
  }
};

// Result{} (an empty optional, false, 0) for the named kinds, and only for them: for results that
// cannot be template arguments.
template <class Result, class... Kinds>
struct KindsReturningDefault {
  template <class P>
    requires(std::is_same_v<std::remove_const_t<P>, Kinds> || ...)
  constexpr Result operator()(P&) const {
    return Result{};
  }
};

// std::visit with a visitor checked to be exhaustive.
template <class Visitor, class Params>
  requires std::is_same_v<std::remove_cvref_t<Params>, LayerParams>
decltype(auto) visit_layer(Visitor&& v, Params&& params) {
  static_assert(ExhaustiveLayerVisitor<std::remove_cvref_t<Visitor>>,
                "a per-kind visitor needs one overload per LayerParams alternative and no catch-all");
  return std::visit(std::forward<Visitor>(v), std::forward<Params>(params));
}

}  // namespace nnd
