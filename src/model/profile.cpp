#include "src/model/profile.hpp"

namespace pg {

const std::vector<Profile>& profiles() {
  // reference/README.md gives the facts per framework and explains each choice.
  static const std::vector<Profile> all = {
      // name      include divisor          incl.  tie              nan                 index format             index type      pad limit              avg3d  avg dil. max dil. asym. auto_pad ceil  excl.  override
      {"pytorch", Divisor::include_pad, true, TieRule::first, NanRule::propagate, IndexFormat::plane, IndexType::i64, PadLimit::half_kernel, true, false, true, false, false, true, true, true},
      {"onnx", Divisor::include_pad, false, TieRule::first, NanRule::ignore, IndexFormat::global_row, IndexType::i64, PadLimit::none, false, true, true, true, true, true, true, false},
      {"cudnn", Divisor::full_kernel, true, TieRule::first, NanRule::ignore, IndexFormat::plane, IndexType::i64, PadLimit::none, false, false, false, false, false, false, true, false},
      {"miopen", Divisor::full_kernel, true, TieRule::first, NanRule::ignore, IndexFormat::window, IndexType::u8, PadLimit::none, false, false, false, false, false, false, true, false},
      {"onednn", Divisor::full_kernel, true, TieRule::first, NanRule::ignore, IndexFormat::window, IndexType::u8, PadLimit::none, false, true, true, true, false, false, true, false},
      {"ck", Divisor::full_kernel, true, TieRule::first, NanRule::ignore, IndexFormat::global_row, IndexType::i32, PadLimit::none, false, true, true, true, false, false, false, false},
  };
  return all;
}

const Profile* find_profile(const std::string& name) {
  for (const Profile& p : profiles())
    if (p.name == name) return &p;
  return nullptr;
}

Divisor divisor_for(const Profile& profile, bool count_include_pad) {
  return count_include_pad ? profile.include_divisor : Divisor::exclude_pad;
}

void apply_profile(const Profile& profile, Problem& p) {
  p.divisor = divisor_for(profile, profile.count_include_pad);
  p.tie = profile.tie;
  p.nan = profile.nan;
  p.index_format = profile.index_format;
  p.index_type = profile.index_type;
  p.pad_limit = profile.pad_limit;
  p.avg3d_input_at_least_kernel = profile.avg3d_input_at_least_kernel;
}

bool apply_profile(const std::string& name, Problem& p) {
  const Profile* profile = find_profile(name);
  if (!profile) return false;
  apply_profile(*profile, p);
  return true;
}

}  // namespace pg
