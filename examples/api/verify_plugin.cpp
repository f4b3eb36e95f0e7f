// Loads a plugin and verifies one of its variants on a problem line with the C++ API
// (poolgrad/poolgrad.hpp): exit 0 when it matches the oracle, 1 when not, 2 on bad input.
#include <poolgrad/poolgrad.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: verify_plugin PLUGIN.so VARIANT\n");
    return 2;
  }
  try {
    poolgrad::load_plugin(argv[1]);
    const poolgrad_problem p = poolgrad::parse_problem(
        "op=max2d n=2 c=3 in=9x9 k=3x3 s=2x2 d=1x1 pb=1x1 pe=1x1 ceil=0 tie=first nan=propagate idx=plane/i64 "
        "layout=ncdhw dtype=f32 padlimit=half avg3dcheck=1");
    const poolgrad::Verdict v = poolgrad::run_and_verify(argv[2], p);
    if (v.status != poolgrad::Verdict::pass) {
      std::printf("%s\n", v.message.c_str());
      return 1;
    }
    std::printf("PASS %s (poolgrad %s): %s\n", argv[2], poolgrad::version().c_str(), poolgrad::to_string(p).c_str());
    return 0;
  } catch (const poolgrad::Error& e) {
    std::fprintf(stderr, "verify_plugin: %s\n", e.what());
    return 2;
  }
}
