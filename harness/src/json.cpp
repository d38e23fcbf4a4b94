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

}  // namespace

Json parse_json_strict(const std::string& text, const std::string& what) {
  std::vector<Frame> stack;
  const auto element_done = [&] {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  };
  const auto cb = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (stack.size() >= kMaxDepth) throw InputError(cat(what, ": ", path_of(stack), ": nested deeper than ", kMaxDepth, " levels"));
        stack.push_back({event == Json::parse_event_t::array_start});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        stack.pop_back();
        element_done();
        break;
      case Json::parse_event_t::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw InputError(cat(what, ": ", path_of(stack), ": the key is given twice"));
        break;
      }
      case Json::parse_event_t::value: element_done(); break;
    }
    return true;
  };
  try {
    return Json::parse(text, cb);
  } catch (const Json::exception& e) {
    // nlohmann's text starts with its own tag ("[json.exception.parse_error.101] "): the rest is the reason.
    std::string why = e.what();
    if (const size_t close = why.find("] "); why.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      why = why.substr(close + 2);
    const std::string where = path_of(stack);
    throw InputError(cat(what, ": malformed JSON", where.empty() ? "" : " at " + where, ": ", why));
  }
}

}  // namespace attnbench
