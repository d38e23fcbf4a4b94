// The leaderboard (docs/design.md "Results"): `attnbench leaderboard RESULTS... [--out DIR]` reads results
// files (several machines, several backends) and writes leaderboard.md and a self-contained
// leaderboard.html (inline CSS, JS and SVG; nothing fetched).
//
// Everything is driven by the records; no method, backend or family is named here:
//   * A row is a method (and phase) on a backend, variant and device, in one results file, at its
//     headline case: the suite's `headline: true` cases of that method and phase (the one with the
//     most work.flops per dtype when several), else its suite case with the most work.flops (then
//     bytes). Related-only cases (related_rank > 0) are never headline cases.
//   * Replayed rows (inputs from a captured file, replay.h) are shown as such: every table, ranking
//     and fidelity figure is per inputs source (file, model, layer) as it is per device and dtype,
//     so captured and synthetic rows sit side by side, never in one ranking.
//   * Tables are grouped by family, then device and dtype. A section's quality columns are the
//     union of its rows' `quality` keys (nested objects flattened as a.b), so a method that
//     declares new figures shows them without code changes. A figure the headline case lacks is
//     taken from another suite case of the method on the same backend (a distribution-mode
//     case's p-value), marked *. "all cases" counts the statuses of all those cases.
//   * Related cases join through `related` {role: case id}: the related row is the same backend
//     and device in the same file, the same variant when it passed, else the fastest passing one.
//     Speedup: role `baseline` → baseline time over the method's own time (GQA over MHA); a
//     companion role `<x>_full` is the reference of every other companion `<x>_<y>` → time of
//     `<x>_full` over time of `<x>_<y>` (SnapKV's compressed decode over the full-cache decode).
//   * Statuses are shown as such (pass, fail, error, crashed, timeout, unsupported, skipped), and a
//     timed row whose cv exceeded the target reads `pass (noisy, cv N%)`: a pass whose time is not
//     to be trusted, coloured as a pass (it is not a failure), with its cv beside it.
//   * Coverage files (LeaderboardOptions::coverage, `--coverage`): a suite of edge cases sized for
//     CI (suites/ci.json) proves support, not speed. Its rows join the support matrix and the
//     side-by-side view only; the ranked tables, compression points and plots come from the other
//     files (model-sized suites), so a kv_len of 20 never draws a latency curve.
//   * Compression points: records whose quality names a `compression_point` (the KV family's
//     nominal kv_len / budget, kvpress's 1 / (1 − compression_ratio)) are also ranked per point:
//     one table per (file, device, dtype, full-cache bytes, point) where two methods or more met,
//     rows by attn_recall (then out_rel_l2), with the achieved compression, KV bytes (indices
//     included), the compression time (also over the `<x>_full` companion's: how many full-cache
//     decode steps it costs) and the companions' decode speedup; plots of fidelity against the
//     point (a line per method) and of compression time against kv_len at each point.
//   * Backends side by side: every case that ran on two columns or more, where a column is a
//     backend on a device, whichever files hold its rows (a CPU run here beside an H200 run there
//     is two columns; one machine's suites in several files are one). Per column
//     the fastest passing variant's median, % of its own peak and status; per column beside the
//     reference (the `--reference` backend, else the first column) the ratio reference median
//     over the column's (above 1: the column is faster); the geometric mean per family and per
//     method (a bar plot, one bar per column).
//   * Plots (HTML): median latency against the `kv_len` parameter per backend/variant for every
//     method and phase timed at ≥ 2 kv lengths (the series of cases that differ only in kv_len
//     with the most points), both axes logarithmic since sweeps double kv_len; fidelity (quality
//     `attn_recall`, `out_rel_l2`) against quality `kv_bytes_kept` (the KV family's quality
//     figures, reference/kvcomp/compacted_cache.h), one figure per full cache (`kv_bytes_full`
//     and dtype: cases of one shape, never every shape scattered together); and a method ×
//     backend support matrix coloured by its worst status, noisy passes counted apart (with
//     their largest cv) but coloured as passes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnbench/json.h"

namespace attnbench {

// One table cell, rendered the same way in Markdown and HTML.
struct LbCell {
  std::string text;                 // what the reader sees; "—" when there is nothing
  std::optional<double> sort;       // numeric sort key (HTML); none: sorted by text
  std::string cls;                  // status class for colouring: pass, noisy, fail, unsupported, skipped...
  std::string title;                // a longer explanation (HTML tooltip; Markdown footnotes where useful)
};

struct LbColumn {
  std::string key;    // stable, for the HTML's sort state: "latency", "q.attn_recall", "rel.baseline"
  std::string title;  // header text
  std::string help;   // how the column is derived
};

struct LbSection {
  std::string family, device, dtype;
  std::string inputs;  // "" generated; else where replayed inputs came from (file, model, layer)
  std::string title;  // a ranked table's heading (compression points); empty for family sections
  std::vector<LbColumn> columns;
  std::vector<std::vector<LbCell>> rows;
  std::vector<std::pair<std::string, std::string>> cases;  // (row label, headline case id), for reference
};

// The environment of one results file, as the header shows it.
struct LbSource {
  std::string path;
  Json context;
  bool coverage = false;  // rows feed the support matrix and side-by-side view only (rule above)
};

// A support-matrix cell: how many rows of a method on one backend column had each status.
struct LbMatrixCell {
  std::map<std::string, int> counts;  // status (noisy counted apart from pass) -> rows
  std::string worst;                  // the status that colours the cell; a noisy pass colours as pass
  double noisy_cv = 0;                // the largest cv of its noisy passes (a fraction)
  std::vector<std::string> reasons;   // a few distinct reasons of rows that did not pass
};

struct LbMatrix {
  std::vector<std::string> methods;   // "gqa decode", in first-seen order
  std::vector<std::string> columns;   // "[1] cpu", one per (file, backend, device)
  std::vector<std::string> column_help;
  std::map<std::pair<size_t, size_t>, LbMatrixCell> cells;  // (method, column) -> cell
};

// One line of a latency plot: median latency at each kv_len.
struct LbSeries {
  std::string name;                            // "[1] cpu/blocked"
  std::vector<std::pair<double, double>> points;  // (kv_len, median µs), ascending kv_len
};

struct LbLatencyPlot {
  std::string title;      // "gqa decode"
  std::string subtitle;   // the fixed parameters and dtype of the series
  std::vector<LbSeries> series;
};

// A line plot: series of (x, y) points, either axis logarithmic.
struct LbLinePlot {
  std::string kind;       // the SVG's data-kind: "kv-fidelity", "kv-time"
  std::string title, subtitle, x_title, y_title;
  std::string x_name;     // how a point's title names x: "kv_len=4096"
  bool x_log = false, y_log = false;
  std::string y_unit;     // "us": latency labels in point titles
  std::vector<LbSeries> series;
};

struct LbFidelityPoint {
  std::string method, case_id;
  double kv_bytes;
  std::map<std::string, double> figures;  // attn_recall, out_rel_l2 (those present)
};

// One fidelity figure: a quality key against KV bytes kept, for the cases of one full cache.
struct LbFidelityFigure {
  std::string figure;                   // attn_recall
  std::string subtitle;                 // "full cache 128 MiB (kv_len 32768), bf16"
  std::vector<LbFidelityPoint> points;  // each with that figure
};

// Backends side by side (the rule above). Ratios are the reference column's median over each
// column's, for the cases where both passed and were timed.
struct LbAcrossMethod {
  std::string method;                          // "gqa decode"
  std::vector<std::optional<double>> ratio;    // per column: geometric mean (1 for the reference)
  std::vector<int> cases;                      // per column: cases in that mean
};

struct LbAcross {
  std::vector<std::string> columns;        // "cpu · AMD EPYC (2 threads)": backend · device
  std::vector<std::string> column_help;    // the files its rows came from
  size_t reference = 0;
  std::vector<LbSection> sections;         // per family: a row per case, then the geometric mean
  std::vector<LbAcrossMethod> methods;     // the plot's bars and the Markdown summary
  std::vector<LbAcrossMethod> families;    // geometric mean per family (method holds the family)
  bool empty() const { return sections.empty(); }
};

struct Leaderboard {
  std::vector<LbSource> sources;
  std::vector<LbSection> sections;       // family, then device, then dtype
  LbMatrix matrix;
  std::vector<LbLatencyPlot> latency_plots;
  std::vector<LbFidelityFigure> fidelity;  // per quality key, then per full cache (largest first)
  std::vector<LbSection> compression_points;  // ranked tables, one per compression point
  std::vector<LbLinePlot> compression_plots;  // fidelity against the point; time against kv_len
  LbAcross across;                        // backends side by side
  std::string command_line;               // how it was generated
};

struct LeaderboardOptions {
  std::string reference_backend;  // the side-by-side view's reference ("" for its first column)
  std::vector<std::string> coverage;  // paths (among those given) whose rows are coverage only
};

// Reads the results files (read_results_file: InputError for anything else) and builds the model.
Leaderboard build_leaderboard(const std::vector<std::string>& paths, const std::string& command_line,
                              const LeaderboardOptions& options = {});
// The same from documents already read (tests).
Leaderboard build_leaderboard(const std::vector<Json>& docs, const std::vector<std::string>& paths,
                              const std::string& command_line, const LeaderboardOptions& options = {});

std::string leaderboard_markdown(const Leaderboard& lb);
std::string leaderboard_html(const Leaderboard& lb);

// Pieces the two renderers share (leaderboard.cpp).
namespace lb {
std::string fmt_sig(double v, int digits = 3);      // 3 significant digits, no trailing zeros
std::string fmt_bytes(double bytes);                 // 512 B, 1.50 KiB, 3.00 MiB, 1.20 GiB
std::string fmt_us(double us);                       // 12.3 µs, 1.23 ms, 2.10 s
std::string fmt_flops(double per_s);                 // TFLOP/s, or GFLOP/s below one TFLOP/s
std::vector<std::pair<std::string, std::string>> source_summary(const LbSource& s);  // (field, text)
std::string matrix_cell_text(const LbMatrixCell& c);
// The statuses a reader sees, in the order they are listed: every status, with "noisy" (a pass
// whose timing is not to be trusted) after pass.
const std::vector<std::string>& shown_statuses();
}  // namespace lb

// HTML pieces (leaderboard_plots.cpp): the plots as inline SVG, and text escaping.
std::string html_escape(const std::string& s);
std::string latency_plot_svg(const LbLatencyPlot& plot);
std::string fidelity_plot_svg(const LbFidelityFigure& figure);
std::string line_plot_svg(const LbLinePlot& plot);
std::string support_matrix_html(const LbMatrix& m);
std::string across_plot_svg(const LbAcross& a);  // speedup over the reference per method, a bar per column

}  // namespace attnbench
