// gtest main shared by every test binary: --backend=cpu (default) or --backend=gpu. With no
// GPU, a gpu run prints why and exits 77, which Meson reports as skipped.
// RapidCheck properties run POOLGRAD_FUZZ_CASES cases each (the `long` test setup sets it),
// else the test's POOLGRAD_FUZZ_DEFAULT, unless RC_PARAMS already sets max_success.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tests/backend_main.hpp"

namespace pg::test {
namespace {
std::unique_ptr<Backend> g_backend;
}

Backend& backend() { return *g_backend; }

}  // namespace pg::test

int main(int argc, char** argv) {
  std::string which = "cpu";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--backend=", 10) == 0) which = argv[i] + 10;
  ::testing::InitGoogleTest(&argc, argv);
  // Before RapidCheck's first use: it reads RC_PARAMS once.
  const char* rc_env = std::getenv("RC_PARAMS");
  std::string rc_params = rc_env ? rc_env : "";
  if (rc_params.find("max_success") == std::string::npos) {
    const char* cases = std::getenv("POOLGRAD_FUZZ_CASES");
    const char* fallback = std::getenv("POOLGRAD_FUZZ_DEFAULT");
    rc_params += std::string(rc_params.empty() ? "" : " ") + "max_success=" +
                 (cases ? cases : fallback ? fallback : "100");
    setenv("RC_PARAMS", rc_params.c_str(), 1);
  }
  if (which == "gpu") {
    std::string why;
    if (pg::gpu_count(&why) == 0) {
      std::printf("SKIP: gpu suite needs a GPU: %s\n", why.c_str());
      return 77;
    }
    pg::test::g_backend = pg::make_gpu_backend(0);
  } else if (which == "cpu") {
    pg::test::g_backend = pg::make_cpu_backend();
  } else {
    std::fprintf(stderr, "--backend must be cpu or gpu, got '%s'\n", which.c_str());
    return 2;
  }
  std::printf("backend: %s (%s)\n", pg::test::g_backend->name().c_str(), pg::test::g_backend->info().name.c_str());
  return RUN_ALL_TESTS();
}
