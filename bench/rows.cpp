#include "bench/rows.hpp"

#include "src/harness/selection.hpp"

namespace pg::bench {
namespace {

Row row(Op op, std::vector<int64_t> dims, int64_t k, int64_t stride, int64_t pad, bool ceil, bool channels_last,
        DType dtype, Divisor divisor) {
  Problem p;
  p.op = op;
  p.dims = static_cast<int>(dims.size()) - 2;
  p.n = dims[0];
  p.c = dims[1];
  set_window(p, uniform_window({dims.begin() + 2, dims.end()}, k, stride, pad));
  p.ceil_mode = ceil;
  p.layout = channels_last ? Layout::channels_last : Layout::channels_first;
  p.dtype = dtype;
  p.divisor = divisor;
  finalize(p);
  return make_row("", p);
}

}  // namespace

const char* torch_dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    case DType::f32: return "float32";
    case DType::f64: return "float64";
  }
  return "?";
}

std::string describe_row(const Problem& p) {
  std::string name = std::string(p.op == Op::max ? "maxpool" : "avgpool") + std::to_string(p.dims) + "d_bwd (" +
                     std::to_string(p.n) + ", " + std::to_string(p.c);
  for (int a = kAxes - p.dims; a < kAxes; ++a) name += ", " + std::to_string(p.in[a]);
  name += ") k" + axes_text(p, p.kernel) + "s" + axes_text(p, p.stride) + "p" + axes_text(p, p.pad_begin);
  bool asymmetric = false, dilated = false;
  for (int a = 0; a < kAxes; ++a) {
    asymmetric = asymmetric || p.pad_begin[a] != p.pad_end[a];
    dilated = dilated || p.dilation[a] != 1;
  }
  if (asymmetric) name += '-' + axes_text(p, p.pad_end);
  if (dilated) name += 'd' + axes_text(p, p.dilation);
  const bool avg = p.op == Op::avg;
  if (avg && p.has_divisor_override) name += " div" + std::to_string(p.divisor_override);
  else if (avg && p.divisor == Divisor::include_pad) name += " cip";
  else if (avg && p.divisor == Divisor::full_kernel) name += " fullk";
  if (p.ceil_mode) name += " ceil";
  if (avg && !p.has_divisor_override && p.divisor == Divisor::exclude_pad) name += " nopad";
  if (p.layout == Layout::channels_last) name += " CL";
  name += std::string(" ") + torch_dtype_name(p.dtype);
  if (!avg) {
    if (p.index_format == IndexFormat::plane) name += std::string(" idx=") + (p.index_type == IndexType::i64 ? "int64" : index_type_name(p.index_type));
    else name += std::string(" idx=") + index_format_name(p.index_format) + "/" + index_type_name(p.index_type);
  }
  return name;
}

Row make_row(const std::string& label, const Problem& p) {
  return {label.empty() ? describe_row(p) : label + ": " + describe_row(p), p, label};
}

std::vector<Row> resized(const std::vector<Row>& rows, int64_t batch, int64_t channels) {
  std::vector<Row> out;
  for (const Row& r : rows) {
    Problem p = r.problem;
    if (batch > 0) p.n = batch;
    if (channels > 0) p.c = channels;
    finalize(p);
    out.push_back(make_row(r.label, p));
  }
  return out;
}

std::vector<Row> baseline_rows() {
  const std::vector<int64_t> m2{64, 64, 112, 112}, m2b{32, 256, 56, 56}, m3{8, 64, 16, 56, 56};
  const std::vector<int64_t> a3{16, 64, 16, 56, 56}, a3b{8, 64, 16, 56, 56}, a3c{2, 32, 128, 128, 128};
  const std::vector<int64_t> a2{64, 128, 56, 56};
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
