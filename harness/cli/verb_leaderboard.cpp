// leaderboard: results files in, leaderboard.md and leaderboard.html out (attnbench/leaderboard.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "args.h"
#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/json.h"
#include "attnbench/leaderboard.h"
#include "verbs.h"

namespace attnbench::cli {


int verb_leaderboard(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, false, "this text"},
                                       {"out", true, false, "directory for leaderboard.md and leaderboard.html (default .)"},
                                       {"reference", true, false,
                                        "backend the side-by-side view's ratios are against (default: its first column)"},
                                       {"coverage", true, false,
                                        "comma-separated results files of edge-case suites (suites/ci.json): their rows join "
                                        "the support matrix and the side-by-side view, not the ranked tables and plots"}};
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench leaderboard RESULTS.json... [--coverage A.json,B.json] [--reference BACKEND] [--out DIR]\n\n"
                "One row per method (and phase) on each backend, variant and device, at its headline case:\n"
                "latency, throughput and %% of the in-run peak, memory, equivalence, the method's quality\n"
                "figures, and the speedup over its baseline or companions on the same backend; then every\n"
                "case run on several backends or devices side by side, with ratios to the --reference one. Writes\n"
                "DIR/leaderboard.md and a self-contained DIR/leaderboard.html (sortable tables, plots).\n\n%s",
                flags_help(flags).c_str());
    return 0;
  }
  std::vector<std::string> paths = args.positional(), coverage;
  if (args.has("coverage")) {
    const std::string list = args.get("coverage");
    for (size_t at = 0; at <= list.size();) {
      const size_t comma = std::min(list.find(',', at), list.size());
      if (comma == at) throw InputError(cat("--coverage ", list, ": an empty file name in the list"));
      coverage.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    for (const auto& c : coverage)
      if (std::find(paths.begin(), paths.end(), c) == paths.end()) paths.push_back(c);
  }
  if (paths.size() == coverage.size() && !coverage.empty())
    throw InputError("leaderboard: every file is --coverage; give at least one results file to rank");
  if (paths.empty()) throw InputError("leaderboard needs results files: attnbench leaderboard A.json [B.json ...]");
  std::string command = "attnbench leaderboard";
  for (const auto& p : args.positional()) command += " " + p;
  if (args.has("coverage")) command += " --coverage " + args.get("coverage");
  if (args.has("reference")) command += " --reference " + args.get("reference");
  // The reader checks every field compare and merge use; a field only the leaderboard reads may
  // still have the wrong type (a hand-edited file): that is the file's fault, named, exit 2.
  const auto render = [&](const std::vector<std::string>& files) {
    std::vector<std::string> among;
    for (const auto& c : coverage)
      if (std::find(files.begin(), files.end(), c) != files.end()) among.push_back(c);
    const Leaderboard lb = build_leaderboard(files, command, {args.get("reference"), among});
    return std::make_tuple(lb, leaderboard_markdown(lb), leaderboard_html(lb));
  };
  std::tuple<Leaderboard, std::string, std::string> pages;
  try {
    pages = render(paths);
  } catch (const Json::exception& e) {
    for (const auto& p : paths) {
      try {
        render({p});
      } catch (const Json::exception& one) {
        throw InputError(cat(p, ": a field the leaderboard reads has the wrong type: ", one.what()));
      }
    }
    throw InputError(cat("leaderboard: a field of these results files has the wrong type: ", e.what()));
  }
  const auto& [lb, markdown, html] = pages;
  const std::filesystem::path dir = args.get("out", ".");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(cat(dir.string(), ": cannot create the output directory: ", ec.message()));
  write_file_atomically((dir / "leaderboard.md").string(), markdown);
  write_file_atomically((dir / "leaderboard.html").string(), html);
  size_t rows = 0;
  for (const auto& s : lb.sections) rows += s.rows.size();
  std::printf("leaderboard: %zu rows in %zu sections from %zu files: %s, %s\n", rows, lb.sections.size(),
              lb.sources.size(), (dir / "leaderboard.md").c_str(), (dir / "leaderboard.html").c_str());
  return 0;
}

}  // namespace attnbench::cli
