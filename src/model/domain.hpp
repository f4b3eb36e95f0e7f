// The problems a variant computes, stated once as data. supports() is built on admits(), and the
// fuzz builds its problems from the same description (fuzz/problem_gen.cpp), so a variant's
// property generates inside its domain by construction and cannot drift from what the variant
// accepts. Conditions that do not fit these axes (a shared-memory budget, an end-padding rule)
// stay in the variant's supports() after admits(); the fuzz counts the cases they reject.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/problem.hpp"

namespace pg {

// Whether a domain's list of admitted values for one axis holds v.
template <class T>
bool in_list(const std::vector<T>& list, T v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

const char* layout_name(Layout l);  // "channels-first" or "channels-last"

// One window along an axis: kernel, stride, no dilation, pads drawn from [pad_min, pad_max].
struct WindowShape {
  int64_t kernel = 1, stride = 1;
  int64_t pad_min = 0, pad_max = 0;
};

enum class WindowRule : uint8_t {
  any,       // every window: kernel, stride, dilation, pads as validate() allows
  disjoint,  // stride >= effective kernel on every axis
  listed,    // every non-trivial axis has the same one of `shapes`
  single,    // one window per plane: output size 1 on every axis (global pooling), any window
  unit_stride,  // stride 1 on every axis (windows overlap wherever a kernel spans more than one)
};

struct Domain {
  int min_dims = 1, max_dims = 3;
  WindowRule windows = WindowRule::any;
  std::vector<WindowShape> shapes;  // listed only
  bool pads_symmetric = false;      // pad_end == pad_begin on every axis (so no kernel-1 axis is padded)
  bool same_pad_parity = false;     // listed: pad_begin mod stride the same on every axis
  bool whole_windows = false;       // listed: every axis is a whole number of windows, in == out * kernel
  // A 2D problem's D axis (and 1D's D and H) is trivial: size 1, kernel 1, no padding. With
  // listed windows, the leading axes a variant flattens this way:
  //   trivial_leading = 0: none (3D only), 1: D may be trivial, 2: D and H may be.
  int trivial_leading = 2;
  // Listed windows, 3D: D may instead be a copy axis (any size, kernel 1, stride 1, no padding),
  // every window then one D slice, as I3D's and X3D's 1x3x3 max pools.
  bool copy_leading = false;
  std::vector<Layout> layouts = {Layout::channels_first, Layout::channels_last};
  std::vector<DType> dtypes = {DType::f16, DType::bf16, DType::f32, DType::f64};
  // Max stored-index variants: the formats and types read. u8 is only ever a window index.
  std::vector<IndexFormat> index_formats = {IndexFormat::plane, IndexFormat::global_row, IndexFormat::global_col,
                                            IndexFormat::window};
  std::vector<IndexType> index_types = {IndexType::i64, IndexType::i32, IndexType::u8};
  // The conventions computed: max's tie and NaN rules, avg's divisors and divisor_override, and
  // window parameters a vendor library may lack (cuDNN: no dilation, no ceil_mode).
  std::vector<TieRule> ties = {TieRule::first, TieRule::last};
  std::vector<NanRule> nans = {NanRule::propagate, NanRule::ignore};
  std::vector<Divisor> divisors = {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad};
  bool divisor_override = true;
  bool dilation = true;   // dilation above 1
  bool ceil_mode = true;  // output sizes rounded up
  // The contiguous axis (W in channels-first, C in channels-last) is a whole number of 16-byte
  // packs of the dtype.
  bool contiguous_packs = false;
  // For the fuzz: how far past its minimum each axis (D, H, W) may grow, so problems span several
  // blocks, tiles, strips or runs and end in a partial one. The variant states it because only
  // it knows its structure's sizes.
  int64_t reach[kAxes] = {6, 9, 12};
  int64_t max_channels = 7;
  // For the fuzz: one free axis in this many has a wide undilated kernel of 5-9 (SPP-style
  // windows), for a variant with a structure of its own there.
  int wide_kernel_one_in = 10;

  // yes, or the first axis that rules p out, in one line.
  struct Verdict {
    bool ok = true;
    std::string why;
  };
  Verdict admits(const Problem& p) const;
  // One line for `poolgrad variants`, and the window part of it.
  std::string describe() const;
  std::string describe_windows() const;
};

// The domain of a 1D channels-first row variant (max.gather.rows, max.direct.rows,
// avg.gather.rows): any window, W growing up to 40 past its minimum, so that rows span several
// packs or segments, packs cross rows and rows end in a partial one.
inline Domain channels_first_rows() {
  Domain d;
  d.min_dims = d.max_dims = 1;
  d.layouts = {Layout::channels_first};
  d.reach[2] = 40;
  return d;
}

// A leading axis that a 2D (or 1D) problem carries: size 1, one window, kernel 1, no padding.
bool axis_trivial(const Problem& p, int axis);

// An axis whose windows are each one position of it: kernel 1, stride 1, no padding (any size).
bool axis_copy(const Problem& p, int axis);

}  // namespace pg
