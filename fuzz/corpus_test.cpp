// The committed regression cases: every case file under fuzz/corpus/ ($POOLGRAD_CORPUS) replayed
// on the suite's backend, as `poolgrad replay FILE` would, must pass. A case is committed once
// its bug is fixed; a case that fails again is a regression. An empty corpus passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "fuzz/case_file.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "tests/backend_main.hpp"

namespace pg {
namespace {

std::vector<std::filesystem::path> corpus_files() {
  const char* dir = std::getenv("POOLGRAD_CORPUS");
  std::vector<std::filesystem::path> files;
  if (!dir || !std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Corpus, EveryCommittedCasePasses) {
  const char* dir = std::getenv("POOLGRAD_CORPUS");
  ASSERT_NE(dir, nullptr) << "set POOLGRAD_CORPUS to the corpus directory";
  Backend& b = test::backend();
  int replayed = 0;
  for (const auto& path : corpus_files()) {
    SCOPED_TRACE(path.string());
    fuzz::PoolCaseFile c;
    std::string error;
    ASSERT_TRUE(fuzz::read_pool_case_file(path.string(), &c, &error)) << error;
    const Variant* v = find_variant(c.variant);
    ASSERT_NE(v, nullptr) << c.variant << " is not registered";
    Problem p;
    ASSERT_TRUE(parse_problem(c.problem, &p, &error)) << error;
    if (b.kind() == BackendKind::cpu && v->gpu_only) {
      std::printf("skipped on the CPU (GPU-only variant): %s\n", path.filename().c_str());
      continue;
    }
    const Outcome o = run_and_verify(b, *v, p, c.data);
    EXPECT_EQ(o.status, Status::pass) << o.message;
    ++replayed;
  }
  std::printf("%d corpus cases replayed on %s from %s\n", replayed, b.name().c_str(), dir);
}

}  // namespace
}  // namespace pg
