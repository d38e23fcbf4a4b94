// The project's JSON type: nlohmann's, keeping insertion order so rows read in a fixed order.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attnbench {
using Json = nlohmann::ordered_json;

// Parses a document the user wrote or handed over (a suite, a results file): InputError naming
// `what` and the place for anything malformed, a key given twice in one object (JSON leaves it
// open; nlohmann keeps the last), or a number out of double's range.
Json parse_json_strict(const std::string& text, const std::string& what);

// The JSON path of a value, for messages: cases[2].params.kv_len.
std::string json_path_join(const std::string& parent, const std::string& key);
std::string json_path_index(const std::string& parent, size_t index);
}  // namespace attnbench
