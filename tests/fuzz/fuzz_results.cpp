// libFuzzer target: the results-file reader (attnbench::parse_results_text), and on a file it
// accepts, compare (the file with itself) and merge (the file alone). Bad input must end in
// attnbench::InputError; anything else escaping is a finding. Built by the `fuzz` preset, run by
// ci/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attnbench/compare.h"
#include "attnbench/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attnbench::Json doc = attnbench::parse_results_text(text, "fuzz.json");
    (void)attnbench::compare_results(doc, doc);
    (void)attnbench::merge_results({doc}, {"x"});
  } catch (const attnbench::InputError&) {
  }
  return 0;
}
