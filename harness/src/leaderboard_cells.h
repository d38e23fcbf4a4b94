// Internal to the leaderboard (leaderboard.cpp, leaderboard_cells.cpp): a record as the
// leaderboard reads it, and the cells of one record (how each column is derived from it).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnbench/leaderboard.h"
#include "attnbench/row.h"

namespace attnbench::lb {

// A record (the `attnbench` object of the row standing for its case) and the file it came from.
struct Rec {
  size_t src;
  Row row;
  std::string method_label() const { return row.method + (row.phase.empty() ? "" : " " + row.phase); }
  bool passed() const { return row.status == Status::pass; }
  bool noisy() const { return row.timing && row.timing->noisy; }
  std::optional<double> median_us() const {
    if (!row.timing || std::isnan(row.timing->median_s)) return std::nullopt;
    return row.timing->median_s * 1e6;
  }
  double flops() const { return row.work ? row.work->flops : 0.0; }
  double bytes() const { return row.work ? row.work->bytes : 0.0; }
  int related_rank() const { return row.related_rank.value_or(0); }
};

// The status a reader sees: noisy is a pass whose timing is not to be trusted.
std::string shown_status(const Rec& r);
// The record's device, else its backend's device in the file's context, else the backend.
std::string device_of(const std::vector<LbSource>& sources, const Rec& r);
// "" for generated inputs; for replayed ones what they came from: "replayed: <file> (<model_id>,
// layer <layer>)", from the file's metadata where it names them. A key of every ranking, so
// captured and synthetic rows are never ranked together.
std::string inputs_of(const Rec& r);
LbCell dash(std::string title = "");

// quality, flattened one level: {"a": 1, "b": {"c": 2}} -> a, b.c
std::vector<std::pair<std::string, Json>> flat_quality(const Rec& r);
LbCell value_cell(const std::string& key, const Json& v);  // a quality figure; *bytes* keys in bytes

LbCell status_cell(const Rec& r);
LbCell latency_cell(const Rec& r);
LbCell throughput_cell(const Rec& r);
LbCell peak_cell(const Rec& r, const std::vector<LbSource>& sources);
LbCell memory_cell(const Rec& r);
LbCell equivalence_cell(const Rec& r);

// Backends side by side (leaderboard_across.cpp).
void build_across(Leaderboard& lb, const std::vector<Rec>& recs, const std::string& reference_backend);

}  // namespace attnbench::lb
