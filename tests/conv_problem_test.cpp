// The convolution problem: output length, "same"/"valid" resolution, one line per bad
// parameter, and the strict replay syntax.
#include <gtest/gtest.h>

#include <limits>

#include "src/model/conv_problem.hpp"

namespace pg {
namespace {

// A valid 2D problem: N2 C4 K6 groups 2, 7x9 input, 3x3 kernel, padding 1.
ConvProblem base() {
  ConvProblem p;
  p.n = 2, p.c = 4, p.k = 6, p.groups = 2;
  p.in[1] = 7, p.in[2] = 9;
  p.kernel[1] = p.kernel[2] = 3;
  p.pad_begin[1] = p.pad_begin[2] = p.pad_end[1] = p.pad_end[2] = 1;
  conv_finalize(p);
  return p;
}

// The validation message of base() after `change`, finalized.
template <class F>
std::string error_after(F change) {
  ConvProblem p = base();
  change(p);
  conv_finalize(p);
  return conv_validate(p);
}

TEST(ConvProblem, OutputLength) {
  EXPECT_EQ(conv_out_length(7, 3, 1, 1, 1, 1), 7);
  EXPECT_EQ(conv_out_length(7, 3, 2, 1, 1, 1), 4);
  EXPECT_EQ(conv_out_length(7, 3, 2, 2, 0, 0), 2);   // span 5: (7-5)/2 + 1
  EXPECT_EQ(conv_out_length(5, 2, 2, 2, 1, 2), 3);
  EXPECT_EQ(conv_out_length(2, 3, 1, 1, 0, 0), 0);   // window larger than the input
  EXPECT_EQ(conv_out_length(2, 3, 2, 1, 0, 0), 0);   // floor, not truncation toward zero
  EXPECT_EQ(conv_out_length(1, 1, 0, 1, 0, 0), 0);   // stride 0 is reported, never divided by
  EXPECT_EQ(conv_out_length(std::numeric_limits<int64_t>::max(), 1, 1, 1, 5, 5),
            std::numeric_limits<int64_t>::max());  // saturates instead of overflowing
}

TEST(ConvProblem, ValidBaseAndString) {
  const ConvProblem p = base();
  EXPECT_EQ(conv_validate(p), "");
  EXPECT_EQ(conv_to_string(p), "op=conv2d n=2 c=4 k=6 g=2 in=7x9 ks=3x3 s=1x1 d=1x1 pb=1x1 pe=1x1 layout=ncdhw dtype=f32");
  EXPECT_EQ(p.x_elems(), 2 * 4 * 63);
  EXPECT_EQ(p.w_elems(), 6 * 2 * 9);
  EXPECT_EQ(p.y_elems(), 2 * 6 * 63);
  EXPECT_EQ(p.macs(), 2.0 * 6 * 63 * 2 * 9);
}

TEST(ConvProblem, EachBadParameterIsNamed) {
  EXPECT_EQ(error_after([](ConvProblem& p) { p.dims = 4; }), "dims = 4 must be 1, 2 or 3");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.n = -1; }), "batch N = -1 must be >= 0");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.n = 0; }), "");  // an empty batch, as PyTorch
  EXPECT_EQ(error_after([](ConvProblem& p) { p.c = 0; }), "input channels C = 0 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.k = -1; }), "output channels K = -1 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.groups = 0; }), "groups = 0 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.groups = 3; }), "groups = 3 must divide the input channels C = 4");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.k = 5; }), "groups = 2 must divide the output channels K = 5");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.in[2] = 0; }), "input size W = 0 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.kernel[1] = 0; }), "kernel_size H = 0 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.stride[1] = 0; }), "stride H = 0 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.dilation[2] = -2; }), "dilation W = -2 must be >= 1");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.pad_begin[2] = -1; }), "padding begin W = -1 must be non-negative");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.pad_end[1] = -3; }), "padding end H = -3 must be non-negative");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.kernel[2] = 12; }),
            "kernel_size W = 12 with dilation 1 spans 12, larger than the padded input 11 (input 9, padding 1,1)");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.dilation[1] = 5; }),
            "kernel_size H = 3 with dilation 5 spans 11, larger than the padded input 9 (input 7, padding 1,1)");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.pad_mode = ConvPadMode::same, p.stride[2] = 2; }),
            "stride W = 2 must be 1 with padding='same' (padding='same' is not supported for strided convolutions)");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.in[0] = 2; }), "axis D is not used by a 2D problem but is set");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.kernel[0] = 3; }), "axis D is not used by a 2D problem but is set");
  EXPECT_EQ(error_after([](ConvProblem& p) { p.dilation[2] = std::numeric_limits<int64_t>::max(); }),
            "dilation W = 9223372036854775807 x (kernel_size - 1) overflows int64");
  EXPECT_NE(error_after([](ConvProblem& p) { p.n = int64_t{1} << 40, p.c = p.k = int64_t{1} << 20; })
                .find("input element count N x C x spatial overflows int64"),
            std::string::npos);
  EXPECT_NE(error_after([](ConvProblem& p) { p.k = int64_t{1} << 60; }).find("output element count"),
            std::string::npos);
}

TEST(ConvProblem, StringOfAnInvalidDimsStaysInBounds) {
  ConvProblem p = base();
  p.dims = 7;
  EXPECT_EQ(conv_to_string(p), "op=conv7d n=2 c=4 k=6 g=2 in=1x7x9 ks=1x3x3 s=1x1x1 d=1x1x1 pb=0x1x1 pe=0x1x1 layout=ncdhw dtype=f32");
  p.dims = -1;
  EXPECT_EQ(conv_to_string(p), "op=conv-1d n=2 c=4 k=6 g=2 in=9 ks=3 s=1 d=1 pb=1 pe=1 layout=ncdhw dtype=f32");
}

TEST(ConvProblem, StaleFieldsAreReported) {
  ConvProblem p = base();
  p.in[2] = 20;  // out[] not recomputed
  EXPECT_EQ(conv_validate(p), "output size W = 9 does not match the parameters, which give 20 (call conv_finalize)");
  p = base();
  p.pad_mode = ConvPadMode::valid;  // pads not resolved
  EXPECT_EQ(conv_validate(p), "padding does not match the padding mode (call conv_finalize)");
}

TEST(ConvProblem, SameAndValidResolve) {
  ConvProblem p = base();
  p.pad_mode = ConvPadMode::same;
  p.kernel[1] = 4;
  p.dilation[2] = 3;
  conv_finalize(p);
  EXPECT_EQ(conv_validate(p), "");
  EXPECT_EQ(p.pad_begin[1], 1);  // total 3: 1 before, 2 after
  EXPECT_EQ(p.pad_end[1], 2);
  EXPECT_EQ(p.pad_begin[2], 3);  // total 6: 3 each side
  EXPECT_EQ(p.pad_end[2], 3);
  EXPECT_EQ(p.out[1], p.in[1]);
  EXPECT_EQ(p.out[2], p.in[2]);
  EXPECT_EQ(conv_to_string(p), "op=conv2d n=2 c=4 k=6 g=2 in=7x9 ks=4x3 s=1x1 d=1x3 pad=same layout=ncdhw dtype=f32");
  p.pad_mode = ConvPadMode::valid;
  conv_finalize(p);
  EXPECT_EQ(p.pad_begin[1] + p.pad_end[1] + p.pad_begin[2] + p.pad_end[2], 0);
  EXPECT_EQ(p.out[1], 4);
  EXPECT_EQ(p.out[2], 3);
}

TEST(ConvProblem, StringRoundTrips) {
  ConvProblem p = base();
  p.dims = 3;
  p.in[0] = 4, p.kernel[0] = 2, p.dilation[0] = 2, p.pad_end[0] = 3;  // stride 1: "same" allows no other
  p.layout = Layout::channels_last;
  p.dtype = DType::bf16;
  conv_finalize(p);
  ASSERT_EQ(conv_validate(p), "");
  for (ConvPadMode mode : {ConvPadMode::explicit_pads, ConvPadMode::same, ConvPadMode::valid}) {
    p.pad_mode = mode;
    conv_finalize(p);
    ConvProblem back;
    std::string error;
    ASSERT_TRUE(parse_conv_problem(conv_to_string(p), &back, &error)) << error;
    EXPECT_EQ(conv_to_string(back), conv_to_string(p));
    EXPECT_EQ(conv_validate(back), "");
  }
  ConvProblem line;
  std::string error;
  ASSERT_TRUE(parse_conv_problem("op=conv1d n=1 c=3 k=3 g=3 in=10 ks=4 s=2 d=1 pb=0 pe=2", &line, &error)) << error;
  EXPECT_EQ(line.dims, 1);
  EXPECT_EQ(line.in[2], 10);
  EXPECT_EQ(line.out[2], 5);
  EXPECT_EQ(conv_validate(line), "");
}

TEST(ConvProblem, ParsingIsStrict) {
  auto error_of = [](const std::string& text) {
    ConvProblem p;
    std::string error;
    EXPECT_FALSE(parse_conv_problem(text, &p, &error)) << text;
    return error;
  };
  EXPECT_EQ(error_of("n=1"), "problem: op must be conv1d, conv2d or conv3d, got ''");
  EXPECT_EQ(error_of("op=conv4d"), "problem: op must be conv1d, conv2d or conv3d, got 'conv4d'");
  EXPECT_EQ(error_of("op=conv2d q=1"), "problem: unknown key 'q'");
  EXPECT_EQ(error_of("op=conv2d n=1 n=2"), "problem: key 'n' is given twice");
  EXPECT_EQ(error_of("op=conv2d n=2x"), "problem: n = '2x' is not a decimal integer (digits with an optional leading '-', no '+', spaces or hex)");
  EXPECT_EQ(error_of("op=conv2d c="), "problem: c = '' is empty");
  EXPECT_EQ(error_of("op=conv2d k=99999999999999999999"), "problem: k = '99999999999999999999' is out of range for a 64-bit integer");
  EXPECT_EQ(error_of("op=conv2d in=3x"), "problem: in = '3x': element 2 ('') is empty (a list of integers like 3x3)");
  EXPECT_EQ(error_of("op=conv2d ks=3"), "problem: ks = '3' has 1 values for a 2D problem");
  EXPECT_EQ(error_of("op=conv2d s=1x1 junk"), "problem: token 'junk' is not key=value");
  EXPECT_EQ(error_of("op=conv2d =3"), "problem: token '=3' is not key=value");
  EXPECT_EQ(error_of("op=conv2d pad=same pb=1x1"), "problem: pad= and pb=/pe= exclude each other");
  EXPECT_EQ(error_of("op=conv2d pad=full"), "problem: pad = 'full' is not one of same, valid");
  EXPECT_EQ(error_of("op=conv2d layout=nchw"), "problem: layout = 'nchw' is not one of ncdhw, ndhwc");
  EXPECT_EQ(error_of("op=conv2d dtype=f8"), "problem: dtype = 'f8' is not one of bf16, f16, f32, f64");
}

}  // namespace
}  // namespace pg
