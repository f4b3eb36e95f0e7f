// Profiles: named presets of the semantic axes a framework fixes (../reference/README.md has
// the table and the sources). apply_profile() sets every axis a profile fixes; the caller
// overrides single axes afterwards.
#pragma once

#include <string>
#include <vector>

#include "src/model/problem.hpp"

namespace pg {

struct Profile {
  std::string name;
  // What count_include_pad = true means: PyTorch clamps the window to input + padding,
  // cuDNN/MIOpen/oneDNN/CK divide by the whole kernel.
  Divisor include_divisor;
  bool count_include_pad;  // the framework's default
  TieRule tie;
  NanRule nan;
  IndexFormat index_format;
  IndexType index_type;
  PadLimit pad_limit;
  bool avg3d_input_at_least_kernel;
  bool avg_dilation;  // whether average pooling accepts a dilation other than 1
  // Parameters the framework has at all (semantics.md's feature table); plan_pool refuses an
  // option the profile has no such parameter for, naming the profile, instead of computing a
  // problem the framework cannot pose.
  bool max_dilation;
  bool asymmetric_pads;  // begin and end padding may differ
  bool auto_pad;         // ONNX's SAME_UPPER / SAME_LOWER / VALID
  bool ceil_mode;
  bool exclude_pad;      // count_include_pad = false
  bool divisor_override;
};

const std::vector<Profile>& profiles();
const Profile* find_profile(const std::string& name);  // nullptr when unknown

// The divisor a profile uses for count_include_pad true or false.
Divisor divisor_for(const Profile& profile, bool count_include_pad);

void apply_profile(const Profile& profile, Problem& p);
// false (and p untouched) when the name is unknown.
bool apply_profile(const std::string& name, Problem& p);

}  // namespace pg
