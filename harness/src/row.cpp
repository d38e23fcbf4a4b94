#include "attnbench/row.h"

#include <cmath>
#include <limits>

#include "attnbench/error.h"

namespace attnbench {

const char* status_name(Status s) {
  switch (s) {
    case Status::pass: return "pass";
    case Status::fail: return "fail";
    case Status::error: return "error";
    case Status::crashed: return "crashed";
    case Status::timeout: return "timeout";
    case Status::unsupported: return "unsupported";
    case Status::skipped: return "skipped";
  }
  return "?";
}

Status parse_status(std::string_view name) {
  std::string known;
  for (Status s : kStatuses) {
    if (name == status_name(s)) return s;
    known += (known.empty() ? "" : ", ") + std::string(status_name(s));
  }
  throw InputError(cat("unknown status \"", name, "\"; known: ", known));
}

bool is_bad(Status s) {
  return s == Status::fail || s == Status::error || s == Status::crashed || s == Status::timeout;
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::read: return "read";
    case Bound::copy: return "copy";
    case Bound::compute: return "compute";
  }
  return "compute";
}

namespace {

// The fields of one JSON object of a row, read with errors that name the row and the field.
class Reader {
 public:
  Reader(const Json& j, std::string row, std::string prefix = "") : j_(j), row_(std::move(row)), prefix_(std::move(prefix)) {}

  const Json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  bool has(const char* key) const { return find(key) != nullptr; }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(cat("results row ", row_, ": `", prefix_, key, "` ", what));
  }

  std::string str(const char* key, const std::string& fallback = "") const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) fail(key, cat("is ", v->type_name(), ", not a string"));
    return v->get<std::string>();
  }
  std::string required_str(const char* key) const {
    if (!has(key)) fail(key, "is missing");
    return str(key);
  }
  bool boolean(const char* key, bool fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, cat("is ", v->type_name(), ", not true or false"));
    return v->get<bool>();
  }
  // A number; null reads as NaN, which is how a NaN was written (a median of no aggregates).
  double number(const char* key, double fallback = 0) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v->is_number()) fail(key, cat("is ", v->type_name(), ", not a number"));
    return v->get<double>();
  }
  int64_t integer(const char* key, int64_t fallback = 0) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (v->is_number_integer()) return v->get<int64_t>();
    if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() && std::fabs(v->get<double>()) < 0x1p63)
      return static_cast<int64_t>(v->get<double>());
    fail(key, cat("is ", v->dump(), ", not an integer"));
  }
  uint64_t count(const char* key, uint64_t fallback = 0) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (v->is_number_unsigned()) return v->get<uint64_t>();
    if (v->is_number_integer() && v->get<int64_t>() >= 0) return static_cast<uint64_t>(v->get<int64_t>());
    if (v->is_number_float() && v->get<double>() >= 0 && std::floor(v->get<double>()) == v->get<double>() &&
        v->get<double>() < 0x1p64)
      return static_cast<uint64_t>(v->get<double>());
    fail(key, cat("is ", v->dump(), ", not a non-negative integer"));
  }
  // A nested object (InputError for anything else).
  Reader object(const char* key) const {
    const Json* v = find(key);
    if (!v || !v->is_object()) fail(key, v ? cat("is ", v->type_name(), ", not an object") : std::string("is missing"));
    return Reader(*v, row_, prefix_ + key + ".");
  }
  const Json& json() const { return j_; }

 private:
  const Json& j_;
  std::string row_, prefix_;
};

// The row's name for error messages, from whatever identity fields it has.
std::string name_of(const Json& j) {
  const auto part = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string("?");
  };
  return part("case_id") + "/" + part("backend") + "/" + part("variant");
}

CheckClass parse_check_class(const Reader& r, const std::string& cls) {
  for (CheckClass c : {CheckClass::TOL, CheckClass::EXACT, CheckClass::SET, CheckClass::SEMI, CheckClass::STAT})
    if (cls == check_class_name(c)) return c;
  r.fail("class", cat("\"", cls, "\" is not TOL, EXACT, SET, SEMI or STAT"));
}

}  // namespace

// Keys in the order the results format has always had them (the execution order of a row).
void to_json(Json& j, const Row& r) {
  j = Json::object();
  j["case_id"] = r.case_id;
  j["label"] = r.label;
  j["headline"] = r.headline;
  j["catalog_id"] = r.catalog_id;
  j["method"] = r.method;
  j["family"] = r.family;
  j["phase"] = r.phase;
  j["spec_version"] = r.spec_version;
  j["backend"] = r.backend;
  j["variant"] = r.variant;
  j["device"] = r.device;
  j["dtype"] = std::string(dtype_name(r.dtype));
  j["seed"] = r.seed;
  j["params"] = r.params;
  if (!r.replayed.is_null()) j["replayed"] = r.replayed;
  j["status"] = status_name(r.status);
  j["reason"] = r.reason;
  if (r.hashes) {
    j["hashes"] = {{"inputs", r.hashes->inputs}, {"reference", r.hashes->reference}};
    if (!r.hashes->outputs.empty()) j["hashes"]["outputs"] = r.hashes->outputs;
  }
  if (r.work) j["work"] = {{"flops", r.work->flops}, {"bytes", r.work->bytes}, {"bound", bound_name(r.work->bound)}};
  if (r.checked_rows) j["checked_rows"] = r.checked_rows->all ? Json("all") : Json(r.checked_rows->count);
  if (!r.telemetry.is_null()) j["telemetry"] = r.telemetry;
  if (r.checks) {
    Json checks = Json::object();
    for (const RowCheck& c : *r.checks) {
      Json o = Json::object();
      o["class"] = std::string(check_class_name(c.cls));
      o["pass"] = c.pass;
      if (!c.pass) o["message"] = c.message;
      for (const auto& [k, v] : c.metrics.items()) o[k] = v;
      checks[c.output] = std::move(o);
    }
    j["checks"] = std::move(checks);
  }
  if (r.deterministic) j["deterministic"] = *r.deterministic;
  if (r.memory)
    j["memory"] = {{"input_bytes", r.memory->input_bytes},
                   {"output_bytes", r.memory->output_bytes},
                   {"workspace_peak_bytes", r.memory->workspace_peak_bytes},
                   {"peak_bytes", r.memory->peak_bytes}};
  if (r.quality) j["quality"] = *r.quality;
  if (r.device_lost) j["device_lost"] = true;
  if (r.seconds) {
    const RowSeconds& s = *r.seconds;
    Json o = {{"inputs", s.inputs}, {"reference", s.reference}, {"reference_cached", s.reference_cached}};
    if (s.run) o["run"] = *s.run;
    if (s.check) o["check"] = *s.check;
    if (s.timing) o["timing"] = *s.timing;
    if (s.quality) o["quality"] = *s.quality;
    j["seconds"] = std::move(o);
  }
  if (r.timing) {
    const RowTiming& t = *r.timing;
    j["timing"] = {{"mode", t.mode},
                   {"how", t.how},
                   {"batch", t.batch},
                   {"repetitions", t.repetitions},
                   {"min_time_s", t.min_time_s},
                   {"median_s", t.median_s},
                   {"cv", t.cv},
                   {"noisy", t.noisy}};
    if (!t.telemetry.empty()) j["timing"]["telemetry"] = t.telemetry;
  }
  if (r.throughput) {
    const RowThroughput& t = *r.throughput;
    Json o = {{"flops_per_s", t.flops_per_s}, {"bytes_per_s", t.bytes_per_s}};
    if (!t.peak.empty()) {
      o["peak"] = t.peak;
      o["pct_of_peak"] = t.pct_of_peak;
      o["above_peak"] = t.above_peak;
    }
    j["throughput"] = std::move(o);
  }
  if (r.case_index) j["case_index"] = *r.case_index;
  if (r.related_rank) j["related_rank"] = *r.related_rank;
  if (!r.related.empty()) {
    Json o = Json::object();
    for (const RelatedRef& x : r.related) o[x.role] = x.case_id;
    j["related"] = std::move(o);
  }
  if (!r.related_of.empty()) {
    Json a = Json::array();
    for (const RelatedRef& x : r.related_of) a.push_back({{"case_id", x.case_id}, {"role", x.role}});
    j["related_of"] = std::move(a);
  }
}

void from_json(const Json& j, Row& row) {
  const std::string name = name_of(j);
  if (!j.is_object()) throw InputError(cat("results row: the attnbench object is ", j.type_name(), ", not an object"));
  const Reader r(j, name);
  Row out;
  out.case_id = r.required_str("case_id");
  out.label = r.str("label");
  out.headline = r.boolean("headline", false);
  out.catalog_id = r.str("catalog_id");
  out.method = r.required_str("method");
  out.family = r.str("family");
  out.phase = r.str("phase");
  out.spec_version = static_cast<int>(r.integer("spec_version", 0));
  out.backend = r.required_str("backend");
  out.variant = r.required_str("variant");
  out.device = r.str("device");
  if (r.has("dtype")) {
    try {
      out.dtype = parse_dtype(r.str("dtype"));
    } catch (const InputError& e) {
      r.fail("dtype", e.what());
    }
  }
  out.seed = r.count("seed", 0);
  if (r.has("params")) out.params = r.object("params").json();
  if (r.has("replayed")) out.replayed = r.object("replayed").json();
  try {
    out.status = parse_status(r.required_str("status"));
  } catch (const InputError& e) {
    r.fail("status", e.what());
  }
  out.reason = r.str("reason");

  if (r.has("hashes")) {
    const Reader h = r.object("hashes");
    out.hashes = RowHashes{h.str("inputs"), h.str("reference"), h.str("outputs")};
  }
  if (r.has("work")) {
    const Reader w = r.object("work");
    // "memory" is how files written before the ceilings table named a read-bound row.
    const std::string bound = w.str("bound", "compute");
    Bound b = Bound::compute;
    if (bound == "read" || bound == "memory") b = Bound::read;
    else if (bound == "copy") b = Bound::copy;
    else if (bound != "compute") w.fail("bound", cat("\"", bound, "\" is not compute, read or copy"));
    out.work = Work{w.number("flops"), w.number("bytes"), b};
  }
  if (const Json* c = r.find("checked_rows")) {
    if (c->is_string() && c->get<std::string>() == "all") out.checked_rows = CheckedRows{true, 0};
    else out.checked_rows = CheckedRows{false, r.count("checked_rows")};
  }
  if (const Json* t = r.find("telemetry")) out.telemetry = *t;
  if (r.has("checks")) {
    const Reader checks = r.object("checks");
    out.checks.emplace();
    for (const auto& [output, v] : checks.json().items()) {
      const Reader c = checks.object(output.c_str());
      if (!c.has("class")) c.fail("class", "is missing");
      if (!c.has("pass")) c.fail("pass", "is missing");
      RowCheck rc{output, parse_check_class(c, c.str("class")), c.boolean("pass", true), c.str("message"), Json::object()};
      for (const auto& [k, m] : v.items())
        if (k != "class" && k != "pass" && k != "message") rc.metrics[k] = m;
      out.checks->push_back(std::move(rc));
    }
  }
  if (r.has("deterministic")) out.deterministic = r.boolean("deterministic", true);
  if (r.has("memory")) {
    const Reader m = r.object("memory");
    out.memory = RowMemory{m.count("input_bytes"), m.count("output_bytes"), m.count("workspace_peak_bytes"),
                           m.count("peak_bytes")};
  }
  if (const Json* q = r.find("quality")) out.quality = *q;
  out.device_lost = r.boolean("device_lost", false);
  if (r.has("seconds")) {
    const Reader s = r.object("seconds");
    RowSeconds sec{s.number("inputs"), s.number("reference"), s.boolean("reference_cached", false), {}, {}, {}, {}};
    if (s.has("run")) sec.run = s.number("run");
    if (s.has("check")) sec.check = s.number("check");
    if (s.has("timing")) sec.timing = s.number("timing");
    if (s.has("quality")) sec.quality = s.number("quality");
    out.seconds = sec;
  }
  if (r.has("timing")) {
    const Reader t = r.object("timing");
    RowTiming rt;
    rt.mode = t.str("mode");
    rt.how = t.str("how");
    rt.batch = t.integer("batch", 1);
    rt.repetitions = t.count("repetitions");
    rt.min_time_s = t.number("min_time_s");
    rt.median_s = t.number("median_s", std::numeric_limits<double>::quiet_NaN());
    rt.cv = t.number("cv", std::numeric_limits<double>::quiet_NaN());
    rt.noisy = t.boolean("noisy", false);
    if (const Json* tel = t.find("telemetry")) {
      if (!tel->is_array()) t.fail("telemetry", cat("is ", tel->type_name(), ", not an array"));
      rt.telemetry = *tel;
    }
    out.timing = std::move(rt);
  }
  if (r.has("throughput")) {
    const Reader t = r.object("throughput");
    out.throughput = RowThroughput{t.number("flops_per_s"), t.number("bytes_per_s"), t.str("peak"),
                                   t.number("pct_of_peak"), t.boolean("above_peak", false)};
  }
  if (r.has("case_index")) out.case_index = static_cast<int>(r.integer("case_index"));
  if (r.has("related_rank")) out.related_rank = static_cast<int>(r.integer("related_rank"));
  if (r.has("related")) {
    const Reader rel = r.object("related");
    for (const auto& [role, id] : rel.json().items()) out.related.push_back({role, rel.str(role.c_str())});
  }
  if (const Json* of = r.find("related_of")) {
    if (!of->is_array()) r.fail("related_of", cat("is ", of->type_name(), ", not an array"));
    for (const Json& e : *of) {
      if (!e.is_object()) r.fail("related_of", "holds an entry that is not an object");
      const Reader x(e, name, "related_of[].");
      out.related_of.push_back({x.required_str("role"), x.required_str("case_id")});
    }
  }
  row = std::move(out);
}

Json row_reference(const Row& row) {
  return {{"case_id", row.case_id}, {"backend", row.backend}, {"variant", row.variant}, {"status", status_name(row.status)}};
}

}  // namespace attnbench
