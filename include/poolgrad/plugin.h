/* The plugin entry point: how a shared library hands poolgrad its pooling-backward variants.
 *
 * Plain C, so that a plugin built by any compiler (gcc, clang, nvcc, hipcc) loads into poolgrad
 * built by another. A plugin exports one function,
 *
 *     POOLGRAD_PLUGIN_EXPORT const poolgrad_plugin* poolgrad_plugin_entry(void);
 *
 * returning a struct that lives as long as the library (a static). poolgrad reads abi_version
 * first and loads only a plugin built against its own POOLGRAD_PLUGIN_ABI_VERSION; it never
 * unloads one. Each variant then appears as "PLUGIN.VARIANT" and is checked against the oracle,
 * property-fuzzed, benchmarked and selectable like poolgrad's own:
 *
 *     poolgrad variants --plugin ./libmine.so
 *     poolgrad check --plugin ./libmine.so --variant mine.max.scatter
 *
 * The problem model is poolgrad's (README "The semantic model"); the struct below carries every
 * axis of it. A variant answers only for problems its domain admits and its supports() accepts,
 * and must compute exactly what the oracle does there: the fuzz will find out otherwise.
 */
#ifndef POOLGRAD_PLUGIN_H
#define POOLGRAD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "poolgrad/version.h"

#ifdef __cplusplus
#define POOLGRAD_EXTERN_C extern "C"
#else
#define POOLGRAD_EXTERN_C
#endif
#define POOLGRAD_PLUGIN_EXPORT POOLGRAD_EXTERN_C __attribute__((visibility("default")))

/* The symbol poolgrad looks up, and its type. */
#define POOLGRAD_PLUGIN_ENTRY_SYMBOL "poolgrad_plugin_entry"

enum { POOLGRAD_OP_MAX = 0, POOLGRAD_OP_AVG = 1 };
/* What a variant reads besides dy. */
enum {
  POOLGRAD_INPUTS_DY = 0,         /* average pooling */
  POOLGRAD_INPUTS_DY_INDICES = 1, /* max pooling from the forward's stored argmax indices */
  POOLGRAD_INPUTS_DY_X = 2        /* max pooling, argmax recomputed from the forward input x */
};
enum { POOLGRAD_F16 = 0, POOLGRAD_BF16 = 1, POOLGRAD_F32 = 2, POOLGRAD_F64 = 3 };
/* NC[D]HW, or N[D]HWC (channels last). */
enum { POOLGRAD_CHANNELS_FIRST = 0, POOLGRAD_CHANNELS_LAST = 1 };
/* Average pooling's divisor: PyTorch's count_include_pad (window clamped to input + padding),
 * the whole kernel (cuDNN, MIOpen, oneDNN, CK), or only the taps inside the input. */
enum { POOLGRAD_DIVISOR_INCLUDE_PAD = 0, POOLGRAD_DIVISOR_FULL_KERNEL = 1, POOLGRAD_DIVISOR_EXCLUDE_PAD = 2 };
/* Max pooling: which of equal maxima wins, in row-major window order. */
enum { POOLGRAD_TIE_FIRST = 0, POOLGRAD_TIE_LAST = 1 };
/* Max pooling: a NaN wins (PyTorch; the last NaN wins) or never wins (MIOpen, oneDNN, ORT). */
enum { POOLGRAD_NAN_PROPAGATE = 0, POOLGRAD_NAN_IGNORE = 1 };
/* Stored indices: flat in the (n, c) plane (PyTorch); global flat, row- or column-major (ONNX);
 * the row-major tap number inside the window (MIOpen, oneDNN). A negative index marks a window
 * with no tap inside the input. */
enum { POOLGRAD_INDEX_PLANE = 0, POOLGRAD_INDEX_GLOBAL_ROW = 1, POOLGRAD_INDEX_GLOBAL_COL = 2, POOLGRAD_INDEX_WINDOW = 3 };
enum { POOLGRAD_INDEX_I64 = 0, POOLGRAD_INDEX_I32 = 1, POOLGRAD_INDEX_U8 = 2 };

/* One backward problem. Spatial arrays always hold three axes (D, H, W): a 2D problem has D of
 * size 1 with kernel 1, stride 1, dilation 1 and no padding, a 1D problem D and H so; computing
 * them as 3D gives the same result and the same indices. out[] is the forward's output size. */
typedef struct poolgrad_problem {
  int32_t op;   /* POOLGRAD_OP_* */
  int32_t dims; /* spatial dims as the user gave them, 1..3 */
  int64_t n, c;
  int64_t in[3], out[3];
  int64_t kernel[3], stride[3], dilation[3];
  int64_t pad_begin[3], pad_end[3];
  int32_t ceil_mode;            /* how out[] was computed; kernels read out[] */
  int32_t divisor;              /* POOLGRAD_DIVISOR_*, average pooling */
  int32_t has_divisor_override; /* 1: divide by divisor_override instead */
  int32_t tie;                  /* POOLGRAD_TIE_*, max pooling */
  int64_t divisor_override;
  int32_t nan;          /* POOLGRAD_NAN_*, max pooling */
  int32_t index_format; /* POOLGRAD_INDEX_PLANE..WINDOW, stored indices */
  int32_t index_type;   /* POOLGRAD_INDEX_I64..U8, stored indices */
  int32_t layout;       /* POOLGRAD_CHANNELS_* */
  int32_t dtype;        /* POOLGRAD_F16..F64: x, dy and dx */
  /* Validation rules of the problem's framework, not read by kernels: pads at most half the
   * kernel (PyTorch), and avg_pool3d's input at least the kernel (PyTorch). */
  int32_t pad_limit_half_kernel;
  int32_t avg3d_input_at_least_kernel;
} poolgrad_problem;

/* The buffers of one run: dense tensors in the problem's layout and dtype, indices in its index
 * format and type, workspace_bytes() of workspace. Host memory for launch_cpu, device memory of
 * the current GPU for launch_gpu. dx holds garbage on entry: write every element. */
typedef struct poolgrad_buffers {
  const void* x;       /* POOLGRAD_INPUTS_DY_X only */
  const void* dy;
  const void* indices; /* POOLGRAD_INPUTS_DY_INDICES only */
  void* dx;
  void* workspace;
} poolgrad_buffers;

/* The problems a variant computes, as data: the fuzz draws its problems inside this, so a
 * narrow variant is not buried in cases it would refuse. A mask has bit (1u << value) for each
 * value admitted (POOLGRAD_F32, POOLGRAD_CHANNELS_LAST...); 0 admits every value. */
typedef struct poolgrad_domain {
  int32_t min_dims, max_dims; /* 0: 1 and 3 */
  uint32_t dtypes;
  uint32_t layouts;
  uint32_t index_formats; /* POOLGRAD_INPUTS_DY_INDICES only */
  uint32_t index_types;   /* POOLGRAD_INPUTS_DY_INDICES only */
  uint32_t ties;          /* max pooling */
  uint32_t nans;          /* max pooling */
  uint32_t divisors;      /* average pooling */
  /* Each 1 takes a feature away; 0 keeps it. */
  int32_t disjoint_windows;    /* only windows that never overlap (stride >= dilated kernel) */
  int32_t symmetric_pads;      /* pad_end == pad_begin on every axis */
  int32_t no_dilation;         /* dilation 1 on every axis */
  int32_t no_ceil_mode;        /* output sizes rounded down only */
  int32_t no_divisor_override; /* average pooling */
} poolgrad_domain;

/* Callbacks may run on several threads at once (poolgrad fuzz runs cases in parallel). Every
 * string a callback returns must outlive the call: return a literal. */
typedef struct poolgrad_variant {
  const char* name; /* letters, digits, '.', '_', '-'; shown as PLUGIN.NAME */
  int32_t op;       /* POOLGRAD_OP_* */
  int32_t inputs;   /* POOLGRAD_INPUTS_* */
  int32_t deterministic; /* 1: bitwise repeatable run to run, and poolgrad checks that it is */
  poolgrad_domain domain;
  /* NULL when the variant computes p, else one line saying why not. Called only for problems
   * the domain admits. A NULL callback: the domain says it all. */
  const char* (*supports)(const poolgrad_problem* p);
  /* Workspace bytes for p. A NULL callback: none. */
  size_t (*workspace_bytes)(const poolgrad_problem* p);
  /* dx for p from host buffers, done when it returns. NULL on success, else what failed. A NULL
   * callback: the variant does not run on the CPU backend. */
  const char* (*launch_cpu)(const poolgrad_problem* p, const poolgrad_buffers* b);
  /* The same from device buffers on the current GPU, enqueued on its default stream; poolgrad
   * synchronizes. A NULL callback: the variant does not run on a GPU. */
  const char* (*launch_gpu)(const poolgrad_problem* p, const poolgrad_buffers* b);
} poolgrad_variant;

typedef struct poolgrad_plugin {
  uint32_t abi_version; /* POOLGRAD_PLUGIN_ABI_VERSION; the first field in every version */
  const char* name;     /* letters, digits, '_', '-': the prefix of its variants' names */
  const poolgrad_variant* variants;
  size_t variant_count;
} poolgrad_plugin;

typedef const poolgrad_plugin* (*poolgrad_plugin_entry_fn)(void);

#endif
