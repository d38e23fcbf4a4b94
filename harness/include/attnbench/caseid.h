// Cases and their ids (docs/design.md "Cases and their ids"). One normative grammar, used in filters, results, dumps,
// caches and leaderboards:
//
//   method[/phase]/k=v,k=v,…/dtype/s<seed>[@<inputs file hash>]
//
// Every schema parameter appears, defaults included, in schema order, under its full name;
// numbers in shortest round-trip form, booleans true/false, lists a:b:c.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "attnbench/dtype.h"
#include "attnbench/params.h"

namespace attnbench {

class Method;
struct InputSource;  // replay.h

struct Case {
  const Method* method = nullptr;  // resolved spec (registry-owned)
  std::string phase;               // "" for methods without phases
  Params params;                   // complete, schema order
  DType dtype = DType::f32;
  uint64_t seed = 1;
  std::string label;               // "Llama-3-8B decode"; not part of the id
  bool headline = false;           // the leaderboard's case for this method; not part of the id
  // Replayed inputs (replay.h): the file's hash is the id's "@<hash>" after the seed.
  std::shared_ptr<const InputSource> source;

  const std::string& method_name() const;
  std::string id() const { return format_id(); }
  std::string format_id() const;
  // Convenience accessors for the method's own code.
  int64_t i64(const std::string& n) const { return params.i64(n); }
  double f64(const std::string& n) const { return params.f64(n); }
  bool flag(const std::string& n) const { return params.flag(n); }
  const std::string& str(const std::string& n) const { return params.str(n); }
};

// Parses an id back into a complete, validated case (InputError with the reason otherwise).
// Parameters missing from the id take their defaults, so a hand-written short id also works.
// An "@<hash>" gives a source that knows only the hash: with_source() attaches the file.
Case parse_case_id(std::string_view id);
// The case with its inputs replayed from `source` (null: generated); InputError when the case id
// already names a file with another hash.
Case with_source(Case c, std::shared_ptr<const InputSource> source);

}  // namespace attnbench
