// Keras preprocessing and augmentation layers: each is loaded from its config (load_keras_json),
// run by the reference engine and the JIT, and compared with the Keras formula evaluated here in
// double precision (Rescaling: x * scale + offset; Normalization: (x - mean) / max(sqrt(var),
// 1e-7) and its inverse; CenterCrop: the centred window, offsets rounded down; Resizing by whole
// factors, nearest: each pixel repeated; to any size as tf.image.resize computes it; Random*: the
// identity at inference). Unsupported forms are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/keras_hdf5.h"
#include "core/io/model_file.h"
#include "core/util/error.h"
#include "tests/support/engines_here.h"
#include "tests/support/keras_config_json.h"

namespace nnd {
namespace {

using json = nlohmann::json;

// input (shape) -> layer(cls, cfg) -> output, in the Keras 3 dialect.
std::string one_layer(const std::string& cls, json cfg, const std::vector<int64_t>& shape) {
  return test::k3_one_layer_model(cls, std::move(cfg), shape);
}

size_t count(const Dims& d) {
  size_t n = 1;
  for (int64_t e : d) n *= static_cast<size_t>(e);
  return n;
}

// Runs `g` on `x` (one sample) with the reference engine and with the JIT where the build has one
// (engines_here()); every engine's result.
std::vector<std::vector<float>> run_both(const Graph& g, const std::vector<float>& x) {
  std::vector<std::vector<float>> out;
  for (EngineKind kind : test::engines_here(g)) {
    EngineOptions o;
    o.engine = kind;
    auto engine = make_engine(g, o);
    std::vector<float> y(count(g.values[static_cast<size_t>(g.outputs[0])].shape));
    const InputView in{DType::kFloat32, x.data()};
    float* const ptr = y.data();
    engine->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&ptr, 1));
    out.push_back(std::move(y));
  }
  return out;
}

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// Expects every engine's output to equal `want` within 1e-6 relative.
void expect_outputs(const Graph& g, const std::vector<float>& x, const std::vector<double>& want) {
  for (const std::vector<float>& y : run_both(g, x)) {
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR(y[i], want[i], 1e-6 * std::max(1.0, std::fabs(want[i]))) << "element " << i;
    }
  }
}

Graph load(const std::string& text) { return load_keras_json(text, "3.4.1", "pre.json"); }

std::string error_of(const std::string& text) {
  try {
    load(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KerasPreprocessing, RescalingScalarAndPerChannel) {
  const std::vector<float> x = ramp(4 * 5 * 3, 0.0f, 4.0f);
  {
    Graph g = load(one_layer("Rescaling", {{"scale", 1.0 / 255}, {"offset", -1.0}}, {4, 5, 3}));
    std::vector<double> want;
    for (float v : x) want.push_back(v * (1.0 / 255) - 1.0);
    expect_outputs(g, x, want);
  }
  {
    Graph g = load(one_layer("Rescaling", {{"scale", {0.5, 2.0, -1.0}}, {"offset", {1.0, 0.0, 3.0}}}, {4, 5, 3}));
    const double s[3] = {0.5, 2.0, -1.0}, o[3] = {1.0, 0.0, 3.0};
    std::vector<double> want;
    for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] * s[i % 3] + o[i % 3]);
    expect_outputs(g, x, want);
  }
  EXPECT_NE(error_of(one_layer("Rescaling", {{"scale", {1.0, 2.0}}}, {4, 5, 3})).find("scale: 2 values for 3 channels"),
            std::string::npos);
}

TEST(KerasPreprocessing, NormalizationAndItsInverse) {
  const std::vector<float> x = ramp(6 * 3, -2.0f, 0.37f);
  const double mean[3] = {1.0, -2.0, 0.5}, var[3] = {4.0, 0.0, 0.25};
  for (bool invert : {false, true}) {
    SCOPED_TRACE(invert ? "invert" : "normalize");
    Graph g = load(one_layer("Normalization",
                             {{"axis", -1}, {"mean", {1.0, -2.0, 0.5}}, {"variance", {4.0, 0.0, 0.25}}, {"invert", invert}},
                             {6, 3}));
    std::vector<double> want;
    for (size_t i = 0; i < x.size(); ++i) {
      const double sd = std::max(std::sqrt(var[i % 3]), 1e-7);
      want.push_back(invert ? x[i] * sd + mean[i % 3] : (x[i] - mean[i % 3]) / sd);
    }
    expect_outputs(g, x, want);
  }
  // Fitted with adapt(): the statistics are weights (tests/data/fixtures normalization_adapted has
  // them); without a weights file they are zeros, and the layer still maps.
  EXPECT_NO_THROW(load(one_layer("Normalization", {{"axis", -1}, {"mean", nullptr}, {"variance", nullptr}}, {6, 3})));
  EXPECT_NE(error_of(one_layer("Normalization", {{"axis", -1}, {"mean", 0.5}}, {6, 3}))
                .find("mean: is given without variance"),
            std::string::npos);
  EXPECT_NE(error_of(one_layer("Normalization", {{"axis", 1}, {"mean", 0.0}, {"variance", 1.0}}, {6, 3}))
                .find("axis: 1 is not supported"),
            std::string::npos);
}

TEST(KerasPreprocessing, CenterCropTakesTheCentredWindow) {
  const int64_t H = 7, W = 8, C = 2, h = 4, w = 5;
  const std::vector<float> x = ramp(H * W * C, 0.0f, 1.0f);
  Graph g = load(one_layer("CenterCrop", {{"height", h}, {"width", w}}, {H, W, C}));
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{h, w, C}));
  const int64_t top = (H - h) / 2, left = (W - w) / 2;  // 1 and 1
  std::vector<double> want;
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j)
      for (int64_t c = 0; c < C; ++c) want.push_back(x[static_cast<size_t>(((top + i) * W + left + j) * C + c)]);
  expect_outputs(g, x, want);
  EXPECT_NE(error_of(one_layer("CenterCrop", {{"height", 9}, {"width", 5}}, {H, W, C})).find("smaller than the crop"),
            std::string::npos);
}

TEST(KerasPreprocessing, ResizingByWholeFactors) {
  const int64_t H = 3, W = 4, C = 2;
  const std::vector<float> x = ramp(H * W * C, 1.0f, 0.5f);
  Graph g = load(one_layer("Resizing", {{"height", 6}, {"width", 12}, {"interpolation", "nearest"}}, {H, W, C}));
  std::vector<double> want;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 12; ++j)
      for (int64_t c = 0; c < C; ++c) want.push_back(x[static_cast<size_t>(((i / 2) * W + j / 3) * C + c)]);
  expect_outputs(g, x, want);

  // Bilinear is the IR's half-pixel bilinear upsampling (its formula is tested with UpSampling2D).
  Graph b = load(one_layer("Resizing", {{"height", 6}, {"width", 8}}, {H, W, C}));
  const auto* up = std::get_if<UpSamplingParams>(&b.nodes.back().params);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->size_h, 2);
  EXPECT_EQ(up->size_w, 2);
  EXPECT_EQ(up->interpolation, Interpolation::kBilinear);

  Graph same = load(one_layer("Resizing", {{"height", 3}, {"width", 4}}, {H, W, C}));
  expect_outputs(same, x, std::vector<double>(x.begin(), x.end()));

  EXPECT_NE(error_of(one_layer("Resizing", {{"height", 6}, {"width", 8}, {"interpolation", "bicubic"}}, {H, W, C}))
                .find("interpolation: 'bicubic' is not supported"),
            std::string::npos);
}

// Sizes that are no whole-number enlargement, as TensorFlow's resize kernels compute them:
// nearest reads floor((i + 0.5) * in / out) (half_pixel_centers, capped at in - 1); bilinear reads
// (i + 0.5) * in / out - 0.5, clamped to the input, between its floor and the next element.
TEST(KerasPreprocessing, ResizingToAnySize) {
  const int64_t H = 5, W = 4, C = 2, OH = 3, OW = 7;
  const std::vector<float> x = ramp(H * W * C, -1.0f, 0.37f);
  auto at = [&](int64_t i, int64_t j, int64_t c) { return static_cast<double>(x[static_cast<size_t>((i * W + j) * C + c)]); };
  std::vector<double> nearest, bilinear;
  for (int64_t i = 0; i < OH; ++i) {
    for (int64_t j = 0; j < OW; ++j) {
      const int64_t ni = std::min<int64_t>(static_cast<int64_t>(std::floor((i + 0.5) * H / OH)), H - 1);
      const int64_t nj = std::min<int64_t>(static_cast<int64_t>(std::floor((j + 0.5) * W / OW)), W - 1);
      const double si = std::clamp((i + 0.5) * H / OH - 0.5, 0.0, H - 1.0);
      const double sj = std::clamp((j + 0.5) * W / OW - 0.5, 0.0, W - 1.0);
      const auto i0 = static_cast<int64_t>(si), j0 = static_cast<int64_t>(sj);
      const int64_t i1 = std::min(i0 + 1, H - 1), j1 = std::min(j0 + 1, W - 1);
      const double ti = si - i0, tj = sj - j0;
      for (int64_t c = 0; c < C; ++c) {
        nearest.push_back(at(ni, nj, c));
        const double top = at(i0, j0, c) * (1 - tj) + at(i0, j1, c) * tj;
        const double bottom = at(i1, j0, c) * (1 - tj) + at(i1, j1, c) * tj;
        bilinear.push_back(top * (1 - ti) + bottom * ti);
      }
    }
  }
  expect_outputs(load(one_layer("Resizing", {{"height", OH}, {"width", OW}, {"interpolation", "nearest"}}, {H, W, C})),
                 x, nearest);
  expect_outputs(load(one_layer("Resizing", {{"height", OH}, {"width", OW}}, {H, W, C})), x, bilinear);
}

TEST(KerasPreprocessing, AugmentationIsTheIdentityAtInference) {
  const std::vector<float> x = ramp(5 * 4 * 3, -1.0f, 0.1f);
  for (const char* cls : {"RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast",
                          "RandomBrightness"}) {
    SCOPED_TRACE(cls);
    Graph g = load(one_layer(cls, {{"factor", 0.2}, {"seed", 1}}, {5, 4, 3}));
    expect_outputs(g, x, std::vector<double>(x.begin(), x.end()));
  }
}

// An InputLayer that declares uint8 (camera bytes, then Rescaling): the graph input is uint8, as
// the config's `inputs: {NAME: uint8}` makes it, so callers and the daemon's rings carry bytes.
TEST(KerasPreprocessing, Uint8InputLayerTakesBytes) {
  const std::string base = std::string(NND_TEST_DATA_DIR) + "/fixtures/uint8_inputlayer_rescaling";
  for (const char* ext : {".k2.h5", ".k3.h5", ".keras"}) {
    SCOPED_TRACE(ext);
    const Graph g = load_model(base + ext);
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.values[static_cast<size_t>(g.inputs[0])].dtype, DType::kUInt8);
  }
  // x * 1/255 on bytes 0..255, both engines.
  json cfg = json::parse(one_layer("Rescaling", {{"scale", 1.0 / 255}, {"offset", 0.0}}, {4, 3}));
  cfg["config"]["layers"][0]["config"]["dtype"] = "uint8";
  const Graph g = load(cfg.dump());
  ASSERT_EQ(g.values[static_cast<size_t>(g.inputs[0])].dtype, DType::kUInt8);
  std::vector<uint8_t> bytes(12);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 23);
  for (EngineKind kind : test::engines_here(g)) {
    EngineOptions o;
    o.engine = kind;
    auto engine = make_engine(g, o);
    std::vector<float> y(12);
    const InputView in{DType::kUInt8, bytes.data()};
    float* const ptr = y.data();
    engine->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(&ptr, 1));
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], bytes[i] / 255.0, 1e-6) << i;
  }
  // Other integer inputs stay refused, by layer and field.
  cfg["config"]["layers"][0]["config"]["dtype"] = "int32";
  try {
    (void)load(cfg.dump());
    ADD_FAILURE() << "an int32 InputLayer loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'input' (InputLayer)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input dtype 'int32' is not supported (float32 and uint8 are)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nnd
