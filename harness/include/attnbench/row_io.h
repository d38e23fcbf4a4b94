// RowResult as one JSON line: what a worker sends its parent and what the journal keeps, so a row
// survives the process that produced it without loss: {"record": the Row's JSON (row.h),
// "timing": the samples, when timed}.
#pragma once

#include "attnbench/execute.h"
#include "attnbench/json.h"

namespace attnbench {

Json row_to_json(const RowResult& row);
RowResult row_from_json(const Json& j);

// A backend's probe and peaks, as the results' context shows them and a worker reports them.
// InputError for what cannot be read.
Json probe_to_json(const Probe& p);
Probe probe_from_json(const Json& j);
// The limits alone: the counts, each typed limit a backend filled, and `features` {flag: yes|no}.
// Older files' typed limits as text under `features` read into their members.
Json limits_to_json(const DeviceLimits& l);
DeviceLimits limits_from_json(const Json& j);
Json peaks_to_json(const Peaks& p);
Peaks peaks_from_json(const Json& j);

}  // namespace attnbench
