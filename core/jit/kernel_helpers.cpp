#include "core/jit/kernel_helpers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ir/activation.h"
#include "core/ref/activation_math.h"

namespace nnd::jit {

namespace {

void softmax_block(float* out, const float* in, int64_t len, int64_t inner, bool log) {
  for (int64_t j = 0; j < inner; ++j) {
    double m = -INFINITY;
    for (int64_t i = 0; i < len; ++i) m = std::max(m, static_cast<double>(in[i * inner + j]));
    double sum = 0;
    for (int64_t i = 0; i < len; ++i) sum += std::exp(static_cast<double>(in[i * inner + j]) - m);
    const double ls = std::log(sum);
    for (int64_t i = 0; i < len; ++i) {
      const double x = static_cast<double>(in[i * inner + j]) - m;
      out[i * inner + j] = static_cast<float>(log ? x - ls : std::exp(x) / sum);
    }
  }
}

// Called from generated code: must not throw (noexcept boundary).
void helper_unary(float* out, const float* in, int64_t count, const float* params) noexcept {
  const auto tag = static_cast<HelperTag>(static_cast<int>(params[0]));
  switch (tag) {
    case HelperTag::kActivation: {
      const auto k = static_cast<ActivationKind>(static_cast<int>(params[1]));
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(ref::activation_scalar(k, in[i]));
      break;
    }
    case HelperTag::kElu: {
      const double alpha = params[1];
      for (int64_t i = 0; i < count; ++i) {
        const double x = in[i];
        out[i] = static_cast<float>(x > 0 ? x : alpha * std::expm1(x));
      }
      break;
    }
    case HelperTag::kThresholdedRelu: {
      const double theta = params[1];
      for (int64_t i = 0; i < count; ++i) out[i] = in[i] > theta ? in[i] : 0.0f;
      break;
    }
    case HelperTag::kRelu: {
      const double mx = params[1], slope = params[2], thr = params[3];
      for (int64_t i = 0; i < count; ++i) {
        const double x = in[i];
        out[i] = static_cast<float>(x >= mx ? mx : x >= thr ? x : slope * (x - thr));
      }
      break;
    }
    case HelperTag::kSoftmax:
    case HelperTag::kLogSoftmax: {
      const auto len = static_cast<int64_t>(params[1]), inner = static_cast<int64_t>(params[2]);
      const int64_t block = len * inner;
      for (int64_t b = 0; b + block <= count; b += block) {
        softmax_block(out + b, in + b, len, inner, tag == HelperTag::kLogSoftmax);
      }
      break;
    }
  }
}

const HelperFn kTable[] = {&helper_unary};

}  // namespace

const HelperFn* helper_table() { return kTable; }

}  // namespace nnd::jit
