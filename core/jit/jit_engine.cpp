// The JIT engine: graph passes, lowering into a kernel plan (core/jit/lower/), code generation,
// the memory plan and the run loop.
#include "core/jit/jit_engine.h"

#include <time.h>

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
#include <atomic>
#include <chrono>
#include <optional>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/ir/arg_max.h"
#include "core/ir/content_hash.h"
#include "core/ir/cost.h"
#include "core/ir/shape_inference.h"
#include "core/jit/index_outputs.h"
#include "core/jit/isa_calibration_cache.h"
#include "core/jit/isa_calibration_standin.h"
#include "core/jit/kernel_helpers.h"
#include "core/jit/kernel_module.h"
#include "core/jit/kernel_parts.h"
#include "core/jit/kernel_plan.h"
#include "core/jit/lower/lower.h"
#include "core/jit/memory_plan.h"
#include "core/jit/worker_pool.h"
#include "core/passes/pass.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::jit {

namespace {

// The plan's buffers, under the name the run loop uses.
using Buffer = PlanBuffer;
// A band of a split step (kernel_parts.h): its own code and where it starts in each buffer.
struct StepPart {
  KernelFn fn = nullptr;
  std::vector<int64_t> in_off;
  int64_t out_off = 0;
};
struct Step {
  KernelFn fn = nullptr;
  std::vector<int> in;
  int out = -1;
  std::string name;
  std::vector<StepPart> parts;  // empty: runs whole, on the calling thread
};
// A split call runs the steps in phases, each complete before the next starts: one split step
// (its bands spread over the participants), or a run of whole steps (one participant runs them).
struct Phase {
  size_t first = 0, last = 0;  // steps [first, last)
  bool split = false;
};

class Arena {
 public:
  std::vector<float> storage;
  std::vector<float*> buf;
  std::vector<const void*> in_ptrs;  // all steps' input pointer arrays, back to back
  std::vector<InputView> chunk_in;   // the current chunk's inputs and outputs (run_chunk)
  std::vector<float*> chunk_out;
  std::vector<int64_t*> chunk_indices;  // per index output (index_outputs.h): the caller's indices
  std::vector<std::vector<float>> index_in;  // per index output: the chunk's float input to it
  int64_t capacity_batch = 0;
  std::vector<const void*> part_ptrs;  // split calls: per participant, one step's input pointers
  // Split calls: per phase, bands claimed and bands done (SplitCall).
  std::unique_ptr<std::atomic<int>[]> phase_claimed, phase_done;
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
    if (config.record_loops_batch > 0) module_.record_loops(config.record_loops_batch);
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
    // ArgMax outputs are computed after the kernels from a float output of the body.
    IndexSplit split = split_index_outputs(g_);
    g_ = std::move(split.body);
    whole_ = std::move(split.whole);
    index_outputs_ = std::move(split.outputs);
    lower();
    plan_memory();
    plan_chunks(config.chunk_bytes);
    flops_per_sample_ = flops_per_sample(g_);
    min_split_flops_ = config.min_split_flops;
    plan_threads(options.threads, config.min_split_flops);
    // Sample groups (run): one arena per participant, made now at full chunk size, so a helper
    // that joins a call for the first time allocates nothing.
    for (int p = 0; workers_ && p < workers_->participants(); ++p) {
      group_arenas_.push_back(new_arena());
      group_arenas_.back()->storage.assign(static_cast<size_t>(arena_floats_ * chunk_samples_ + 16), arena_fill_);
      group_arenas_.back()->capacity_batch = chunk_samples_;
      size_index_inputs(*group_arenas_.back(), chunk_samples_);
    }
    if (!dump_dir_.empty()) write_plan();
  }

  const Graph& graph() const override { return whole_; }

 protected:
  void run_views(int64_t batch, std::span<const InputView> inputs, std::span<const OutputView> outputs) override {
    if (batch < 1) throw Error(ErrorCode::kInvalidArgument, "jit engine: batch must be >= 1, got " + std::to_string(batch));
    if (inputs.size() != g_.inputs.size()) {
      throw Error(ErrorCode::kInvalidArgument, "jit engine: " + g_.source + " has " + std::to_string(g_.inputs.size()) + " input(s), got " +
                  std::to_string(inputs.size()));
    }
    check_output_views(whole_, outputs, "jit engine");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].data) throw Error(ErrorCode::kInvalidArgument, "jit engine: input " + std::to_string(i) + " is null");
      if (inputs[i].dtype != DType::kFloat32 && inputs[i].dtype != DType::kUInt8) {
        throw Error(ErrorCode::kInvalidArgument, "jit engine: input " + std::to_string(i) + " has an unknown dtype");
      }
    }
    // A batch of at least one sample per participant, each share worth a split: the participants
    // claim groups of samples and run the whole network on them, with no hand-off between layers.
    if (workers_ && batch >= workers_->participants()) {
      const int64_t group = std::min(chunk_samples_, (batch + workers_->participants() - 1) / workers_->participants());
      if (group * flops_per_sample_ >= min_split_flops_) {
        SampleGroups call{this, batch, group, inputs, outputs, {0}};
        if (workers_->try_run(&SampleGroups::job, &call)) return;
      }
    }
    std::unique_ptr<Arena> arena = acquire();
    run_samples(*arena, 0, batch, inputs, outputs);
    release(std::move(arena));
  }

 public:
  // Runs samples [first, first + count) of the call's inputs into its outputs, in chunks of
  // chunk_samples_ samples: each runs layer by layer over its samples, so the activations of a
  // chunk stay in cache (plan_chunks).
  void run_samples(Arena& arena, int64_t first_sample, int64_t count, std::span<const InputView> inputs,
                   std::span<const OutputView> outputs) const {
    const int64_t chunk = std::min(count, chunk_samples_);
    checked_mul(chunk, arena_floats_ + 16, "jit engine: arena size for the batch");
    if (arena.capacity_batch < chunk) {
      arena.storage.assign(static_cast<size_t>(arena_floats_ * chunk + 16), arena_fill_);
      arena.capacity_batch = chunk;
      size_index_inputs(arena, chunk);
    }
    for (int64_t first = first_sample; first < first_sample + count; first += chunk) {
      const int64_t n = std::min(chunk, first_sample + count - first);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t bytes = inputs[i].dtype == DType::kUInt8 ? 1 : 4;
        arena.chunk_in[i] = {inputs[i].dtype, static_cast<const char*>(inputs[i].data) +
                                                  first * in_count_[i] * bytes};
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].dtype == DType::kFloat32) arena.chunk_out[i] = static_cast<float*>(outputs[i].data) + first * out_count_[i];
      }
      for (size_t k = 0; k < index_outputs_.size(); ++k) {
        const IndexOutput& o = index_outputs_[k];
        arena.chunk_out[static_cast<size_t>(o.slot)] = arena.index_in[k].data();
        arena.chunk_indices[k] = static_cast<int64_t*>(outputs[static_cast<size_t>(o.slot)].data) + first * o.out_count;
      }
      run_chunk(arena, n);
      for (size_t k = 0; k < index_outputs_.size(); ++k) {
        const IndexOutput& o = index_outputs_[k];
        arg_max(o.params, o.in_shape, n, arena.index_in[k].data(), arena.chunk_indices[k]);
      }
    }
  }

  // An arena's float inputs of the index outputs, for `chunk` samples.
  void size_index_inputs(Arena& arena, int64_t chunk) const {
    for (size_t k = 0; k < index_outputs_.size(); ++k) {
      arena.index_in[k].assign(static_cast<size_t>(checked_mul(chunk, index_outputs_[k].in_count, "jit engine: index output")), 0.0f);
    }
  }

  // A batch split by samples: whoever of the pool's participants comes first claims the next
  // group of samples and runs it whole in its participant's arena (group_arenas_; the pool runs
  // one job at a time, so it is the only user; inside it, the band phases find the pool busy and
  // run on that thread alone). try_run returns once every claimed group is
  // done. Every sample gets the same instructions in the same order as in one thread, so results
  // are bit-identical (a tile spanning samples never changes an element's reduction order).
  struct SampleGroups {
    const JitEngineImpl* engine;
    int64_t batch, group;
    std::span<const InputView> inputs;
    std::span<const OutputView> outputs;
    std::atomic<int64_t> next;
    static void job(void* ctx, int p) {
      auto& c = *static_cast<SampleGroups*>(ctx);
      const JitEngineImpl& e = *c.engine;
      Arena& arena = *e.group_arenas_[static_cast<size_t>(p)];
      for (int64_t first; (first = c.next.fetch_add(c.group, std::memory_order_relaxed)) < c.batch;) {
        e.run_samples(arena, first, std::min(c.group, c.batch - first), c.inputs, c.outputs);
      }
    }
  };

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
    SplitCall call{this, &arena, batch};
    const bool bands = workers_ && !phases_.empty();
    for (size_t i = 0; bands && i < phases_.size(); ++i) {
      arena.phase_claimed[i].store(0, std::memory_order_relaxed);
      arena.phase_done[i].store(0, std::memory_order_relaxed);
    }  // published to the helpers by try_run's job hand-off
    if (!bands || !workers_->try_run(&SplitCall::job, &call)) run_steps(arena, batch, 0, steps_.size());
    // Outputs that are not written by a kernel: graph inputs or repeated output values.
    for (const auto& [slot, buf, floats] : output_copies_) {
      std::memcpy(outputs[static_cast<size_t>(slot)], arena.buf[static_cast<size_t>(buf)],
                  static_cast<size_t>(floats * batch) * sizeof(float));
    }
  }

  // Runs steps [first, last) whole over `batch` samples on this thread.
  void run_steps(Arena& arena, int64_t batch, size_t first, size_t last) const {
    for (size_t i = first; i < last; ++i) {
      const Step& st = steps_[i];
      const void** ins = arena.in_ptrs.data() + step_in_ptr_[i];
      for (size_t j = 0; j < st.in.size(); ++j) ins[j] = arena.buf[static_cast<size_t>(st.in[j])];
      KernelArgs args{ins, arena.buf[static_cast<size_t>(st.out)], weights_.data(), batch, helper_table()};
      st.fn(&args);
    }
  }

  // Band `band` of a split step, sample by sample (kernel_parts.h), run by participant p.
  void run_part(Arena& arena, int64_t batch, const Step& st, int band, int p) const {
    const StepPart& part = st.parts[static_cast<size_t>(band)];
    const void** ins = arena.part_ptrs.data() + static_cast<size_t>(p) * max_step_inputs_;
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t j = 0; j < st.in.size(); ++j) {
        const auto buf = static_cast<size_t>(st.in[j]);
        ins[j] = arena.buf[buf] + b * buffers_[buf].floats + part.in_off[j];
      }
      const auto out = static_cast<size_t>(st.out);
      KernelArgs args{ins, arena.buf[out] + b * buffers_[out].floats + part.out_off, weights_.data(), 1, helper_table()};
      part.fn(&args);
    }
  }

  // One chunk run by the participants of the worker pool that turn up, phase by phase. Each phase
  // is a number of bands (a split step's parts, or 1 for a run of whole steps) that whoever comes
  // first claims; a participant starts on a phase only when every band of the one before is done.
  // The caller alone finishes the chunk if no helper turns up (worker_pool.h).
  struct SplitCall {
    const JitEngineImpl* engine;
    Arena* arena;
    int64_t batch;
    static void job(void* ctx, int p) {
      const auto& c = *static_cast<SplitCall*>(ctx);
      const JitEngineImpl& e = *c.engine;
      Arena& a = *c.arena;
      for (size_t i = 0; i < e.phases_.size(); ++i) {
        const Phase& ph = e.phases_[i];
        const int bands = ph.split ? static_cast<int>(e.steps_[ph.first].parts.size()) : 1;
        if (i > 0) {
          const int before = e.phase_bands_[i - 1];
          std::atomic<int>& done = a.phase_done[i - 1];
          WorkerPool::wait_until([&] { return done.load(std::memory_order_acquire) == before; });
        }
        for (int b; (b = a.phase_claimed[i].fetch_add(1, std::memory_order_relaxed)) < bands;) {
          if (ph.split) e.run_part(a, c.batch, e.steps_[ph.first], b, p);
          else e.run_steps(a, c.batch, ph.first, ph.last);
          a.phase_done[i].fetch_add(1, std::memory_order_release);
        }
      }
      if (p == 0) {  // the caller returns only with the chunk complete
        const int last = e.phase_bands_.back();
        std::atomic<int>& done = a.phase_done[e.phases_.size() - 1];
        WorkerPool::wait_until([&] { return done.load(std::memory_order_acquire) == last; });
      }
    }
  };

  int threads() const override { return workers_ ? workers_->participants() : 1; }
  std::string name() const override { return std::string("jit-") + isa_id(isa_); }
  Isa isa() const override { return isa_; }
  const IsaSelection& isa_selection() const override { return selection_; }
  // make_jit_engine records how the ISA was chosen before handing the engine out.
  void set_isa_selection(IsaSelection s) { selection_ = std::move(s); }
  const std::vector<CompiledKernel>& kernels() const override { return module_.kernels(); }
  size_t code_bytes() const override { return module_.code_bytes(); }
  uint64_t code_hash() const override { return module_.code_hash(); }
  int64_t arena_floats_per_sample() const override { return arena_floats_; }
  int64_t chunk_samples() const override { return chunk_samples_; }
  std::vector<std::string> node_kernels(size_t node) const override {
    std::vector<std::string> out;
    for (const PlannedKernel& k : plan_) {
      if (k.node == static_cast<int>(node)) out.push_back(k.kernel.str());
    }
    return out;
  }

 private:
  // ---- lowering and code generation ----
  // Lowers every node into planned kernels (core/jit/lower/), then compiles the plan in order.
  // The uint8 conversion kernels of the inputs come first, compiled as their buffers are made.
  void lower() {
    LowerContext cx(g_, isa_, math_);
    lower_graph(cx);
    // The uint8 -> float32 conversion kernels of the inputs (used when the caller passes uint8
    // data) are compiled first, then the plan in order.
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const ValueId v = g_.inputs[i];
      input_buf_.push_back(cx.inputs[i].input);
      input_u8_buf_.push_back(cx.inputs[i].u8);
      UnarySpec us;
      us.count = element_count(g_.values[v].shape, g_.values[v].name);
      us.u8 = true;
      const KernelSpec spec = us;
      KernelName kn;
      kn.dtype = "u8";
      kn.op = "to-f32";
      kn.isa = isa_;
      input_u8_fn_.push_back(module_.compile(g_.values[v].name + ": " + kn.str(), spec));
    }
    // Graph outputs not produced into their slot (graph inputs, repeated outputs, aliases).
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const ValueId v = g_.outputs[i];
      const int b = cx.value_buf[static_cast<size_t>(v)];
      const Buffer& bf = cx.buffers[static_cast<size_t>(b)];
      if (bf.kind == Buffer::kOutput && bf.index == static_cast<int>(i)) continue;
      output_copies_.push_back({static_cast<int>(i), b, element_count(g_.values[v].shape, "")});
    }
    buffers_ = std::move(cx.buffers);
    weights_ = std::move(cx.weights);
    plan_ = std::move(cx.kernels);
    for (const PlannedKernel& k : plan_) {
      Step s;
      s.fn = module_.compile(k.name, k.spec);
      s.in = k.in;
      s.out = k.out;
      s.name = k.name;
      steps_.push_back(std::move(s));
    }
  }

  // ---- memory plan ----
  void plan_memory() {
    std::vector<GraphInputBuffers> inputs;
    for (size_t i = 0; i < input_buf_.size(); ++i) inputs.push_back({input_buf_[i], input_u8_buf_[i]});
    std::vector<int> live_to_end;
    for (const auto& c : output_copies_) live_to_end.push_back(std::get<1>(c));
    arena_floats_ = jit::plan_memory(buffers_, plan_, inputs, live_to_end);
    size_t total_in = 0;
    for (const Step& s : steps_) {
      step_in_ptr_.push_back(total_in);
      total_in += s.in.size();
      max_step_inputs_ = std::max(max_step_inputs_, s.in.size());
    }
    in_ptr_count_ = total_in;
  }

  // EngineOptions::threads: with more than one participant (auto: nnd::auto_threads()), every step
  // worth a phase of its own (JitConfig::min_split_flops) gets one band of output rows per participant, compiled after
  // the whole kernels (so a single-thread engine's code, and its hash, stay as they were).
  void plan_threads(int requested, int64_t min_split_flops) {
    const int threads = requested == 0 ? nnd::auto_threads(flops_per_sample_, available_cores()) : requested;
    if (threads < 2) return;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const PlannedKernel& k = plan_[i];
      const int64_t flops = splittable_flops(k.spec);
      if (flops == 0 || flops < min_split_flops) continue;
      std::vector<KernelPart> parts = split_kernel(k, threads);
      for (size_t t = 0; t < parts.size(); ++t) {
        StepPart sp;
        std::string name = k.name;
        name += " [part ";
        name += std::to_string(t + 1);
        name += "/";
        name += std::to_string(parts.size());
        name += "]";
        sp.fn = module_.compile(name, parts[t].spec);
        sp.in_off = std::move(parts[t].in_off);
        sp.out_off = parts[t].out_off;
        steps_[i].parts.push_back(std::move(sp));
      }
    }
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (!steps_[i].parts.empty()) {
        phases_.push_back({i, i + 1, true});
      } else if (phases_.empty() || phases_.back().split) {
        phases_.push_back({i, i + 1, false});
      } else {
        phases_.back().last = i + 1;
      }
    }
    if (std::none_of(phases_.begin(), phases_.end(), [](const Phase& p) { return p.split; })) {
      phases_.clear();  // no kernel pays for bands: a single sample runs on one thread
      // A batch still splits by samples (run) when one sample per participant pays for it.
      if (flops_per_sample_ >= min_split_flops) workers_ = std::make_unique<WorkerPool>(threads);
      return;
    }
    for (const Phase& p : phases_) phase_bands_.push_back(p.split ? static_cast<int>(steps_[p.first].parts.size()) : 1);
    workers_ = std::make_unique<WorkerPool>(threads);
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

  // ---- arena pool: one arena per concurrent call; no allocation and no lock once warm ----
  // A fixed array of slots, each empty or holding an idle arena. acquire() takes the first arena
  // it finds (one atomic exchange per slot looked at); release() puts the arena into the first
  // empty slot. Only when every slot is empty (more calls at once than ever before) is a new
  // arena made, and only when every slot is full (more than kArenaSlots calls at once) is one
  // freed: both are the cold path. Two calls racing for the same slot at worst make one arena
  // more than strictly needed.
  std::unique_ptr<Arena> acquire() {
    for (std::atomic<Arena*>& slot : pool_) {
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      if (Arena* a = slot.exchange(nullptr, std::memory_order_acquire)) return std::unique_ptr<Arena>(a);
    }
    return new_arena();
  }
  std::unique_ptr<Arena> new_arena() const {
    auto a = std::make_unique<Arena>();
    a->buf.assign(buffers_.size(), nullptr);
    a->in_ptrs.assign(in_ptr_count_ + 1, nullptr);
    a->chunk_in.assign(g_.inputs.size(), InputView{});
    a->chunk_out.assign(g_.outputs.size(), nullptr);
    a->chunk_indices.assign(index_outputs_.size(), nullptr);
    a->index_in.resize(index_outputs_.size());
    if (workers_) {
      a->part_ptrs.assign(static_cast<size_t>(workers_->participants()) * max_step_inputs_ + 1, nullptr);
      a->phase_claimed = std::make_unique<std::atomic<int>[]>(phases_.size());
      a->phase_done = std::make_unique<std::atomic<int>[]>(phases_.size());
    }
    return a;
  }
  void release(std::unique_ptr<Arena> a) {
    for (std::atomic<Arena*>& slot : pool_) {
      Arena* empty = nullptr;
      if (slot.load(std::memory_order_relaxed) == nullptr &&
          slot.compare_exchange_strong(empty, a.get(), std::memory_order_release, std::memory_order_relaxed)) {
        a.release();  // owned by the slot now
        return;
      }
    }
  }

 public:
  ~JitEngineImpl() override {
    for (std::atomic<Arena*>& slot : pool_) delete slot.exchange(nullptr);
  }

 private:

  Graph g_;      // what the kernels compute: the graph after the passes, without its ArgMax outputs
  Graph whole_;  // graph(): g_'s nodes, then the ArgMax nodes and their views (index_outputs.h)
  std::vector<IndexOutput> index_outputs_;
  CpuFeatures features_;
  Isa isa_;
  IsaSelection selection_;
  MathMode math_;
  std::string dump_dir_;
  float arena_fill_ = 0.0f;  // JitConfig::arena_fill
  KernelModule module_;
  std::vector<Buffer> buffers_;
  std::vector<Step> steps_;
  std::vector<PlannedKernel> plan_;  // steps_[i] runs plan_[i]
  std::vector<int> input_buf_, input_u8_buf_;
  std::vector<KernelFn> input_u8_fn_;
  std::vector<std::tuple<int, int, int64_t>> output_copies_;  // (output slot, buffer, floats/sample)
  std::vector<float> weights_;
  int64_t arena_floats_ = 0;
  size_t in_ptr_count_ = 0;
  std::vector<size_t> step_in_ptr_;  // per step: its first input pointer in Arena::in_ptrs
  size_t max_step_inputs_ = 0;
  std::vector<Phase> phases_;            // split calls (plan_threads); empty: single thread
  std::vector<int> phase_bands_;         // per phase: its bands (a split step's parts, else 1)
  std::unique_ptr<WorkerPool> workers_;  // null: single thread
  std::vector<std::unique_ptr<Arena>> group_arenas_;  // per participant, for sample groups (run)
  std::vector<int64_t> in_count_, out_count_;  // elements per sample of each input / output
  int64_t chunk_samples_ = 1;
  int64_t flops_per_sample_ = 0;  // core/ir/cost.h, after the passes
  int64_t min_split_flops_ = 0;   // JitConfig::min_split_flops
  // Idle arenas (acquire / release). 32: more threads than the daemon's workers on any robot.
  static constexpr size_t kArenaSlots = 32;
  std::array<std::atomic<Arena*>, kArenaSlots> pool_{};
};

std::unique_ptr<JitEngineImpl> make_for_isa(const Graph& g, const EngineOptions& options, const JitConfig& config, Isa isa) {
  EngineOptions o = options;
  o.isa = isa;
  return std::make_unique<JitEngineImpl>(g, o, config);
}

// Inputs and outputs for `batch` samples of the graph an engine compiled (its shapes inferred),
// inputs pseudo-random in [0, 1) (float) or 0..255 (uint8) from a fixed seed: timing must not
// depend on the run, and zeros could take paths real data does not.
struct SyntheticIo {
  std::vector<std::vector<float>> f32;
  std::vector<std::vector<uint8_t>> u8;
  std::vector<InputView> in;
  std::vector<std::vector<int64_t>> out;  // 8 bytes per element: room for any output dtype
  std::vector<OutputView> out_ptrs;

  SyntheticIo(const Graph& g, int64_t batch) {
    uint32_t state = 0x9E3779B9u;
    auto next = [&state] {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      return state;
    };
    f32.resize(g.inputs.size());
    u8.resize(g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
      const auto n = static_cast<size_t>(checked_mul(batch, element_count(v.shape, v.name), "isa calibration input"));
      if (v.dtype == DType::kUInt8) {
        u8[i].resize(n);
        for (uint8_t& x : u8[i]) x = static_cast<uint8_t>(next() >> 24);
        in.push_back({DType::kUInt8, u8[i].data()});
      } else {
        f32[i].resize(n);
        for (float& x : f32[i]) x = static_cast<float>(next() >> 8) * (1.0f / 16777216.0f);
        in.push_back({DType::kFloat32, f32[i].data()});
      }
    }
    for (ValueId id : g.outputs) {
      const Value& v = g.values[static_cast<size_t>(id)];
      out.emplace_back(static_cast<size_t>(checked_mul(batch, element_count(v.shape, v.name), "isa calibration output")));
      out_ptrs.push_back({output_view_dtype(v.dtype), out.back().data()});
    }
  }
};

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// isa auto (make_jit_engine's comment): the only ISA, the cached choice, or a measurement.
std::unique_ptr<JitEngine> make_auto_isa_engine(const Graph& g, const EngineOptions& options, const JitConfig& config) {
  using Source = IsaSelection::Source;
  const CpuFeatures features = config.features ? *config.features : detect_cpu_features();
  std::vector<Isa> candidates;
  for (Isa isa : all_isas()) {
    if (features.has(isa)) candidates.push_back(isa);
  }
  IsaSelection sel;
  sel.tie_margin = config.isa_calibration.tie_margin;
  sel.cache_path = options.isa_cache;
  if (candidates.size() <= 1) {
    std::unique_ptr<JitEngineImpl> e = make_for_isa(g, options, config, features.best());  // best(): none throws
    sel.source = Source::kOnlyCandidate;
    sel.isa = e->isa();
    e->set_isa_selection(std::move(sel));
    return e;
  }
  const int64_t batch = std::max<int64_t>(1, options.isa_calibration_batch);
  // A large network is timed by its stand-in (isa_calibration_standin.h), keyed by the stand-in.
  sel.standin = calibrates_on_standin(g);
  const Graph& timed = sel.standin ? isa_standin_graph() : g;
  const IsaCalibrationKey key{features.identity(), graph_content_hash(timed), batch, options.math};
  std::optional<IsaCalibrationCache> cache;
  if (!options.isa_cache.empty()) cache.emplace(options.isa_cache);
  // The file first (what every process on this machine shares), then this process's earlier
  // choice (a reload when the file could not keep it), else measure.
  std::optional<IsaCalibrationEntry> hit;
  if (cache) hit = cache->lookup(key, &sel.warnings);
  sel.source = Source::kCache;
  if (!hit || !features.has(hit->isa)) {
    hit = remembered_isa_choice(options.isa_cache, key);
    sel.source = Source::kRemembered;
    if (hit && features.has(hit->isa) && cache) cache->store(*hit, &sel.warnings);  // put it back
  }
  if (hit && features.has(hit->isa)) {
    std::unique_ptr<JitEngineImpl> e = make_for_isa(g, options, config, hit->isa);
    remember_isa_choice(options.isa_cache, *hit);
    sel.isa = hit->isa;
    sel.timings = std::move(hit->timings);
    e->set_isa_selection(std::move(sel));
    return e;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<JitEngineImpl>> engines;
  EngineOptions timed_options = options;
  if (sel.standin) timed_options.threads = 1;  // the stand-in measures the kernels, not a pool
  for (Isa isa : candidates) engines.push_back(make_for_isa(timed, timed_options, config, isa));
  SyntheticIo io(engines.front()->graph(), batch);
  TimeRuns time_runs = [&](size_t k, int runs) {
    if (config.isa_time_runs) return config.isa_time_runs(candidates[k], runs);
    // This thread's CPU time, not the wall clock: time the thread spent preempted by another
    // process is not the code's. On the busy 2-core VM (load 6-7), 8 calibrations of bop by the
    // wall clock put AVX-512/AVX2 at 0.92-1.07 and chose AVX-512 three times; by CPU time at
    // 1.005-1.058, AVX2 every time.
    const double start = thread_cpu_us();
    for (int r = 0; r < runs; ++r) engines[k]->run(batch, io.in, io.out_ptrs);
    return thread_cpu_us() - start;
  };
  sel.source = Source::kMeasured;
  sel.timings = measure_isas(candidates, time_runs, config.isa_calibration);
  sel.isa = choose_isa(sel.timings, config.isa_calibration.tie_margin);
  sel.calibration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  remember_isa_choice(options.isa_cache, {key, sel.isa, sel.timings});
  if (cache) cache->store({key, sel.isa, sel.timings}, &sel.warnings);
  const auto chosen = static_cast<size_t>(std::find(candidates.begin(), candidates.end(), sel.isa) - candidates.begin());
  std::unique_ptr<JitEngineImpl> e;
  if (sel.standin) {
    engines.clear();
    e = make_for_isa(g, options, config, sel.isa);
  } else {
    e = std::move(engines[chosen]);
  }
  e->set_isa_selection(std::move(sel));
  return e;
}

}  // namespace

std::unique_ptr<JitEngine> make_jit_engine(const Graph& g, const EngineOptions& options, const JitConfig& config) {
  if (options.isa.is_auto()) return make_auto_isa_engine(g, options, config);
  auto e = std::make_unique<JitEngineImpl>(g, options, config);
  IsaSelection sel;
  sel.isa = e->isa();
  e->set_isa_selection(std::move(sel));
  return e;
}

std::vector<UnsupportedLayer> jit_unsupported_layers(const Graph& graph) {
  Graph g = graph;
  verify_structure(g);
  infer_shapes(g);
  std::vector<UnsupportedLayer> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (auto why = recurrent_limit(g, n)) {
      out.push_back({i, ErrorCode::kUnsupported, g.node_context(n) + ": not compiled by the JIT yet (" + *why + ")"});
    }
  }
  // Kernels the architecture's generators do not emit (generator_emits): lowering for the build's
  // most capable ISA records them instead of stopping at the first. It lowers the graph after the
  // required passes (recurrent layers expanded into nodes named "<layer>/..."), whose nodes are
  // traced back to the layer they came from. Any other lowering error is make_jit_engine's.
  std::vector<LowerContext::Unsupported> missing;
  Graph expanded = g;
  try {
    passes::make_required_pipeline("").run(expanded);
    expanded = split_index_outputs(expanded).body;
    LowerContext cx(expanded, all_isas().back(), MathMode::kExact);
    cx.unsupported = &missing;
    lower_graph(cx);
  } catch (const Error& e) {
    // A limit or an unsupported parameter is make_jit_engine's to report; a broken invariant
    // of the JIT is never hidden behind "everything compiles".
    if (e.code() == ErrorCode::kInternal) throw;
  }
  for (LowerContext::Unsupported& m : missing) {
    const std::string& name = expanded.nodes[m.node].name;
    size_t best = 0;
    bool found = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const std::string& layer = g.nodes[i].name;
      const bool from = name == layer || (name.size() > layer.size() && name.compare(0, layer.size(), layer) == 0 &&
                                          name[layer.size()] == '/');
      if (from && (!found || layer.size() > g.nodes[best].name.size())) {
        best = i;
        found = true;
      }
    }
    if (!found) continue;
    m.node = best;
    const bool listed = std::any_of(out.begin(), out.end(), [&](const UnsupportedLayer& u) { return u.node == m.node; });
    if (!listed) out.push_back({m.node, ErrorCode::kUnsupported, std::move(m.message)});
  }
  std::sort(out.begin(), out.end(), [](const UnsupportedLayer& a, const UnsupportedLayer& b) { return a.node < b.node; });
  return out;
}

}  // namespace nnd::jit
