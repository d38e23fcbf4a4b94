// libFuzzer target: the suite file parser and expander (attnbench::parse_suite_text).
// Bad input must end in attnbench::InputError; anything else escaping (another exception type,
// a crash, a sanitizer report, a hang) is a finding. The first cases a suite expands to must
// also have ids that parse back to themselves (what --filter, run --rerun and dump rely on).
// Built by the `fuzz` preset, run by ci/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "attnbench/caseid.h"
#include "attnbench/error.h"
#include "attnbench/suite.h"

namespace {

// The ids checked per input: enough to see every entry of a small suite, few enough that a suite
// of 200000 cases costs no more than its expansion.
constexpr size_t kIdsChecked = 64;

void check_round_trip(const attnbench::Case& c) {
  const std::string id = c.id();
  std::string again;
  try {
    again = attnbench::parse_case_id(id).id();
  } catch (const attnbench::InputError& e) {
    std::fprintf(stderr, "round trip: suite case \"%s\" does not parse: %s\n", id.c_str(), e.what());
    __builtin_trap();
  }
  if (again != id) {
    std::fprintf(stderr, "round trip: suite case \"%s\" parses to \"%s\"\n", id.c_str(), again.c_str());
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  attnbench::Suite suite;
  try {
    suite = attnbench::parse_suite_text(text, "fuzz.json");
  } catch (const attnbench::InputError&) {
    return 0;
  }
  size_t checked = 0;
  for (const auto& pc : suite.cases) {
    if (checked == kIdsChecked) break;
    if (!pc.skip_reason.empty()) continue;  // a skipped case breaks a rule: its id does not parse
    check_round_trip(pc.c);
    ++checked;
  }
  return 0;
}
