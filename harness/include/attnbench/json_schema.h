// A JSON Schema validator for the subset suites/suite.schema.json uses: type, enum, const,
// properties, required, additionalProperties, items, minItems, minProperties, minimum, maximum,
// pattern, anyOf, oneOf and local $ref ("#/$defs/name"). Unknown keywords are an error, so the
// schema cannot silently use one this validator ignores. (tests/ also validate every suite with
// Debian's python3-jsonschema, the reference implementation.)
#pragma once

#include <string>
#include <vector>

#include "attnbench/json.h"

namespace attnbench {

// Problems found, each "at /cases/3/params/kv_heads: ..."; empty when valid.
std::vector<std::string> validate_json_schema(const Json& schema, const Json& doc);

}  // namespace attnbench
