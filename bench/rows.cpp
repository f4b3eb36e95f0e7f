#include "bench/rows.hpp"

namespace pg::bench {
namespace {

struct Shape {
  std::vector<int64_t> dims;  // N, C, spatial...
};

Row row(Op op, Shape s, int64_t k, int64_t stride, int64_t pad, bool ceil, bool channels_last,
        DType dtype, Divisor divisor) {
  Problem p;
  p.op = op;
  p.dims = static_cast<int>(s.dims.size()) - 2;
  p.n = s.dims[0];
  p.c = s.dims[1];
  for (int i = 0; i < p.dims; ++i) {
    const int a = kAxes - p.dims + i;
    p.in[a] = s.dims[2 + i];
    p.kernel[a] = k;
    p.stride[a] = stride;
    p.pad_begin[a] = p.pad_end[a] = pad;
  }
  p.ceil_mode = ceil;
  p.layout = channels_last ? Layout::channels_last : Layout::channels_first;
  p.dtype = dtype;
  p.divisor = divisor;
  finalize(p);

  std::string name = std::string(op == Op::max ? "maxpool" : "avgpool") + std::to_string(p.dims) + "d_bwd (";
  for (size_t i = 0; i < s.dims.size(); ++i) name += (i ? ", " : "") + std::to_string(s.dims[i]);
  name += ") k" + std::to_string(k) + "s" + std::to_string(stride) + "p" + std::to_string(pad);
  if (op == Op::avg) name += divisor == Divisor::exclude_pad ? "" : " cip";
  if (ceil) name += " ceil";
  if (op == Op::avg && divisor == Divisor::exclude_pad) name += " nopad";
  if (channels_last) name += " CL";
  name += dtype == DType::f16 ? " float16" : " float32";
  if (op == Op::max) name += " idx=int64";
  return {name, p};
}

}  // namespace

std::vector<Row> baseline_rows() {
  const Shape m2{{64, 64, 112, 112}}, m2b{{32, 256, 56, 56}}, m3{{8, 64, 16, 56, 56}};
  const Shape a3{{16, 64, 16, 56, 56}}, a3b{{8, 64, 16, 56, 56}}, a3c{{2, 32, 128, 128, 128}};
  const Shape a2{{64, 128, 56, 56}};
  const DType f32 = DType::f32, f16 = DType::f16;
  const Divisor inc = Divisor::include_pad, exc = Divisor::exclude_pad;
  return {
      row(Op::max, m2, 3, 2, 1, false, false, f32, inc),
      row(Op::max, m2, 3, 2, 1, false, true, f32, inc),
      row(Op::max, m2b, 2, 2, 0, false, false, f32, inc),
      row(Op::max, m2, 3, 2, 1, false, false, f16, inc),
      row(Op::max, m2, 3, 2, 1, true, false, f32, inc),
      row(Op::max, m3, 3, 2, 1, false, false, f32, inc),
      row(Op::max, m3, 2, 2, 0, false, false, f32, inc),
      row(Op::max, m3, 3, 1, 1, false, false, f32, inc),
      row(Op::avg, a3, 2, 2, 0, false, false, f32, inc),
      row(Op::avg, a3, 2, 2, 0, false, true, f32, inc),
      row(Op::avg, a3b, 3, 1, 1, false, false, f32, exc),
      row(Op::avg, a3b, 3, 1, 1, false, false, f32, inc),
      row(Op::avg, a3c, 3, 2, 1, true, false, f32, exc),
      row(Op::avg, a3, 2, 2, 0, false, false, f16, inc),
      row(Op::avg, a2, 3, 1, 1, false, false, f32, inc),
      row(Op::avg, a2, 2, 2, 0, false, false, f32, inc),
  };
}

}  // namespace pg::bench
