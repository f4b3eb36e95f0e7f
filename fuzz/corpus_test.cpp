// The committed regression cases: every case file under fuzz/corpus/ ($POOLGRAD_CORPUS), pooling
// and conv, replayed on the suite's backend, as `poolgrad replay FILE` would, must pass. A case is
// committed once its bug is fixed; a case that fails again is a regression. An empty corpus passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "fuzz/case_file.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
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

// The case as `poolgrad replay FILE` runs it, with the variant `v` of the file's op family, the
// problem line parsed by `parse` and verified by `verify`. Skipped (nullopt) for a GPU-only
// variant on the CPU.
template <class V, class P, class Verify>
std::optional<Outcome> replay_as(const V* v, bool (*parse)(const std::string&, P*, std::string*), const fuzz::CaseFile& c,
                                 Backend& b, const Verify& verify) {
  EXPECT_NE(v, nullptr) << c.variant << " is not a registered " << c.target << " variant";
  P p;
  std::string error;
  EXPECT_TRUE(parse(c.problem, &p, &error)) << error;
  if (!v || !error.empty() || (b.kind() == BackendKind::cpu && v->gpu_only)) return std::nullopt;
  return verify(*v, p);
}

std::optional<Outcome> replay(const fuzz::CaseFile& c, Backend& b) {
  if (c.target == "conv")
    return replay_as(find_conv_variant(c.variant), parse_conv_problem, c, b,
                     [&](const ConvVariant& v, const ConvProblem& p) { return conv_run_and_verify(b, v, p, c.data); });
  return replay_as(find_variant(c.variant), parse_problem, c, b,
                   [&](const Variant& v, const Problem& p) { return run_and_verify(b, v, p, c.data); });
}

TEST(Corpus, EveryCommittedCasePasses) {
  const char* dir = std::getenv("POOLGRAD_CORPUS");
  ASSERT_NE(dir, nullptr) << "set POOLGRAD_CORPUS to the corpus directory";
  Backend& b = test::backend();
  int replayed = 0;
  for (const auto& path : corpus_files()) {
    SCOPED_TRACE(path.string());
    fuzz::CaseFile c;
    std::string error;
    ASSERT_TRUE(fuzz::read_case_file(path.string(), &c, &error)) << error;
    const std::optional<Outcome> o = replay(c, b);
    if (!o) {
      std::printf("not replayed on %s: %s\n", b.name().c_str(), path.filename().c_str());
      continue;
    }
    EXPECT_EQ(o->status, Status::pass) << o->message;
    ++replayed;
  }
  std::printf("%d corpus cases replayed on %s from %s\n", replayed, b.name().c_str(), dir);
}

}  // namespace
}  // namespace pg
