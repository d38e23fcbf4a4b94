// The project's JSON type: nlohmann's, keeping insertion order so rows read in a fixed order.
#pragma once

#include <nlohmann/json.hpp>

namespace attnbench {
using Json = nlohmann::ordered_json;
}
