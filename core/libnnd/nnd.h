/* nnd.h — libnnd: nnd's engines in your own process, behind a small versioned C API.
 *
 * The daemon (nnd) serves models to other processes; libnnd runs the same engines in the process
 * that calls it, for frameworks that run vision and behaviour as threads of one process. A model
 * is opened from its file with the options of a daemon config entry (config/SCHEMA.md, `models`):
 * the same keys, the same spellings, the same engine. Then the caller asks for its inputs and
 * outputs and runs batches into buffers of its own; nothing is copied and no thread is started
 * unless `threads` asks for helpers.
 *
 *   nnd_model_t* m;
 *   if (nnd_model_open("bop.onnx", NULL, &m) != NND_OK) { puts(nnd_last_error()); return 1; }
 *   nnd_tensor_info_t in = {sizeof in}, out = {sizeof out};
 *   nnd_model_input(m, 0, &in);  nnd_model_output(m, 0, &out);
 *   ... inputs: batch * in.sample_bytes bytes each, outputs: batch * out.sample_bytes ...
 *   nnd_model_run(m, batch, inputs, outputs);
 *   nnd_model_close(m);
 *
 * Tensors are dense, batch-major, channels-last arrays: input k of a run holds `batch` samples of
 * the shape nnd_model_input reports, in that input's dtype (float32, or uint8 when the options
 * say `inputs.NAME = uint8`, converted to float32 inside the engine); outputs are in the dtype
 * nnd_model_output reports (float32; int64 for the indices of an ONNX ArgMax/ArgMin).
 *
 * Threads: nnd_model_run may be called from several threads at once on the same model (each call
 * with its own buffers); the results do not depend on it. Everything else about a model
 * (nnd_model_input, nnd_model_engine, ...) only reads and is thread-safe too. nnd_model_close
 * must not overlap any other call on that model. An options object is for one thread at a time.
 *
 * Errors: every function that can fail returns an nnd_status (NND_OK is 0). nnd_last_error()
 * explains the calling thread's last failure (which file, which option, which layer), until that
 * thread's next failing call. Nothing in libnnd aborts, prints or exits.
 *
 * ABI: libnnd.so.1 keeps its binary interface within major version 1 (docs/libnnd.md "ABI"):
 * functions are only added, status codes only appended, and the structs a caller fills start
 * with `struct_size`, so they can grow. Linking: pkg-config name `nnd`; CMake:
 * find_package(nnd) then target nnd::nnd.
 */
#ifndef NND_H
#define NND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header: the nnd project version (CMake checks it at configure time). Compare
 * with nnd_version() to tell the header an application was built with from the library it runs
 * with. */
#define NND_VERSION_MAJOR 1
#define NND_VERSION_MINOR 0
#define NND_VERSION_PATCH 0

#if defined(__GNUC__)
#define NND_API __attribute__((visibility("default")))
#else
#define NND_API
#endif

typedef enum nnd_status {
  NND_OK = 0,
  NND_E_INVALID_ARGUMENT = 1, /* NULL pointer, batch 0, an unknown option or value, an input
                                 name the model does not have */
  NND_E_IO = 2,               /* the model (or quantization) file cannot be opened or read */
  NND_E_FORMAT = 3,           /* the file is not a model nnd reads: damaged, truncated, unknown */
  NND_E_UNSUPPORTED = 4,      /* well-formed, but a layer, parameter or option nnd (or this build:
                                 precision int8) does not handle */
  NND_E_LIMIT = 5,            /* a size or count over nnd's limits */
  NND_E_ISA_UNAVAILABLE = 6,  /* engine jit: the CPU lacks the instruction set asked for */
  NND_E_INTERNAL = 7,         /* a bug in nnd: please report it with nnd_last_error() */
  NND_E_OUT_OF_MEMORY = 8
} nnd_status;

typedef enum nnd_dtype {
  NND_FLOAT32 = 0,
  NND_UINT8 = 1,
  NND_INT64 = 2 /* an output of indices: an ONNX ArgMax / ArgMin (a classifier's label) */
} nnd_dtype;

#define NND_MAX_RANK 8

/* One input or output of a model. Set struct_size to sizeof(nnd_tensor_info_t) before the call;
 * the library writes at most that many bytes (fields are only ever appended). */
typedef struct nnd_tensor_info {
  uint32_t struct_size;
  nnd_dtype dtype;
  const char* name;          /* the model's name for it; valid until nnd_model_close */
  uint32_t rank;             /* of one sample (the batch axis is not counted) */
  int64_t dims[NND_MAX_RANK];
  uint64_t sample_elements;  /* product of dims */
  uint64_t sample_bytes;     /* sample_elements * size of dtype */
} nnd_tensor_info_t;

typedef struct nnd_options nnd_options_t;
typedef struct nnd_model nnd_model_t;

/* "1.0.0": the library's version (may be newer than the header's). */
NND_API const char* nnd_version(void);
/* "NND_E_IO", ...; "NND_E_UNKNOWN_STATUS" for a code this library does not know. Never NULL. */
NND_API const char* nnd_status_name(nnd_status status);
/* A short English text for the code ("model file cannot be read"). Never NULL. */
NND_API const char* nnd_strerror(nnd_status status);
/* What went wrong in this thread's last failing call, in detail; "" if none failed yet. */
NND_API const char* nnd_last_error(void);

/* ---- options: a model entry of the daemon's config, one key at a time ---------------------- */

/* A new set of options, all at their defaults (engine auto, isa auto, math exact, threads 1,
 * precision float32, every input float32). */
NND_API nnd_status nnd_options_new(nnd_options_t** options);
NND_API void nnd_options_free(nnd_options_t* options);
/* Sets one option, spelled as in a `models` entry of nnd.yaml (man nnd.yaml):
 *   engine                 auto | jit | reference
 *   isa                    auto | sse4.1 | avx2 | avx512 (x86-64) | neon (AArch64)
 *   math                   exact | fast
 *   threads                auto | 1..64
 *   precision              float32 | int8 (int8: NND_E_UNSUPPORTED at open in this version)
 *   quantization           FILE (for precision int8)
 *   inputs.NAME            uint8 | float32: what the caller passes for input NAME
 *   isa_calibration_cache  FILE | off: where isa auto keeps its measured choice (default off:
 *                          measured at every open, about 20 ms per ISA the CPU has)
 * An unknown key or value is NND_E_INVALID_ARGUMENT, with the accepted values (and the closest
 * key for a typo) in nnd_last_error(). Setting a key again replaces its value. */
NND_API nnd_status nnd_options_set(nnd_options_t* options, const char* key, const char* value);

/* ---- models --------------------------------------------------------------------------------- */

/* Loads the model file (Keras .h5 or .keras, ONNX .onnx; recognised by content), compiles it for
 * this CPU as the options say (NULL: the defaults) and runs it once on zeros. The options are
 * copied: free them whenever you like. On failure *model is NULL. */
NND_API nnd_status nnd_model_open(const char* path, const nnd_options_t* options,
                                  nnd_model_t** model);
/* Frees the model and its engine (helper threads included). NULL is allowed. */
NND_API void nnd_model_close(nnd_model_t* model);

NND_API uint32_t nnd_model_num_inputs(const nnd_model_t* model);  /* 0 for NULL */
NND_API uint32_t nnd_model_num_outputs(const nnd_model_t* model); /* 0 for NULL */
/* Input / output `index` (0-based, in the model's order). NND_E_INVALID_ARGUMENT for an index
 * out of range or a struct_size smaller than the first version of nnd_tensor_info_t. */
NND_API nnd_status nnd_model_input(const nnd_model_t* model, uint32_t index,
                                   nnd_tensor_info_t* info);
NND_API nnd_status nnd_model_output(const nnd_model_t* model, uint32_t index,
                                    nnd_tensor_info_t* info);
/* The engine that runs the model: "jit-avx2", "jit-neon", "reference", ... (valid until
 * nnd_model_close). */
NND_API const char* nnd_model_engine(const nnd_model_t* model);
/* What the engine choice was and why, one line each, as the daemon logs it: the ISA selection
 * ("isa avx2 (auto, measured: ...)"), the threads, and any warning (engine auto falling back to
 * the reference engine, naming the reason). Valid until nnd_model_close. */
NND_API const char* nnd_model_summary(const nnd_model_t* model);

/* Runs `batch` samples (at least 1, any number). inputs[k] points at batch * sample_bytes of
 * input k, outputs[k] at room for batch * sample_bytes of output k; the library reads the inputs
 * and writes the outputs only during the call. Safe to call from several threads at once. */
NND_API nnd_status nnd_model_run(nnd_model_t* model, uint32_t batch, const void* const* inputs,
                                 void* const* outputs);

#ifdef __cplusplus
}
#endif

#endif /* NND_H */
