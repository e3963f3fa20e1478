// Lowering of graph nodes to kernels, the memory plan and the run loop of the JIT engine.
#include "core/jit/jit_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <array>
#include <tuple>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/ir/conv_geometry.h"
#include "core/ir/shape_inference.h"
#include "core/jit/jit_lower_extra.h"
#include "core/jit/in_place.h"
#include "core/jit/kernel_config.h"
#include "core/jit/kernel_helpers.h"
#include "core/jit/padded_storage.h"
#include "core/jit/x86/kernels.h"
#include "core/jit/x86/kernels_planar.h"
#include "core/jit/x86/kernels_winograd.h"
#include "core/jit/x86/math.h"
#include "core/passes/expand_recurrent.h"
#include "core/passes/pass.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::jit {

namespace {

struct Hwc {
  int64_t h, w, c;
};

Hwc as_hwc(int rank, const Dims& s) {
  if (rank == 1) return {1, s[0], s[1]};
  return {s[0], s[1], s[2]};
}

// Why a node cannot be compiled yet (nullopt: it can).
std::optional<std::string> unsupported_reason(const Graph& g, const Node& n) {
  return std::visit(
      [&](const auto& p) -> std::optional<std::string> {
        using T = std::decay_t<decltype(p)>;
        if (is_extra_kind(n.params)) return extra_unsupported_reason(g, n);
        if constexpr (std::is_same_v<T, BatchNormParams> || std::is_same_v<T, MergeParams>) {
          return std::nullopt;  // non-last axis / broadcasting: jit_lower_extra.cpp
        } else if constexpr (std::is_same_v<T, DenseParams> || std::is_same_v<T, ConvParams> ||
                             std::is_same_v<T, DepthwiseConvParams> ||
                             std::is_same_v<T, SeparableConvParams> || std::is_same_v<T, ActivationParams> ||
                             std::is_same_v<T, ReluParams> || std::is_same_v<T, EluParams> ||
                             std::is_same_v<T, ThresholdedReluParams> || std::is_same_v<T, SoftmaxParams> ||
                             std::is_same_v<T, PoolParams> || std::is_same_v<T, GlobalPoolParams> ||
                             std::is_same_v<T, FlattenParams> || std::is_same_v<T, ReshapeParams> ||
                             std::is_same_v<T, IdentityParams> || std::is_same_v<T, ConcatParams> ||
                             std::is_same_v<T, ZeroPaddingParams>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, RecurrentParams>) {
          // Rewritten into Dense / Merge nodes by passes::ExpandRecurrent, up to a step count.
          const int64_t steps = g.values[static_cast<size_t>(n.inputs[0])].shape[0];
          if (steps > passes::kMaxUnrolledSteps) return "a recurrent layer over " + std::to_string(steps) + " steps";
          return std::nullopt;
        } else {
          return std::string("kind ") + layer_kind_name(n.params);
        }
      },
      n.params);
}

// A tensor buffer of the plan. Sizes are per sample, in floats.
struct Buffer {
  enum Kind { kArena, kInput, kOutput } kind = kArena;
  int index = 0;            // graph input / output slot
  int64_t floats = 0;       // per sample
  int64_t first = -1, last = -1;  // steps using it
  int64_t offset = 0;       // arena offset per sample (floats)
  std::string name;
  // Set when the producer wrote the interior of this bordered buffer (padded_storage.h): its
  // consumer fills the border instead of copying.
  std::optional<PaddedStore> placed;
};

struct Step {
  KernelFn fn = nullptr;
  std::vector<int> in;
  int out = -1;
  std::string name;
};

class Arena {
 public:
  std::vector<float> storage;
  std::vector<float*> buf;
  std::vector<const void*> in_ptrs;  // all steps' input pointer arrays, back to back
  std::vector<InputView> chunk_in;   // the current chunk's inputs and outputs (run_chunk)
  std::vector<float*> chunk_out;
  int64_t capacity_batch = 0;
};

class JitEngineImpl final : public JitEngine {
 public:
  JitEngineImpl(const Graph& graph, const EngineOptions& options, const JitConfig& config)
      : g_(graph),
        features_(config.features ? *config.features : detect_cpu_features()),
        isa_(resolve_isa(options.isa, features_)),
        math_(options.math),
        dump_dir_(config.dump_dir ? *config.dump_dir : (std::getenv("NND_JIT_DUMP") ? std::getenv("NND_JIT_DUMP") : "")),
        arena_fill_(config.arena_fill),
        module_(isa_, config.keep_listing, dump_dir_) {
    verify_structure(g_);
    infer_shapes(g_);
    // Graph passes (core/passes): recurrent expansion, identity removal, BatchNorm folding,
    // add/activation fusion. NND_JIT_PASSES=0 turns off all but the expansion (for measuring
    // their effect): recurrent layers have no kernel of their own.
    const char* passes_env = std::getenv("NND_JIT_PASSES");
    if (config.run_passes && !(passes_env && std::string(passes_env) == "0")) {
      passes::make_default_pipeline(dump_dir_).run(g_);
    } else {
      passes::make_required_pipeline(dump_dir_).run(g_);
    }
    for (const Node& n : g_.nodes) {
      if (auto why = unsupported_reason(g_, n)) {
        throw Error(g_.node_context(n) + ": not compiled by the JIT yet (" + *why + ")");
      }
    }
    width_ = isa_traits(isa_).f32_lanes;
    lower();
    plan_memory();
    plan_chunks(config.chunk_bytes);
    if (!dump_dir_.empty()) write_plan();
  }

  void run(int64_t batch, std::span<const InputView> inputs, std::span<float* const> outputs) override {
    if (batch < 1) throw Error("jit engine: batch must be >= 1, got " + std::to_string(batch));
    if (inputs.size() != g_.inputs.size()) {
      throw Error("jit engine: " + g_.source + " has " + std::to_string(g_.inputs.size()) + " input(s), got " +
                  std::to_string(inputs.size()));
    }
    if (outputs.size() != g_.outputs.size()) {
      throw Error("jit engine: " + g_.source + " has " + std::to_string(g_.outputs.size()) + " output(s), got " +
                  std::to_string(outputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].data) throw Error("jit engine: input " + std::to_string(i) + " is null");
      if (inputs[i].dtype != DType::kFloat32 && inputs[i].dtype != DType::kUInt8) {
        throw Error("jit engine: input " + std::to_string(i) + " has an unknown dtype");
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i]) throw Error("jit engine: output " + std::to_string(i) + " is null");
    }
    // Chunks of chunk_samples_ samples: each runs layer by layer over its samples, so the
    // activations of a chunk stay in cache (plan_chunks).
    const int64_t chunk = std::min(batch, chunk_samples_);
    checked_mul(chunk, arena_floats_ + 16, "jit engine: arena size for the batch");
    std::unique_ptr<Arena> arena = acquire();
    if (arena->capacity_batch < chunk) {
      arena->storage.assign(static_cast<size_t>(arena_floats_ * chunk + 16), arena_fill_);
      arena->capacity_batch = chunk;
    }
    for (int64_t first = 0; first < batch; first += chunk) {
      const int64_t n = std::min(chunk, batch - first);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t bytes = inputs[i].dtype == DType::kUInt8 ? 1 : 4;
        arena->chunk_in[i] = {inputs[i].dtype, static_cast<const char*>(inputs[i].data) +
                                                   first * in_count_[i] * bytes};
      }
      for (size_t i = 0; i < outputs.size(); ++i) arena->chunk_out[i] = outputs[i] + first * out_count_[i];
      run_chunk(*arena, n);
    }
    release(std::move(arena));
  }

  // Runs `batch` samples (at most the arena's capacity) from arena.chunk_in into arena.chunk_out.
  void run_chunk(Arena& arena, int64_t batch) const {
    const std::vector<InputView>& inputs = arena.chunk_in;
    const std::vector<float*>& outputs = arena.chunk_out;
    float* base = arena.storage.data();
    base += (16 - (reinterpret_cast<uintptr_t>(base) / 4) % 16) % 16;  // 64-byte alignment
    for (size_t b = 0; b < buffers_.size(); ++b) {
      const Buffer& bf = buffers_[b];
      if (bf.kind == Buffer::kArena) arena.buf[b] = base + bf.offset * batch;
      else if (bf.kind == Buffer::kOutput) arena.buf[b] = outputs[static_cast<size_t>(bf.index)];
      else arena.buf[b] = const_cast<float*>(static_cast<const float*>(inputs[static_cast<size_t>(bf.index)].data));
    }
    // uint8 inputs: convert into their arena buffers, then read from there.
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].dtype != DType::kUInt8) continue;
      const int conv_buf = input_u8_buf_[i];
      const void* src = inputs[i].data;
      KernelArgs args{&src, arena.buf[static_cast<size_t>(conv_buf)], weights_.data(), batch, helper_table()};
      input_u8_fn_[i](&args);
      arena.buf[static_cast<size_t>(input_buf_[i])] = arena.buf[static_cast<size_t>(conv_buf)];
    }
    size_t k = 0;
    for (const Step& st : steps_) {
      const void** ins = arena.in_ptrs.data() + k;
      for (size_t j = 0; j < st.in.size(); ++j) ins[j] = arena.buf[static_cast<size_t>(st.in[j])];
      KernelArgs args{ins, arena.buf[static_cast<size_t>(st.out)], weights_.data(), batch, helper_table()};
      st.fn(&args);
      k += st.in.size();
    }
    // Outputs that are not written by a kernel: graph inputs or repeated output values.
    for (const auto& [slot, buf, floats] : output_copies_) {
      std::memcpy(outputs[static_cast<size_t>(slot)], arena.buf[static_cast<size_t>(buf)],
                  static_cast<size_t>(floats * batch) * sizeof(float));
    }
  }

  const Graph& graph() const override { return g_; }
  std::string name() const override { return std::string("jit-") + isa_id(isa_); }
  Isa isa() const override { return isa_; }
  const KernelModule& code() const override { return module_; }
  uint64_t code_hash() const override { return module_.code_hash(); }
  int64_t arena_floats_per_sample() const override { return arena_floats_; }
  int64_t chunk_samples() const override { return chunk_samples_; }

 private:
  // ---- buffers and steps ----
  int new_buffer(int64_t floats, const std::string& name) {
    Buffer b;
    b.floats = floats;
    b.name = name;
    buffers_.push_back(b);
    return static_cast<int>(buffers_.size()) - 1;
  }

  std::string kname(const Node& n, const std::string& kernel) const {
    return n.name + ": " + kernel + "-" + isa_id(isa_);
  }

  void add_step(const std::string& name, std::vector<int> in, int out, const std::function<void(VecEmitter&)>& body) {
    Step s;
    s.fn = module_.compile(name, body);
    s.in = std::move(in);
    s.out = out;
    s.name = name;
    steps_.push_back(std::move(s));
  }

  int64_t add_weights(const std::vector<float>& w) {
    weights_.resize((weights_.size() + 15) / 16 * 16, 0.0f);
    const int64_t off = static_cast<int64_t>(weights_.size());
    weights_.insert(weights_.end(), w.begin(), w.end());
    weights_.resize((weights_.size() + 15) / 16 * 16, 0.0f);
    return off;
  }

  int out_buffer_for(ValueId v) {
    // A value that is a graph output is written straight into the caller's output buffer (first
    // listing of it); others live in the arena.
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      if (g_.outputs[i] == v) {
        const int b = new_buffer(element_count(g_.values[v].shape, g_.values[v].name), g_.values[v].name);
        buffers_[static_cast<size_t>(b)].kind = Buffer::kOutput;
        buffers_[static_cast<size_t>(b)].index = static_cast<int>(i);
        return b;
      }
    }
    if (const auto& ps = padded_[static_cast<size_t>(v)]) return new_buffer(ps->padded_floats(), g_.values[v].name);
    return new_buffer(element_count(g_.values[v].shape, g_.values[v].name), g_.values[v].name);
  }

  // The input buffer an element-wise node overwrites with its output (in_place.h), when that
  // buffer is the arena's, dense and exactly the output's size.
  std::optional<int> in_place_buffer(const Node& n, int64_t out_count) const {
    const int k = in_place_[static_cast<size_t>(&n - g_.nodes.data())];
    if (k < 0) return std::nullopt;
    const int b = in_buf(n, static_cast<size_t>(k));
    const Buffer& bf = buffers_[static_cast<size_t>(b)];
    if (bf.kind != Buffer::kArena || bf.placed || bf.floats != out_count) return std::nullopt;
    return b;
  }

  // Where the producer of n's output writes it: the interior of its bordered buffer when the
  // output has padded storage (and the buffer is then marked as placed), else dense.
  OutPlacement placement_for(const Node& n, int dst) {
    const auto& ps = padded_[static_cast<size_t>(n.output)];
    if (!ps) return {};
    buffers_[static_cast<size_t>(dst)].placed = *ps;
    return {ps->row_floats(), ps->padded_floats(), ps->interior_offset()};
  }

  // ---- lowering ----
  void lower() {
    value_buf_.assign(g_.values.size(), -1);
    padded_ = plan_padded_storage(g_);
    in_place_ = plan_in_place(g_, math_);
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const ValueId v = g_.inputs[i];
      const int64_t count = element_count(g_.values[v].shape, g_.values[v].name);
      const int b = new_buffer(count, g_.values[v].name);
      buffers_[static_cast<size_t>(b)].kind = Buffer::kInput;
      buffers_[static_cast<size_t>(b)].index = static_cast<int>(i);
      value_buf_[static_cast<size_t>(v)] = b;
      input_buf_.push_back(b);
      // The uint8 -> float32 conversion kernel, used when the caller passes uint8 data.
      const int cb = new_buffer(count, g_.values[v].name + ":f32");
      input_u8_buf_.push_back(cb);
      UnarySpec us;
      us.count = count;
      us.u8 = true;
      input_u8_fn_.push_back(module_.compile(g_.values[v].name + ": u8-to-f32-" + std::string(isa_id(isa_)),
                                             [us](VecEmitter& ve) { emit_unary(ve, us); }));
    }
    for (const Node& n : g_.nodes) lower_node(n);
    // Graph outputs not produced into their slot (graph inputs, repeated outputs, aliases).
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const ValueId v = g_.outputs[i];
      const int b = value_buf_[static_cast<size_t>(v)];
      const Buffer& bf = buffers_[static_cast<size_t>(b)];
      if (bf.kind == Buffer::kOutput && bf.index == static_cast<int>(i)) continue;
      output_copies_.push_back({static_cast<int>(i), b, element_count(g_.values[v].shape, "")});
    }
  }

  int in_buf(const Node& n, size_t i) const { return value_buf_[static_cast<size_t>(n.inputs[i])]; }
  // The buffer of a fused residual input (layers.h: the node's second input), or -1.
  int residual_buf(const Node& n, bool residual) const { return residual ? in_buf(n, 1) : -1; }

  // Appends an element-wise activation step on buffer b (in place) when `act` is not fused.
  void activation_step(const Node& n, int b, ActivationKind act, int64_t count, int64_t last_dim) {
    if (act == ActivationKind::kLinear) return;
    unary_step(n, b, b, act, count, last_dim);
  }

  void unary_step(const Node& n, int src, int dst, ActivationKind act, int64_t count, int64_t last_dim) {
    if (fast_step(n, src, dst, act, 1.0f, count, last_dim)) return;
    if (activation_is_softmax_like(act)) {
      helper_step(n, src, dst, act == ActivationKind::kSoftmax ? HelperTag::kSoftmax : HelperTag::kLogSoftmax,
                  {static_cast<float>(last_dim), 1.0f, 0.0f}, count, "softmax");
    } else if (unary_vectorised(act)) {
      UnarySpec us;
      us.count = count;
      us.act = act;
      add_step(kname(n, std::string("f32-vact-") + activation_name(act)), {src}, dst,
               [us](VecEmitter& ve) { emit_unary(ve, us); });
    } else {
      helper_step(n, src, dst, HelperTag::kActivation, {static_cast<float>(static_cast<int>(act)), 0, 0}, count,
                  std::string("act-") + activation_name(act));
    }
  }

  // Math mode fast: vectorised approximations in the kernel (x86/math.h); false when `act` has none.
  bool fast_step(const Node& n, int src, int dst, ActivationKind act, float alpha, int64_t count, int64_t last_dim) {
    if (math_ != MathMode::kFast) return false;
    if (act == ActivationKind::kSoftmax) {
      const int64_t rows = count / last_dim;
      add_step(kname(n, "f32-fast-softmax"), {src}, dst,
               [rows, last_dim](VecEmitter& ve) { emit_fast_softmax(ve, rows, last_dim); });
      return true;
    }
    if (!fast_math_kind(act)) return false;
    FastUnarySpec fs;
    fs.count = count;
    fs.act = act;
    fs.alpha = alpha;
    add_step(kname(n, std::string("f32-fast-") + activation_name(act)), {src}, dst,
             [fs](VecEmitter& ve) { emit_fast_unary(ve, fs); });
    return true;
  }

  void helper_step(const Node& n, int src, int dst, HelperTag tag, std::array<float, 3> p, int64_t count,
                   const std::string& what) {
    const int64_t off = add_weights({static_cast<float>(static_cast<int>(tag)), p[0], p[1], p[2]});
    add_step(kname(n, "f32-call-" + what), {src}, dst,
             [count, off](VecEmitter& ve) { emit_helper_call(ve, kHelperUnary, count, off); });
  }

  // Pads (and replicates channels dm times) into a new arena buffer when needed; returns the
  // buffer to read and its padded geometry.
  int pad_step(const Node& n, int src, const Hwc& in, int64_t dm, int64_t top, int64_t bottom, int64_t left,
               int64_t right, float value, Hwc* padded) {
    *padded = {in.h + top + bottom, in.w + left + right, in.c * dm};
    if (top == 0 && bottom == 0 && left == 0 && right == 0 && dm == 1) return src;
    const std::optional<PaddedStore>& placed = buffers_[static_cast<size_t>(src)].placed;
    if (dm == 1 && placed && *placed == PaddedStore{in.h, in.w, in.c, top, bottom, left, right, value}) {
      // The producer wrote the interior already: fill the border in place.
      PadSpec ps{in.h, in.w, in.c, 1, top, bottom, left, right, value, false, true};
      add_step(kname(n, "f32-padborder"), {src}, src, [ps](VecEmitter& ve) { emit_pad(ve, ps); });
      return src;
    }
    const int b = new_buffer(padded->h * padded->w * padded->c, n.name + ":padded");
    PadSpec ps{in.h, in.w, in.c, dm, top, bottom, left, right, value, false};
    add_step(kname(n, "f32-pad"), {src}, b, [ps](VecEmitter& ve) { emit_pad(ve, ps); });
    return b;
  }

  struct Pads {
    int64_t top, bottom, left, right;
    AxisGeometry h, w;
  };
  static Pads pads_for(const Window& win, const Hwc& in) {
    Pads p;
    p.h = window_h(win, in.h);
    p.w = window_w(win, in.w);
    p.top = p.h.pad_before;
    p.left = p.w.pad_before;
    p.bottom = std::max<int64_t>(0, (p.h.out - 1) * win.stride_h + p.h.kernel_eff - in.h - p.top);
    p.right = std::max<int64_t>(0, (p.w.out - 1) * win.stride_w + p.w.kernel_eff - in.w - p.left);
    return p;
  }

  ConvSpec conv_spec(int64_t cin_g, int64_t cout_g) const {
    ConvSpec cs;
    cs.cin_g = cin_g;
    cs.cout_g = cout_g;
    cs.blocking = conv_blocking(isa_traits(isa_), cout_g);
    return cs;
  }

  void emit_conv_step(const Node& n, ConvSpec cs, const Weights& kernel, const Weights& bias, int src, int dst,
                      const std::string& what, int residual = -1) {
    std::vector<float> blob;
    pack_conv_weights(cs, width_, kernel.data, bias.empty() ? nullptr : &bias.data, blob);
    const int64_t off = add_weights(blob);
    for (auto& o : cs.group_weight_off) o += off;
    for (auto& o : cs.group_bias_off) o += off;
    cs.residual = residual >= 0;
    std::vector<int> ins{src};
    if (cs.residual) ins.push_back(residual);
    add_step(kname(n, what), ins, dst, [cs](VecEmitter& ve) { emit_conv(ve, cs); });
  }

  // SSE4.1 convolutions with few input channels (planar_conv_suits): the input is rearranged into
  // channel/phase planes (f32-planar-pack), then f32-conv-planar computes 4 pixels per vector.
  void planar_conv(const Node& n, const ConvParams& p, const Hwc& in, const Pads& pd, int src, int dst, int residual,
                   const OutPlacement& place) {
    const Window& w = p.window;
    PlanarPackSpec ps;
    ps.in_h = in.h;
    ps.in_w = in.w;
    ps.top = pd.top;
    ps.left = pd.left;
    ps.out = planar_layout(in.c, pd.h.out, pd.w.out, w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.dilation_h,
                           w.dilation_w);
    if (const std::optional<PaddedStore>& placed = buffers_[static_cast<size_t>(src)].placed) {
      // Its producer wrote the interior of a bordered buffer: read that, the border is not needed.
      ps.src_row_floats = placed->row_floats();
      ps.src_sample_floats = placed->padded_floats();
      ps.src_offset = placed->interior_offset();
    } else {
      ps.src_row_floats = in.w * in.c;
      ps.src_sample_floats = in.h * in.w * in.c;
    }
    const int planes = new_buffer(ps.out.sample_floats(), n.name + ":planar");
    add_step(kname(n, "f32-planar-pack"), {src}, planes, [ps](VecEmitter& ve) { emit_planar_pack(ve, ps); });
    PlanarConvSpec cs;
    cs.in = ps.out;
    cs.out_h = pd.h.out;
    cs.out_w = pd.w.out;
    cs.cout = p.filters;
    cs.kh = w.kernel_h;
    cs.kw = w.kernel_w;
    cs.sh = w.stride_h;
    cs.dh = w.dilation_h;
    cs.dw = w.dilation_w;
    cs.has_bias = !p.bias.empty();
    cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
    cs.residual = residual >= 0;
    cs.out_place = place;
    plan_planar_blocking(cs);
    std::vector<float> blob;
    pack_planar_conv_weights(cs, p.kernel.data, p.bias.empty() ? nullptr : &p.bias.data, blob);
    const int64_t off = add_weights(blob);
    for (auto& o : cs.chunk_weight_off) o += off;
    cs.bias_off += off;
    std::vector<int> ins{planes};
    if (cs.residual) ins.push_back(residual);
    add_step(kname(n, "f32-conv-planar"), ins, dst, [cs](VecEmitter& ve) { emit_planar_conv(ve, cs); });
  }

  // 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) (winograd_suits): f32-wino-in transforms
  // the padded input per 2x2 output tile, a 16-group 1x1 f32-conv multiplies each transform point
  // by its transformed weights, f32-wino-out transforms back and runs the epilogue.
  void winograd_conv(const Node& n, const ConvParams& p, const Hwc& in, const Pads& pd, int src, int dst,
                     int residual, const OutPlacement& place) {
    Hwc padded;
    const int b = pad_step(n, src, in, 1, pd.top, pd.bottom, pd.left, pd.right, 0.0f, &padded);
    const int64_t th = pd.h.out / 2, tw = pd.w.out / 2;
    if (padded.h != 2 * th + 2 || padded.w != 2 * tw + 2) {
      throw Error("JIT internal error: Winograd input of " + n.name + " is not 2 * tiles + 2 on each axis");
    }
    const WinogradInSpec is{th, tw, in.c};
    const int v = new_buffer(th * tw * kWinogradPoints * in.c, n.name + ":winograd-input");
    add_step(kname(n, "f32-wino-in"), {b}, v, [is](VecEmitter& ve) { emit_winograd_input(ve, is); });
    ConvSpec cs = conv_spec(in.c, p.filters);
    cs.groups = kWinogradPoints;
    cs.in_c = kWinogradPoints * in.c;
    cs.out_c = kWinogradPoints * p.filters;
    cs.in_h = cs.out_h = th;
    cs.in_w = cs.out_w = tw;
    const Weights u{{1, 1, in.c, kWinogradPoints * p.filters}, winograd_weights(p.kernel.data, in.c, p.filters)};
    const int m = new_buffer(th * tw * kWinogradPoints * p.filters, n.name + ":winograd-products");
    emit_conv_step(n, cs, u, Weights{}, v, m, "f32-conv");
    WinogradOutSpec os;
    os.tiles_h = th;
    os.tiles_w = tw;
    os.c = p.filters;
    os.has_bias = !p.bias.empty();
    if (os.has_bias) os.bias_off = add_weights(p.bias.data);
    os.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
    os.residual = residual >= 0;
    os.out_place = place;
    std::vector<int> ins{m};
    if (os.residual) ins.push_back(residual);
    add_step(kname(n, "f32-wino-out"), ins, dst, [os](VecEmitter& ve) { emit_winograd_output(ve, os); });
  }

  void depthwise(const Node& n, const Window& win, const Weights& kernel, const Weights* bias, int64_t dm,
                 ActivationKind act, int src, int dst, const Hwc& in, const Pads& pd, int residual = -1,
                 OutPlacement place = {}) {
    Hwc padded;
    const int b = pad_step(n, src, in, dm, pd.top, pd.bottom, pd.left, pd.right, 0.0f, &padded);
    WindowSpec ws;
    ws.op = WindowOp::kDepthwise;
    ws.in_h = padded.h;
    ws.in_w = padded.w;
    ws.c = padded.c;
    ws.out_h = pd.h.out;
    ws.out_w = pd.w.out;
    ws.kh = win.kernel_h;
    ws.kw = win.kernel_w;
    ws.sh = win.stride_h;
    ws.sw = win.stride_w;
    ws.dh = win.dilation_h;
    ws.dw = win.dilation_w;
    ws.has_bias = bias != nullptr;
    ws.act = act_fusable(act) ? act : ActivationKind::kLinear;
    const WindowBlocking wb = depthwise_blocking(isa_traits(isa_), ws.c);
    ws.vmax = wb.vmax;
    ws.rows = wb.rows;
    std::vector<float> blob;
    pack_depthwise_weights(ws, width_, kernel.data, bias ? &bias->data : nullptr, blob);
    const int64_t off = add_weights(blob);
    ws.weight_off += off;
    ws.bias_off += off;
    ws.residual = residual >= 0;
    ws.out_place = place;
    std::vector<int> ins{b};
    if (ws.residual) ins.push_back(residual);
    add_step(kname(n, "f32-dwconv"), ins, dst, [ws](VecEmitter& ve) { emit_window(ve, ws); });
    if (!act_fusable(act)) activation_step(n, dst, act, pd.h.out * pd.w.out * padded.c, padded.c);
  }

  void lower_node(const Node& n) {
    const Dims& out_shape = g_.values[n.output].shape;
    const int64_t out_count = element_count(out_shape, g_.values[n.output].name);
    const Dims& in_shape = g_.values[n.inputs[0]].shape;
    // Free layers: the output is the input's buffer.
    if (std::holds_alternative<FlattenParams>(n.params) || std::holds_alternative<ReshapeParams>(n.params) ||
        std::holds_alternative<IdentityParams>(n.params)) {
      value_buf_[static_cast<size_t>(n.output)] = in_buf(n, 0);
      return;
    }
    const std::optional<int> reuse = in_place_buffer(n, out_count);
    const int dst = reuse ? *reuse : out_buffer_for(n.output);
    value_buf_[static_cast<size_t>(n.output)] = dst;
    if (lower_extra(n, dst)) return;
    std::visit(
        [&](const auto& p) {
          using T = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<T, DenseParams>) {
            const int64_t k = in_shape.back();
            ConvSpec cs = conv_spec(k, p.units);
            cs.rows_mode = true;
            cs.in_c = k;
            cs.out_c = p.units;
            cs.out_w = out_count / p.units;
            cs.has_bias = !p.bias.empty();
            cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
            emit_conv_step(n, cs, p.kernel, p.bias, in_buf(n, 0), dst, "f32-gemm", residual_buf(n, p.residual));
            if (!act_fusable(p.activation)) activation_step(n, dst, p.activation, out_count, p.units);
          } else if constexpr (std::is_same_v<T, ConvParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            const Pads pd = pads_for(p.window, in);
            const int64_t cin_g = in.c / p.groups, cout_g = p.filters / p.groups;
            ConvSpec cs = conv_spec(cin_g, cout_g);
            const Window& w = p.window;
            cs.groups = p.groups;
            cs.out_h = pd.h.out;
            cs.out_w = pd.w.out;
            cs.in_c = in.c;
            cs.out_c = p.filters;
            cs.kh = w.kernel_h;
            cs.kw = w.kernel_w;
            cs.sh = w.stride_h;
            cs.sw = w.stride_w;
            cs.dh = w.dilation_h;
            cs.dw = w.dilation_w;
            cs.has_bias = !p.bias.empty();
            cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
            int src = in_buf(n, 0);
            cs.out_place = placement_for(n, dst);
            const int residual = residual_buf(n, p.residual);
            if (winograd_suits(isa_traits(isa_), p.groups, in.c, p.filters, w, pd.h.out, pd.w.out)) {
              winograd_conv(n, p, in, pd, src, dst, residual, cs.out_place);
            } else if (planar_conv_suits(isa_traits(isa_), p.groups, in.c, p.filters, w.kernel_h, w.kernel_w, pd.w.out)) {
              planar_conv(n, p, in, pd, src, dst, residual, cs.out_place);
            } else {
              if (w.kernel_h == 1 && w.kernel_w == 1 && w.stride_h == 1 && w.stride_w == 1 && p.groups == 1 &&
                  cs.out_place.dense()) {
                cs.rows_mode = true;
              } else {
                Hwc padded;
                src = pad_step(n, src, in, 1, pd.top, pd.bottom, pd.left, pd.right, 0.0f, &padded);
                cs.in_h = padded.h;
                cs.in_w = padded.w;
              }
              emit_conv_step(n, cs, p.kernel, p.bias, src, dst, cs.rows_mode ? "f32-gemm" : "f32-conv", residual);
            }
            if (!act_fusable(p.activation)) activation_step(n, dst, p.activation, out_count, p.filters);
          } else if constexpr (std::is_same_v<T, DepthwiseConvParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            depthwise(n, p.window, p.kernel, p.bias.empty() ? nullptr : &p.bias, p.depth_multiplier, p.activation,
                      in_buf(n, 0), dst, in, pads_for(p.window, in), residual_buf(n, p.residual),
                      placement_for(n, dst));
          } else if constexpr (std::is_same_v<T, SeparableConvParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            const Pads pd = pads_for(p.window, in);
            const int64_t mid_c = in.c * p.depth_multiplier;
            const int mid = new_buffer(pd.h.out * pd.w.out * mid_c, n.name + ":depthwise");
            depthwise(n, p.window, p.depthwise_kernel, nullptr, p.depth_multiplier, ActivationKind::kLinear,
                      in_buf(n, 0), mid, in, pd);
            ConvSpec cs = conv_spec(mid_c, p.filters);
            cs.in_c = mid_c;
            cs.out_c = p.filters;
            cs.out_place = placement_for(n, dst);
            if (cs.out_place.dense()) {
              cs.rows_mode = true;
              cs.out_w = pd.h.out * pd.w.out;
            } else {  // 1x1 spatial conv over the depthwise output, writing the bordered interior
              cs.in_h = cs.out_h = pd.h.out;
              cs.in_w = cs.out_w = pd.w.out;
            }
            cs.has_bias = !p.bias.empty();
            cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
            emit_conv_step(n, cs, p.pointwise_kernel, p.bias, mid, dst, "f32-gemm", residual_buf(n, p.residual));
            if (!act_fusable(p.activation)) activation_step(n, dst, p.activation, out_count, p.filters);
          } else if constexpr (std::is_same_v<T, BatchNormParams>) {
            const int64_t c = in_shape.back();
            std::vector<float> scale(static_cast<size_t>(ceil_div(c, 16) * 16), 0.0f), shift(scale.size(), 0.0f);
            for (int64_t i = 0; i < c; ++i) {
              const double s = static_cast<double>(p.gamma.data[i]) /
                               std::sqrt(static_cast<double>(p.moving_variance.data[i]) + p.epsilon);
              scale[static_cast<size_t>(i)] = static_cast<float>(s);
              shift[static_cast<size_t>(i)] =
                  static_cast<float>(static_cast<double>(p.beta.data[i]) - static_cast<double>(p.moving_mean.data[i]) * s);
            }
            UnarySpec us;
            us.count = out_count;
            us.channels = c;
            us.scale_off = add_weights(scale);
            us.shift_off = add_weights(shift);
            // A fused activation (graph passes) runs inside the affine kernel when vectorised.
            if (unary_vectorised(p.activation)) us.act = p.activation;
            add_step(kname(n, "f32-affine"), {in_buf(n, 0)}, dst, [us](VecEmitter& ve) { emit_unary(ve, us); });
            if (!unary_vectorised(p.activation)) activation_step(n, dst, p.activation, out_count, c);
          } else if constexpr (std::is_same_v<T, ActivationParams>) {
            unary_step(n, in_buf(n, 0), dst, p.activation, out_count, in_shape.back());
          } else if constexpr (std::is_same_v<T, ReluParams>) {
            if (p.threshold == 0.0) {
              UnarySpec us;
              us.count = out_count;
              us.relu_layer = true;
              us.negative_slope = static_cast<float>(p.negative_slope);
              us.has_max = std::isfinite(p.max_value);
              us.max_value = us.has_max ? static_cast<float>(p.max_value) : 0.0f;
              add_step(kname(n, "f32-vrelu"), {in_buf(n, 0)}, dst, [us](VecEmitter& ve) { emit_unary(ve, us); });
            } else {
              helper_step(n, in_buf(n, 0), dst, HelperTag::kRelu,
                          {static_cast<float>(p.max_value), static_cast<float>(p.negative_slope),
                           static_cast<float>(p.threshold)},
                          out_count, "relu");
            }
          } else if constexpr (std::is_same_v<T, EluParams>) {
            if (fast_step(n, in_buf(n, 0), dst, ActivationKind::kElu, static_cast<float>(p.alpha), out_count, 1)) return;
            helper_step(n, in_buf(n, 0), dst, HelperTag::kElu, {static_cast<float>(p.alpha), 0, 0}, out_count, "elu");
          } else if constexpr (std::is_same_v<T, ThresholdedReluParams>) {
            helper_step(n, in_buf(n, 0), dst, HelperTag::kThresholdedRelu, {static_cast<float>(p.theta), 0, 0},
                        out_count, "thresholded-relu");
          } else if constexpr (std::is_same_v<T, SoftmaxParams>) {
            int64_t inner = 1;
            for (size_t i = static_cast<size_t>(p.axis) + 1; i < in_shape.size(); ++i) inner *= in_shape[i];
            if (inner == 1 && fast_step(n, in_buf(n, 0), dst, ActivationKind::kSoftmax, 1.0f, out_count,
                                        in_shape[static_cast<size_t>(p.axis)])) {
              return;
            }
            helper_step(n, in_buf(n, 0), dst, HelperTag::kSoftmax,
                        {static_cast<float>(in_shape[static_cast<size_t>(p.axis)]), static_cast<float>(inner), 0},
                        out_count, "softmax");
          } else if constexpr (std::is_same_v<T, PoolParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            const Pads pd = pads_for(p.window, in);
            lower_pool(n, p.kind, p.window, in, pd, dst);
          } else if constexpr (std::is_same_v<T, GlobalPoolParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            Window w;
            w.kernel_h = in.h;
            w.kernel_w = in.w;
            lower_pool(n, p.kind, w, in, pads_for(w, in), dst);
          } else if constexpr (std::is_same_v<T, MergeParams>) {
            BinOp op = BinOp::kAdd;
            float div = 1.0f;
            switch (p.op) {
              case MergeOp::kAdd: op = BinOp::kAdd; break;
              case MergeOp::kSubtract: op = BinOp::kSub; break;
              case MergeOp::kMultiply: op = BinOp::kMul; break;
              case MergeOp::kAverage: op = BinOp::kAdd; div = static_cast<float>(n.inputs.size()); break;
              case MergeOp::kMaximum: op = BinOp::kMax; break;
              case MergeOp::kMinimum: op = BinOp::kMin; break;
            }
            std::vector<int> ins;
            for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(in_buf(n, i));
            const int k = static_cast<int>(n.inputs.size());
            add_step(kname(n, "f32-merge"), ins, dst,
                     [op, k, out_count, div](VecEmitter& ve) { emit_merge(ve, op, k, out_count, div); });
          } else if constexpr (std::is_same_v<T, ConcatParams>) {
            int64_t outer = 1;
            for (int i = 0; i < p.axis; ++i) outer *= out_shape[static_cast<size_t>(i)];
            std::vector<int64_t> inner;
            std::vector<int> ins;
            for (size_t i = 0; i < n.inputs.size(); ++i) {
              inner.push_back(element_count(g_.values[n.inputs[i]].shape, "") / outer);
              ins.push_back(in_buf(n, i));
            }
            add_step(kname(n, "f32-concat"), ins, dst, [outer, inner](VecEmitter& ve) { emit_concat(ve, outer, inner); });
          } else if constexpr (std::is_same_v<T, ZeroPaddingParams>) {
            const Hwc in = as_hwc(p.rank, in_shape);
            PadSpec ps{in.h, in.w, in.c, 1, p.rank == 1 ? 0 : p.top, p.rank == 1 ? 0 : p.bottom, p.left, p.right,
                       0.0f, false};
            add_step(kname(n, "f32-pad"), {in_buf(n, 0)}, dst, [ps](VecEmitter& ve) { emit_pad(ve, ps); });
          } else {
            throw Error(g_.node_context(n) + ": not compiled by the JIT yet");
          }
        },
        n.params);
  }

  // Kinds lowered in jit_lower_extra.cpp through the engine's primitives.
  bool lower_extra(const Node& n, int dst) {
    LowerHooks h;
    h.isa = isa_;
    h.new_buffer = [this](int64_t floats, const std::string& name) { return new_buffer(floats, name); };
    h.add_weights = [this](const std::vector<float>& w) { return add_weights(w); };
    h.add_step = [this, &n](const std::string& kernel, std::vector<int> in, int out,
                            std::function<void(VecEmitter&)> body) { add_step(kname(n, kernel), std::move(in), out, body); };
    h.conv_step = [this, &n](ConvSpec cs, const Weights& kernel, const Weights& bias, int src, int out,
                             const std::string& what) { emit_conv_step(n, cs, kernel, bias, src, out, what); };
    h.activation = [this, &n](int buf, ActivationKind act, int64_t count, int64_t last_dim) {
      activation_step(n, buf, act, count, last_dim);
    };
    std::vector<int> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(in_buf(n, i));
    return lower_extra_node(g_, n, ins, dst, h);
  }

  void lower_pool(const Node& n, PoolKind kind, const Window& win, const Hwc& in, const Pads& pd, int dst) {
    const bool padded_any = pd.top || pd.bottom || pd.left || pd.right;
    Hwc padded;
    const float fill = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
    const int src = pad_step(n, in_buf(n, 0), in, 1, pd.top, pd.bottom, pd.left, pd.right, fill, &padded);
    WindowSpec ws;
    ws.op = kind == PoolKind::kMax ? WindowOp::kMax : WindowOp::kSum;
    ws.in_h = padded.h;
    ws.in_w = padded.w;
    ws.c = in.c;
    ws.out_h = pd.h.out;
    ws.out_w = pd.w.out;
    ws.kh = win.kernel_h;
    ws.kw = win.kernel_w;
    ws.sh = win.stride_h;
    ws.sw = win.stride_w;
    const WindowBlocking wb = pool_blocking(isa_traits(isa_), in.c);
    ws.vmax = wb.vmax;
    ws.rows = wb.rows;
    if (kind == PoolKind::kAverage && !padded_any) ws.scale = static_cast<float>(1.0 / static_cast<double>(win.kernel_h * win.kernel_w));
    ws.out_place = placement_for(n, dst);
    add_step(kname(n, kind == PoolKind::kMax ? "f32-maxpool" : "f32-avgpool"), {src}, dst,
             [ws](VecEmitter& ve) { emit_window(ve, ws); });
    if (kind == PoolKind::kAverage && padded_any) {
      // Average over the valid (unpadded) positions of each window, as TensorFlow does.
      std::vector<float> map(static_cast<size_t>(pd.h.out * pd.w.out));
      for (int64_t oh = 0; oh < pd.h.out; ++oh) {
        const int64_t h0 = oh * win.stride_h - pd.top;
        const int64_t hn = std::min(h0 + win.kernel_h, in.h) - std::max<int64_t>(h0, 0);
        for (int64_t ow = 0; ow < pd.w.out; ++ow) {
          const int64_t w0 = ow * win.stride_w - pd.left;
          const int64_t wn = std::min(w0 + win.kernel_w, in.w) - std::max<int64_t>(w0, 0);
          map[static_cast<size_t>(oh * pd.w.out + ow)] = static_cast<float>(1.0 / static_cast<double>(hn * wn));
        }
      }
      const int64_t off = add_weights(map), positions = pd.h.out * pd.w.out, c = in.c;
      add_step(kname(n, "f32-posscale"), {dst}, dst,
               [positions, c, off](VecEmitter& ve) { emit_position_scale(ve, positions, c, off); });
    }
  }

  // ---- memory plan ----
  void plan_memory() {
    // Lifetimes in step indices (input conversion buffers live from the start).
    for (size_t i = 0; i < input_u8_buf_.size(); ++i) buffers_[static_cast<size_t>(input_u8_buf_[i])].first = -1;
    std::vector<int64_t> last(buffers_.size(), -2), first(buffers_.size(), std::numeric_limits<int64_t>::max());
    for (size_t s = 0; s < steps_.size(); ++s) {
      const auto si = static_cast<int64_t>(s);
      for (int b : steps_[s].in) {
        last[static_cast<size_t>(b)] = std::max(last[static_cast<size_t>(b)], si);
        first[static_cast<size_t>(b)] = std::min(first[static_cast<size_t>(b)], si);
      }
      last[static_cast<size_t>(steps_[s].out)] = std::max(last[static_cast<size_t>(steps_[s].out)], si);
      first[static_cast<size_t>(steps_[s].out)] = std::min(first[static_cast<size_t>(steps_[s].out)], si);
    }
    const auto end = static_cast<int64_t>(steps_.size());
    for (const auto& c : output_copies_) last[static_cast<size_t>(std::get<1>(c))] = end;
    for (size_t i = 0; i < input_u8_buf_.size(); ++i) {
      // The conversion buffer stands in for the input: alive from before step 0 to the input's last use.
      const size_t cb = static_cast<size_t>(input_u8_buf_[i]), ib = static_cast<size_t>(input_buf_[i]);
      first[cb] = -1;
      last[cb] = std::max<int64_t>(last[ib], 0);
      if (last[ib] == -2) last[cb] = end;  // input used only as an output
    }
    std::vector<size_t> placed;
    arena_floats_ = 0;
    for (size_t b = 0; b < buffers_.size(); ++b) {
      Buffer& bf = buffers_[b];
      bf.first = first[b];
      bf.last = last[b];
      if (bf.kind != Buffer::kArena || bf.last == -2) continue;
      const int64_t size = ceil_div(bf.floats, 16) * 16;
      // Lowest offset free of every placed buffer whose lifetime overlaps.
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (size_t o : placed) {
        const Buffer& ob = buffers_[o];
        if (ob.first <= bf.last && bf.first <= ob.last) busy.push_back({ob.offset, ob.offset + ceil_div(ob.floats, 16) * 16});
      }
      std::sort(busy.begin(), busy.end());
      int64_t off = 0;
      for (const auto& [lo, hi] : busy) {
        if (off + size <= lo) break;
        off = std::max(off, hi);
      }
      bf.offset = off;
      arena_floats_ = std::max(arena_floats_, off + size);
      placed.push_back(b);
    }
    size_t total_in = 0;
    for (const Step& s : steps_) total_in += s.in.size();
    in_ptr_count_ = total_in;
  }

  void write_plan() const {
    std::ofstream out(std::filesystem::path(dump_dir_) / "plan.txt");
    out << "engine " << name() << " for " << g_.source << "\ncode hash " << std::hex << module_.code_hash() << std::dec
        << ", code bytes " << module_.code_bytes() << ", arena floats per sample " << arena_floats_ << ", samples per chunk " << chunk_samples_ << "\n";
    for (size_t b = 0; b < buffers_.size(); ++b) {
      const Buffer& bf = buffers_[b];
      out << "buffer " << b << " '" << bf.name << "' "
          << (bf.kind == Buffer::kArena ? "arena" : bf.kind == Buffer::kInput ? "input" : "output") << " floats "
          << bf.floats << " offset " << bf.offset << " steps [" << bf.first << ", " << bf.last << "]\n";
    }
    for (size_t s = 0; s < steps_.size(); ++s) {
      out << "step " << s << " " << steps_[s].name << " in";
      for (int b : steps_[s].in) out << " " << b;
      out << " out " << steps_[s].out << "\n";
    }
  }

  // Samples per chunk: as many as keep the arena and the chunk's inputs and outputs within
  // `budget` bytes (at least one). A batch of small samples runs as one chunk, so its conv and
  // GEMM kernels reuse each weight across samples; large samples (a whole camera image) run
  // nearly one at a time, because a layer over the whole batch would stream every activation
  // through memory instead of the cache (bop at batch 16: several times slower per sample).
  void plan_chunks(int64_t budget) {
    int64_t per_sample = arena_floats_ * 4;
    for (ValueId v : g_.inputs) in_count_.push_back(element_count(g_.values[v].shape, g_.values[v].name));
    for (ValueId v : g_.outputs) out_count_.push_back(element_count(g_.values[v].shape, g_.values[v].name));
    for (int64_t c : in_count_) per_sample += c * 4;
    for (int64_t c : out_count_) per_sample += c * 4;
    chunk_samples_ = std::max<int64_t>(1, budget / std::max<int64_t>(1, per_sample));
  }

  // ---- arena pool: one arena per concurrent call; no allocation once warm ----
  std::unique_ptr<Arena> acquire() {
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!pool_.empty()) {
        std::unique_ptr<Arena> a = std::move(pool_.back());
        pool_.pop_back();
        return a;
      }
    }
    auto a = std::make_unique<Arena>();
    a->buf.assign(buffers_.size(), nullptr);
    a->in_ptrs.assign(in_ptr_count_ + 1, nullptr);
    a->chunk_in.assign(g_.inputs.size(), InputView{});
    a->chunk_out.assign(g_.outputs.size(), nullptr);
    return a;
  }
  void release(std::unique_ptr<Arena> a) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool_.push_back(std::move(a));
  }

  Graph g_;
  CpuFeatures features_;
  Isa isa_;
  MathMode math_;
  std::string dump_dir_;
  float arena_fill_ = 0.0f;  // JitConfig::arena_fill
  KernelModule module_;
  int width_ = 4;
  std::vector<Buffer> buffers_;
  std::vector<Step> steps_;
  std::vector<int> value_buf_;
  std::vector<std::optional<PaddedStore>> padded_;  // per value: bordered storage (padded_storage.h)
  std::vector<int> in_place_;                       // per node: input whose storage it reuses (in_place.h)
  std::vector<int> input_buf_, input_u8_buf_;
  std::vector<KernelFn> input_u8_fn_;
  std::vector<std::tuple<int, int, int64_t>> output_copies_;  // (output slot, buffer, floats/sample)
  std::vector<float> weights_;
  int64_t arena_floats_ = 0;
  size_t in_ptr_count_ = 0;
  std::vector<int64_t> in_count_, out_count_;  // elements per sample of each input / output
  int64_t chunk_samples_ = 1;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Arena>> pool_;
};

}  // namespace

std::unique_ptr<JitEngine> make_jit_engine(const Graph& g, const EngineOptions& options, const JitConfig& config) {
  return std::make_unique<JitEngineImpl>(g, options, config);
}

std::vector<std::string> jit_unsupported_layers(const Graph& graph) {
  Graph g = graph;
  verify_structure(g);
  infer_shapes(g);
  std::vector<std::string> out;
  for (const Node& n : g.nodes) {
    if (auto why = unsupported_reason(g, n)) out.push_back(g.node_context(n) + ": not compiled by the JIT yet (" + *why + ")");
  }
  return out;
}

}  // namespace nnd::jit
