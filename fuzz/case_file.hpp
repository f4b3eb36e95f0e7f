// A failing case as a file: what `poolgrad fuzz` writes for each distinct failure and
// `poolgrad replay FILE` reads back. JSON, one object:
//   {"format": "poolgrad-case/1", "target": "pool"|"conv", "variant": ..., "backend": "cpu"|"gpuN",
//    "problem": the problem line (a pooling one, or op=convNd ... for "conv"),
//    "data": {"kind": ..., "seed": ...},
//    "signature": the kind of failure, "report": [the failure report, line by line],
//    "replay": the same case as a command line, "plugin": the variant's shared library, when
//    it came from one (src/harness/plugin.hpp)}
// Replay needs only target, variant, backend, problem, data and plugin; the rest is for the reader.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "src/harness/datagen.hpp"
#include "src/model/problem.hpp"

namespace pg::fuzz {

struct CaseFile {
  std::string target = "pool";  // the op family: "pool" or "conv"
  std::string variant, backend;
  std::string problem;  // the problem line (to_string(Problem) or conv_to_string(ConvProblem))
  DataSpec data;
  std::string plugin;  // absolute path; empty for poolgrad's own variants
};

nlohmann::json case_json(const CaseFile& c, const std::string& signature, const std::string& report,
                         const std::string& replay);

// Reads `path`; false with *error (naming the file and the field) when it is not a case file
// (a conv case's data kind must be one conv has data for: ints or real).
bool read_case_file(const std::string& path, CaseFile* out, std::string* error);

}  // namespace pg::fuzz
