#include "src/harness/c_problem.hpp"

namespace pg {

// The C enums are pg's enums by value: a conversion is a cast, checked here once.
static_assert(POOLGRAD_OP_MAX == int(Op::max) && POOLGRAD_OP_AVG == int(Op::avg));
static_assert(POOLGRAD_F16 == int(DType::f16) && POOLGRAD_BF16 == int(DType::bf16) &&
              POOLGRAD_F32 == int(DType::f32) && POOLGRAD_F64 == int(DType::f64));
static_assert(POOLGRAD_CHANNELS_FIRST == int(Layout::channels_first) &&
              POOLGRAD_CHANNELS_LAST == int(Layout::channels_last));
static_assert(POOLGRAD_DIVISOR_INCLUDE_PAD == int(Divisor::include_pad) &&
              POOLGRAD_DIVISOR_FULL_KERNEL == int(Divisor::full_kernel) &&
              POOLGRAD_DIVISOR_EXCLUDE_PAD == int(Divisor::exclude_pad));
static_assert(POOLGRAD_TIE_FIRST == int(TieRule::first) && POOLGRAD_TIE_LAST == int(TieRule::last));
static_assert(POOLGRAD_NAN_PROPAGATE == int(NanRule::propagate) && POOLGRAD_NAN_IGNORE == int(NanRule::ignore));
static_assert(POOLGRAD_INDEX_PLANE == int(IndexFormat::plane) && POOLGRAD_INDEX_GLOBAL_ROW == int(IndexFormat::global_row) &&
              POOLGRAD_INDEX_GLOBAL_COL == int(IndexFormat::global_col) && POOLGRAD_INDEX_WINDOW == int(IndexFormat::window));
static_assert(POOLGRAD_INDEX_I64 == int(IndexType::i64) && POOLGRAD_INDEX_I32 == int(IndexType::i32) &&
              POOLGRAD_INDEX_U8 == int(IndexType::u8));

namespace {

// The fields both structs spell alike: sizes and window geometry.
template <class To, class From>
void copy_numbers(To& to, const From& from) {
  to.dims = from.dims;
  to.n = from.n;
  to.c = from.c;
  for (int a = 0; a < kAxes; ++a) {
    to.in[a] = from.in[a];
    to.out[a] = from.out[a];
    to.kernel[a] = from.kernel[a];
    to.stride[a] = from.stride[a];
    to.dilation[a] = from.dilation[a];
    to.pad_begin[a] = from.pad_begin[a];
    to.pad_end[a] = from.pad_end[a];
  }
  to.divisor_override = from.divisor_override;
}

}  // namespace

poolgrad_problem to_c(const Problem& p) {
  poolgrad_problem c{};
  copy_numbers(c, p);
  c.op = int32_t(p.op);
  c.ceil_mode = p.ceil_mode;
  c.divisor = int32_t(p.divisor);
  c.has_divisor_override = p.has_divisor_override;
  c.tie = int32_t(p.tie);
  c.nan = int32_t(p.nan);
  c.index_format = int32_t(p.index_format);
  c.index_type = int32_t(p.index_type);
  c.layout = int32_t(p.layout);
  c.dtype = int32_t(p.dtype);
  c.pad_limit_half_kernel = p.pad_limit == PadLimit::half_kernel;
  c.avg3d_input_at_least_kernel = p.avg3d_input_at_least_kernel;
  return c;
}

Problem from_c(const poolgrad_problem& c) {
  Problem p;
  copy_numbers(p, c);
  p.op = Op(c.op);
  p.ceil_mode = c.ceil_mode != 0;
  p.divisor = Divisor(c.divisor);
  p.has_divisor_override = c.has_divisor_override != 0;
  p.tie = TieRule(c.tie);
  p.nan = NanRule(c.nan);
  p.index_format = IndexFormat(c.index_format);
  p.index_type = IndexType(c.index_type);
  p.layout = Layout(c.layout);
  p.dtype = DType(c.dtype);
  p.pad_limit = c.pad_limit_half_kernel ? PadLimit::half_kernel : PadLimit::none;
  p.avg3d_input_at_least_kernel = c.avg3d_input_at_least_kernel != 0;
  return p;
}

}  // namespace pg
