// How every poolgrad command ends (docs/cli.md, "Exit codes"), and the one place exceptions become
// those codes and the "poolgrad CMD: message" line on stderr.
//   0  ok: the command did its job (every checked case passed)
//   1  a mismatch: some kernel disagreed with the oracle (check, replay, backward --variant)
//   2  bad usage or input: an option, a value, a problem string, a file; the line names it
//   3  cannot run here: a valid request this build or machine cannot serve (a variant that
//      does not support the problem, a backend not present, more host memory than available)
//   4  an internal or runtime failure (a GPU runtime error, a bug): the line says what failed
#pragma once

#include <cstdio>
#include <exception>
#include <new>

#include "src/harness/host_memory.hpp"
#include "src/model/invalid_input.hpp"
#include "src/model/run_errors.hpp"

namespace pg {

enum ExitCode : int { kExitOk = 0, kExitMismatch = 1, kExitBadInput = 2, kExitCannotRun = 3, kExitInternal = 4 };

// Runs a command body, mapping what it throws onto the exit codes above with one line on
// stderr that starts with "poolgrad CMD: ".
template <class F>
int run_command(const char* command, F&& body) {
  auto report = [&](const char* what, int code) {
    std::fprintf(stderr, "poolgrad %s: %s\n", command, what);
    return code;
  };
  try {
    return body();
  } catch (const InvalidInput& e) {
    return report(e.what(), kExitBadInput);
  } catch (const OutOfHostMemory& e) {
    return report(e.what(), kExitCannotRun);
  } catch (const CannotRun& e) {
    return report(e.what(), kExitCannotRun);
  } catch (const Mismatch& e) {
    return report(e.what(), kExitMismatch);
  } catch (const std::bad_alloc&) {
    return report("out of host memory (an allocation failed)", kExitCannotRun);
  } catch (const std::exception& e) {
    return report(e.what(), kExitInternal);
  }
}

}  // namespace pg
