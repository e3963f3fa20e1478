// npy_agree GOT.npy WANT.npy [TOL]: exit 0 when both arrays have the same shape and
// max |got - want| / max(1, |want|) <= TOL (default 1e-5, the fixture rule), 1 otherwise (the
// worst element is printed), 2 for a usage or file error. The memcheck runs of nnrun use it to
// prove that nnrun under valgrind computed the same outputs as nnrun run natively.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/io/npy.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s GOT.npy WANT.npy [TOL]\n", argv[0]);
    return 2;
  }
  const double tol = argc == 4 ? std::strtod(argv[3], nullptr) : 1e-5;
  try {
    const nnd::NpyArray got = nnd::read_npy(argv[1]);
    const nnd::NpyArray want = nnd::read_npy(argv[2]);
    if (got.shape != want.shape || got.dtype != nnd::DType::kFloat32 ||
        want.dtype != nnd::DType::kFloat32) {
      std::printf("npy_agree: %s and %s differ in shape or are not float32\n", argv[1], argv[2]);
      return 1;
    }
    double worst = 0.0;
    int64_t at = -1;
    for (int64_t i = 0; i < got.element_count(); ++i) {
      const double g = got.f32()[i], w = want.f32()[i];
      double e = 0.0;  // equal values, equal infinities and NaN vs NaN agree
      if (std::isnan(g) || std::isnan(w)) {
        e = std::isnan(g) && std::isnan(w) ? 0.0 : INFINITY;
      } else if (g != w) {
        e = std::isfinite(g) && std::isfinite(w) ? std::fabs(g - w) / std::max(1.0, std::fabs(w))
                                                 : INFINITY;
      }
      if (e > worst) worst = e, at = i;
    }
    const bool ok = worst <= tol;
    std::printf("npy_agree: %s vs %s: %lld values, max scaled error %.3g%s", argv[1], argv[2],
                static_cast<long long>(got.element_count()), worst, ok ? "\n" : "");
    if (!ok) {
      std::printf(" > %.3g at %lld (%.9g vs %.9g)\n", tol, static_cast<long long>(at),
                  got.f32()[at], want.f32()[at]);
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npy_agree: %s\n", e.what());
    return 2;
  }
}
