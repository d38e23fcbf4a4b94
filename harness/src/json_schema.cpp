#include "attnbench/json_schema.h"

#include <cmath>
#include <set>

#include <re2/re2.h>

#include "attnbench/error.h"

namespace attnbench {

namespace {

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  void validate(const Json& schema, const Json& doc, const std::string& path, std::vector<std::string>& errors) const {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors.push_back(at(path) + "not allowed here");
      return;
    }
    static const std::set<std::string> known = {
        "$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "type", "enum", "const", "properties",
        "required", "additionalProperties", "items", "minItems", "minProperties", "minimum", "maximum", "pattern",
        "anyOf", "oneOf", "examples", "default"};
    for (const auto& [key, v] : schema.items())
      ATTNBENCH_ASSERT(known.count(key), "suite schema uses keyword \"", key, "\" this validator does not implement");
    if (auto it = schema.find("$ref"); it != schema.end()) {
      validate(resolve(it->get<std::string>()), doc, path, errors);
      return;
    }
    if (auto it = schema.find("type"); it != schema.end() && !type_ok(*it, doc)) {
      errors.push_back(at(path) + "expected " + type_text(*it) + ", found " + kind(doc));
      return;
    }
    if (auto it = schema.find("enum"); it != schema.end()) {
      bool ok = false;
      for (const auto& e : *it) ok |= (e == doc);
      if (!ok) errors.push_back(at(path) + doc.dump() + " is not one of " + it->dump());
    }
    if (auto it = schema.find("const"); it != schema.end() && *it != doc)
      errors.push_back(at(path) + "must be " + it->dump());
    if (doc.is_number()) {
      const double x = doc.get<double>();
      if (auto it = schema.find("minimum"); it != schema.end() && x < it->get<double>())
        errors.push_back(at(path) + doc.dump() + " is below the minimum " + it->dump());
      if (auto it = schema.find("maximum"); it != schema.end() && x > it->get<double>())
        errors.push_back(at(path) + doc.dump() + " is above the maximum " + it->dump());
    }
    if (doc.is_string()) {
      if (auto it = schema.find("pattern"); it != schema.end() &&
                                             !RE2::PartialMatch(doc.get<std::string>(), RE2(it->get<std::string>())))
        errors.push_back(at(path) + doc.dump() + " does not match " + it->dump());
    }
    if (doc.is_array()) {
      if (auto it = schema.find("minItems"); it != schema.end() && doc.size() < it->get<size_t>())
        errors.push_back(at(path) + "needs at least " + it->dump() + " items");
      if (auto it = schema.find("items"); it != schema.end())
        for (size_t i = 0; i < doc.size(); ++i) validate(*it, doc[i], path + "/" + std::to_string(i), errors);
    }
    if (doc.is_object()) {
      if (auto it = schema.find("minProperties"); it != schema.end() && doc.size() < it->get<size_t>())
        errors.push_back(at(path) + "needs at least " + it->dump() + " properties");
      if (auto it = schema.find("required"); it != schema.end())
        for (const auto& name : *it)
          if (!doc.contains(name.get<std::string>()))
            errors.push_back(at(path) + "missing required property \"" + name.get<std::string>() + "\"");
      const Json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
      for (const auto& [key, v] : doc.items()) {
        if (props && props->contains(key)) {
          validate((*props)[key], v, path + "/" + key, errors);
        } else if (auto ap = schema.find("additionalProperties"); ap != schema.end()) {
          if (ap->is_boolean() && !ap->get<bool>()) {
            std::string known_names;
            if (props)
              for (const auto& [k, _] : props->items()) known_names += (known_names.empty() ? "" : ", ") + k;
            errors.push_back(at(path) + "unknown property \"" + key + "\"" +
                             (known_names.empty() ? "" : "; known: " + known_names));
          } else {
            validate(*ap, v, path + "/" + key, errors);
          }
        }
      }
    }
    if (auto it = schema.find("anyOf"); it != schema.end()) {
      std::vector<std::string> best;
      bool ok = false;
      for (const auto& sub : *it) {
        std::vector<std::string> e;
        validate(sub, doc, path, e);
        if (e.empty()) { ok = true; break; }
        if (more_specific(e, best)) best = e;
      }
      if (!ok) errors.push_back(best.empty() ? at(path) + "matches none of the allowed forms" : best.front());
    }
    if (auto it = schema.find("oneOf"); it != schema.end()) {
      int matches = 0;
      std::vector<std::string> best;
      for (const auto& sub : *it) {
        std::vector<std::string> e;
        validate(sub, doc, path, e);
        if (e.empty()) ++matches;
        else if (more_specific(e, best)) best = e;
      }
      if (matches == 0) errors.push_back(best.empty() ? at(path) + "matches none of the allowed forms" : best.front());
      if (matches > 1) errors.push_back(at(path) + "matches more than one of the allowed forms");
    }
  }

 private:
  // Of the alternatives that failed, report the one that got furthest into the document (its
  // first error has the longest path): that is the form the author meant.
  static bool more_specific(const std::vector<std::string>& e, const std::vector<std::string>& best) {
    if (best.empty()) return true;
    const auto depth = [](const std::string& msg) { return msg.find(": "); };
    return depth(e.front()) > depth(best.front()) || (depth(e.front()) == depth(best.front()) && e.size() < best.size());
  }
  static std::string at(const std::string& path) { return "at " + (path.empty() ? std::string("/") : path) + ": "; }
  static std::string kind(const Json& d) {
    if (d.is_number_integer()) return "integer";
    if (d.is_number()) return "number";
    if (d.is_boolean()) return "boolean";
    if (d.is_string()) return "string";
    if (d.is_array()) return "array";
    if (d.is_object()) return "object";
    return "null";
  }
  static bool one_type_ok(const std::string& t, const Json& d) {
    if (t == "integer") return d.is_number_integer() || (d.is_number_float() && std::floor(d.get<double>()) == d.get<double>());
    if (t == "number") return d.is_number();
    if (t == "boolean") return d.is_boolean();
    if (t == "string") return d.is_string();
    if (t == "array") return d.is_array();
    if (t == "object") return d.is_object();
    if (t == "null") return d.is_null();
    return false;
  }
  static bool type_ok(const Json& type, const Json& d) {
    if (type.is_string()) return one_type_ok(type.get<std::string>(), d);
    for (const auto& t : type)
      if (one_type_ok(t.get<std::string>(), d)) return true;
    return false;
  }
  static std::string type_text(const Json& type) {
    if (type.is_string()) return type.get<std::string>();
    std::string s;
    for (const auto& t : type) s += (s.empty() ? "" : " or ") + t.get<std::string>();
    return s;
  }
  const Json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    ATTNBENCH_ASSERT(ref.rfind(prefix, 0) == 0, "unsupported $ref ", ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }
  const Json& root_;
};

}  // namespace

std::vector<std::string> validate_json_schema(const Json& schema, const Json& doc) {
  std::vector<std::string> errors;
  Validator(schema).validate(schema, doc, "", errors);
  return errors;
}

}  // namespace attnbench
