#include "attnbench/suite.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/hash.h"
#include "attnbench/files.h"
#include "attnbench/interrupt.h"
#include "attnbench/json_schema.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"

namespace attnbench {

extern const char* const kEmbeddedSuiteSchema;  // generated from suites/suite.schema.json

const Json& suite_schema() {
  static const Json schema = Json::parse(kEmbeddedSuiteSchema);
  return schema;
}

namespace {

// One JSON parameter value (not an axis): a scalar, or {"values": [...]} for a list value.
Value to_value(const Json& j) {
  if (j.is_object()) {
    const Json& list = j.at("values");
    bool all_int = true;
    for (const auto& x : list) all_int &= x.is_number_integer();
    if (all_int) {
      IntList out;
      for (const auto& x : list) out.push_back(x.get<int64_t>());
      return out;
    }
    FloatList out;
    for (const auto& x : list) {
      if (!x.is_number()) throw InputError("a {\"values\": [...]} list holds numbers only");
      out.push_back(x.get<double>());
    }
    return out;
  }
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw InputError(cat(j.dump(), " is out of range (integers go up to 2^63-1)"));
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number()) return j.get<double>();
  return j.get<std::string>();
}

// An axis: the values one key takes across the product.
struct Axis {
  std::vector<std::string> keys;            // one key, or a zip group's keys
  std::vector<std::vector<Value>> points;   // points[i][k] = value of keys[k] at step i
};

std::vector<std::string> strings_of(const Json& j) {
  std::vector<std::string> out;
  if (j.is_array()) for (const auto& x : j) out.push_back(x.get<std::string>());
  else out.push_back(j.get<std::string>());
  return out;
}

uint64_t seed_of(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  // The schema lets an integral float through (3.0); 2^64 and beyond parse as floats and must not wrap.
  const double d = j.get<double>();
  if (d >= 0 && d < 18446744073709551616.0 && d == static_cast<double>(static_cast<uint64_t>(d))) return static_cast<uint64_t>(d);
  throw InputError(cat("seed ", j.dump(), " is not an integer from 0 to 2^64-1"));
}

// a * b, or none when it does not fit.
std::optional<size_t> times(size_t a, size_t b) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::vector<Json> items_of(const Json& j) {
  std::vector<Json> out;
  if (j.is_array()) for (const auto& x : j) out.push_back(x);
  else out.push_back(j);
  return out;
}

// A relative inputs path is the suite's folder's, so a suite travels with its captures.
std::string beside(const std::string& suite_path, const std::string& file) {
  const std::filesystem::path f(file);
  if (f.is_absolute() || suite_path.empty()) return file;
  return (std::filesystem::path(suite_path).parent_path() / f).lexically_normal().string();
}

}  // namespace

void replay_suite_inputs(Suite& suite, const std::string& path, const std::map<std::string, std::string>& tensors) {
  for (PlannedCase& pc : suite.cases) {
    std::map<std::string, std::string> mapping = pc.input_tensors;
    for (const auto& [input, tensor] : tensors) mapping[input] = tensor;
    pc.c.source = open_input_source(path, mapping);
  }
  if (suite.cases.size() == 1 && suite.cases[0].skip_reason.empty()) check_replay_fits(suite.cases[0].c);
}

Suite parse_suite(const Json& doc, const std::string& path, const std::string& hash) {
  const auto errors = validate_json_schema(suite_schema(), doc);
  if (!errors.empty()) throw InputError(cat(path, ": ", errors.front()));
  Suite suite;
  suite.path = path;
  suite.hash = hash;
  suite.name = doc.at("name").get<std::string>();
  suite.description = doc.value("description", "");
  const Json defaults = doc.value("defaults", Json::object());
  std::set<std::string> ids;
  const Json& entries = doc.at("cases");
  for (size_t e = 0; e < entries.size(); ++e) {
    const Json& entry = entries[e];
    const std::string method = entry.at("method").get<std::string>();
    const std::string where = cat(path, ": case ", e, " (", method, ")");
    try {
      const Method& m = registry().method(method);
      std::vector<Axis> axes;
      std::set<std::string> seen;
      const auto add_key = [&](const std::string& key) {
        if (!seen.insert(key).second) throw InputError(cat("parameter \"", key, "\" is given twice"));
      };
      if (entry.contains("params"))
        for (const auto& [key, v] : entry["params"].items()) {
          add_key(key);
          Axis a{{key}, {}};
          for (const Json& x : items_of(v)) a.points.push_back({to_value(x)});
          axes.push_back(std::move(a));
        }
      if (entry.contains("zip"))
        for (const Json& group : items_of(entry["zip"])) {
          Axis a;
          size_t len = 0;
          for (const auto& [key, v] : group.items()) {
            add_key(key);
            if (a.keys.empty()) len = v.size();
            else if (v.size() != len)
              throw InputError(cat("zip group lists differ in length (", a.keys.front(), ": ", len, ", ", key, ": ",
                                   v.size(), ")"));
            a.keys.push_back(key);
          }
          for (size_t i = 0; i < len; ++i) {
            std::vector<Value> point;
            for (const auto& key : a.keys) point.push_back(to_value(group[key][i]));
            a.points.push_back(std::move(point));
          }
          axes.push_back(std::move(a));
        }
      const std::vector<std::string> phases =
          entry.contains("phase") ? strings_of(entry["phase"]) : std::vector<std::string>{""};
      const std::vector<std::string> dtypes =
          entry.contains("dtype") ? strings_of(entry["dtype"])
          : defaults.contains("dtype") ? strings_of(defaults["dtype"]) : std::vector<std::string>{""};
      std::map<std::string, std::string> input_tensors;
      if (entry.contains("input_tensors")) input_tensors = entry["input_tensors"].get<std::map<std::string, std::string>>();
      std::shared_ptr<const InputSource> source;
      if (entry.contains("inputs")) source = open_input_source(beside(path, entry["inputs"].get<std::string>()), input_tensors);
      std::vector<uint64_t> seeds;
      for (const Json& s : items_of(entry.value("seed", defaults.value("seed", Json(1))))) seeds.push_back(seed_of(s));

      // Counted before anything is expanded, so a product too large to hold is refused, not attempted.
      std::optional<size_t> count = times(times(phases.size(), dtypes.size()).value_or(SIZE_MAX), seeds.size());
      for (const auto& a : axes)
        if (count) count = times(*count, a.points.size());
      if (!count || *count > kMaxSuiteCases - suite.cases.size())
        throw InputError(cat("expands to ", count ? std::to_string(*count) : std::string("more than 2^64"), " cases; with the ",
                             suite.cases.size(), " before it that is more than a suite may hold (", kMaxSuiteCases,
                             "): split the suite or shorten its lists"));
      const size_t total = *count;
      if (total == 0) throw InputError("expands to no case (an empty list)");
      std::vector<size_t> at(axes.size(), 0);
      for (const auto& phase : phases)
        for (size_t step = 0; step < total / (phases.size() * dtypes.size() * seeds.size()); ++step) {
          // Mixed-radix decomposition of `step` over the axes, the last varying fastest.
          size_t rest = step;
          for (int a = static_cast<int>(axes.size()) - 1; a >= 0; --a) {
            at[a] = rest % axes[a].points.size();
            rest /= axes[a].points.size();
          }
          throw_if_interrupted();
          for (const auto& dtype : dtypes)
            for (uint64_t seed : seeds) {
              CaseParts parts{method, phase, {}, dtype, seed};
              for (size_t a = 0; a < axes.size(); ++a)
                for (size_t k = 0; k < axes[a].keys.size(); ++k) parts.params[axes[a].keys[k]] = axes[a].points[at[a]][k];
              PlannedCase pc{build_case(parts), "", static_cast<int>(e), input_tensors};
              pc.c.label = entry.value("label", "");
              pc.c.headline = entry.value("headline", false);
              pc.c.source = source;
              pc.skip_reason = rule_violation(pc.c);
              if (!pc.skip_reason.empty() && total == 1) throw InputError(pc.skip_reason);
              if (source && total == 1) check_replay_fits(pc.c);
              if (!ids.insert(pc.c.id()).second) throw InputError(cat("case ", pc.c.id(), " appears twice in the suite"));
              suite.cases.push_back(std::move(pc));
            }
        }
      (void)m;
    } catch (const InputError& err) {
      throw InputError(cat(where, ": ", err.what()));
    }
  }
  return suite;
}

Suite parse_suite_text(const std::string& text, const std::string& path) {
  return parse_suite(parse_json_strict(text, path), path, hex64(hash64(text)));
}

Suite load_suite(const std::string& path) {
  return parse_suite_text(read_input_file(path, "suite file"), path);
}

}  // namespace attnbench
