/* A poolgrad plugin in plain C: max-pool backward from stored argmax indices, twice.
 *
 *   example.max.scatter      each dy element goes to the input element its index names, when that
 *                            element is a tap of the index's own window (a stored index may come
 *                            from anywhere: poolgrad's fuzz hands out foreign ones)
 *   example.max.scatter.bug  the same with a bug planted on purpose: its window test forgets the
 *                            padding, so it drops the gradient of a window's leading taps
 *
 * Both read f32, channels-first tensors and per-plane indices (PyTorch's), i64 or i32, in 1D to
 * 3D; their domain says so, and poolgrad generates their fuzz cases inside it. Build against an
 * installed poolgrad with the meson.build beside this file, then (README "Test your own kernel"):
 *
 *   poolgrad check --plugin build/libexample_plugin.so --variant example.max.scatter
 *   poolgrad fuzz --plugin build/libexample_plugin.so --variants 'example\.' --backend cpu --cases 300
 */
#include <poolgrad/plugin.h>

/* Stored index i of the problem's type: i64 or i32 (the domain admits no other). */
static int64_t index_at(const poolgrad_problem* p, const void* indices, int64_t i) {
  if (p->index_type == POOLGRAD_INDEX_I32) return ((const int32_t*)indices)[i];
  return ((const int64_t*)indices)[i];
}

/* Whether input position `pos` along `axis` is a tap of the window at output position `o`, whose
 * first tap sits at o * stride - pad. */
static int is_tap(const poolgrad_problem* p, int axis, int64_t o, int64_t pos, int64_t pad) {
  const int64_t offset = pos - (o * p->stride[axis] - pad);
  return offset >= 0 && offset % p->dilation[axis] == 0 && offset / p->dilation[axis] < p->kernel[axis];
}

static const char* scatter(const poolgrad_problem* p, const poolgrad_buffers* b, int forget_padding) {
  const int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
  const int64_t out_plane = p->out[0] * p->out[1] * p->out[2];
  const float* dy = (const float*)b->dy;
  float* dx = (float*)b->dx;
  for (int64_t i = 0; i < p->n * p->c * in_plane; ++i) dx[i] = 0.0f;
  for (int64_t plane = 0; plane < p->n * p->c; ++plane) {
    for (int64_t o = 0; o < out_plane; ++o) {
      const int64_t index = index_at(p, b->indices, plane * out_plane + o);
      if (index < 0 || index >= in_plane) continue; /* no tap (-1), or not a position of this plane */
      const int64_t pos[3] = {index / (p->in[1] * p->in[2]), index / p->in[2] % p->in[1], index % p->in[2]};
      const int64_t out_pos[3] = {o / (p->out[1] * p->out[2]), o / p->out[2] % p->out[1], o % p->out[2]};
      int inside = 1;
      for (int a = 0; a < 3; ++a) inside = inside && is_tap(p, a, out_pos[a], pos[a], forget_padding ? 0 : p->pad_begin[a]);
      if (inside) dx[plane * in_plane + index] += dy[plane * out_plane + o];
    }
  }
  return NULL;
}

static const char* launch_scatter(const poolgrad_problem* p, const poolgrad_buffers* b) { return scatter(p, b, 0); }
static const char* launch_scatter_bug(const poolgrad_problem* p, const poolgrad_buffers* b) { return scatter(p, b, 1); }

/* What both variants compute: the fuzz draws only problems inside it. */
static const poolgrad_domain kDomain = {
    .min_dims = 1,
    .max_dims = 3,
    .dtypes = 1u << POOLGRAD_F32,
    .layouts = 1u << POOLGRAD_CHANNELS_FIRST,
    .index_formats = 1u << POOLGRAD_INDEX_PLANE,
    .index_types = (1u << POOLGRAD_INDEX_I64) | (1u << POOLGRAD_INDEX_I32),
};

static const poolgrad_variant kVariants[] = {
    {.name = "max.scatter", .op = POOLGRAD_OP_MAX, .inputs = POOLGRAD_INPUTS_DY_INDICES, .deterministic = 1,
     .domain = kDomain, .launch_cpu = launch_scatter},
    {.name = "max.scatter.bug", .op = POOLGRAD_OP_MAX, .inputs = POOLGRAD_INPUTS_DY_INDICES, .deterministic = 1,
     .domain = kDomain, .launch_cpu = launch_scatter_bug},
};

static const poolgrad_plugin kPlugin = {
    .abi_version = POOLGRAD_PLUGIN_ABI_VERSION,
    .name = "example",
    .variants = kVariants,
    .variant_count = sizeof kVariants / sizeof kVariants[0],
};

POOLGRAD_PLUGIN_EXPORT const poolgrad_plugin* poolgrad_plugin_entry(void) { return &kPlugin; }
