#include "attnbench/json.h"

#include <set>
#include <vector>

#include "attnbench/error.h"

namespace attnbench {

std::string json_path_join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string json_path_index(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

namespace {

// Deeper than any document attnbench reads, shallow enough that code walking a document
// recursively (the schema validator, comparisons, dump) cannot exhaust its stack.
constexpr size_t kMaxDepth = 128;

// Where the parser is: one frame per open object or array, so an error can name its place.
struct Frame {
  bool array;
  size_t index = 0;        // arrays: the element being parsed
  std::string key;         // objects: the member being parsed
  std::set<std::string> keys;
};

std::string path_of(const std::vector<Frame>& stack) {
  std::string p;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Frame& f = stack[i];
    if (f.array) p = json_path_index(p, f.index);
    else if (!f.key.empty()) p = json_path_join(p, f.key);
  }
  return p;
}

// The checks a plain parse does not make, as a SAX pass of their own (nlohmann's callback parser
// rescans each parent array at every object's end: quadratic in a results file's rows).
class StrictChecker {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit StrictChecker(const std::string& what) : what_(what) {}

  bool null() { return element_done(); }
  bool boolean(bool) { return element_done(); }
  bool number_integer(number_integer_t) { return element_done(); }
  bool number_unsigned(number_unsigned_t) { return element_done(); }
  bool number_float(number_float_t, const string_t&) { return element_done(); }
  bool string(string_t&) { return element_done(); }
  bool binary(binary_t&) { return element_done(); }
  bool start_object(size_t) { return open(false); }
  bool start_array(size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(string_t& k) {
    Frame& f = stack_.back();
    f.key = k;
    if (!f.keys.insert(k).second) throw InputError(cat(what_, ": ", path_of(stack_), ": the key is given twice"));
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    // nlohmann's text starts with its own tag ("[json.exception.parse_error.101] "): the rest is the reason.
    std::string why = e.what();
    if (const size_t close = why.find("] "); why.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      why = why.substr(close + 2);
    const std::string where = path_of(stack_);
    throw InputError(cat(what_, ": malformed JSON", where.empty() ? "" : " at " + where, ": ", why));
  }

 private:
  bool element_done() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    return true;
  }
  bool open(bool array) {
    if (stack_.size() >= kMaxDepth) throw InputError(cat(what_, ": ", path_of(stack_), ": nested deeper than ", kMaxDepth, " levels"));
    stack_.push_back({array});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return element_done();
  }
  const std::string& what_;
  std::vector<Frame> stack_;
};

}  // namespace

Json parse_json_strict(const std::string& text, const std::string& what) {
  StrictChecker checker(what);
  Json::sax_parse(text, &checker);  // throws InputError for anything it refuses
  return Json::parse(text);
}

}  // namespace attnbench
