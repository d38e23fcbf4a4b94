// libFuzzer target: case ids (attnbench::parse_case_id). Bad input must end in
// attnbench::InputError; a parsed case's id must parse back to the same id (round trip).
// Built by the `fuzz` preset, run by ci/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "attnbench/caseid.h"
#include "attnbench/error.h"

// Once at startup: the registry must know the methods (the reference OBJECT library registers
// them). Linked without it, every input would only reach "unknown method" and the target would
// fuzz nothing; stop at once instead.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* known = "gqa/decode/kv_len=64/f32/s1";
  try {
    (void)attnbench::parse_case_id(known);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_case_id: \"%s\" does not parse (%s): is reference/ linked?\n", known, e.what());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string id;
  try {
    id = attnbench::parse_case_id(text).id();
  } catch (const attnbench::InputError&) {
    return 0;
  }
  std::string again;
  try {
    again = attnbench::parse_case_id(id).id();
  } catch (const attnbench::InputError& e) {
    std::fprintf(stderr, "round trip: \"%s\" parsed to \"%s\", which does not parse: %s\n",
                 std::string(text).c_str(), id.c_str(), e.what());
    __builtin_trap();
  }
  if (again != id) {
    std::fprintf(stderr, "round trip: \"%s\" parsed to \"%s\", which parses to \"%s\"\n",
                 std::string(text).c_str(), id.c_str(), again.c_str());
    __builtin_trap();
  }
  return 0;
}
