// leaderboard: results files in, leaderboard.md and leaderboard.html out (attnbench/leaderboard.h).
#include <cstdio>
#include <filesystem>

#include "args.h"
#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/leaderboard.h"
#include "verbs.h"

namespace attnbench::cli {


int verb_leaderboard(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, false, "this text"},
                                       {"out", true, false, "directory for leaderboard.md and leaderboard.html (default .)"}};
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench leaderboard RESULTS.json... [--out DIR]\n\n"
                "One row per method (and phase) on each backend, variant and device, at its headline case:\n"
                "latency, throughput and %% of the in-run peak, memory, equivalence, the method's quality\n"
                "figures, and the speedup over its baseline or companions on the same backend. Writes\n"
                "DIR/leaderboard.md and a self-contained DIR/leaderboard.html (sortable tables, plots).\n\n%s",
                flags_help(flags).c_str());
    return 0;
  }
  if (args.positional().empty()) throw InputError("leaderboard needs results files: attnbench leaderboard A.json [B.json ...]");
  std::string command = "attnbench leaderboard";
  for (const auto& p : args.positional()) command += " " + p;
  const Leaderboard lb = build_leaderboard(args.positional(), command);
  const std::filesystem::path dir = args.get("out", ".");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(cat(dir.string(), ": cannot create the output directory: ", ec.message()));
  write_file_atomically((dir / "leaderboard.md").string(), leaderboard_markdown(lb));
  write_file_atomically((dir / "leaderboard.html").string(), leaderboard_html(lb));
  size_t rows = 0;
  for (const auto& s : lb.sections) rows += s.rows.size();
  std::printf("leaderboard: %zu rows in %zu sections from %zu files: %s, %s\n", rows, lb.sections.size(),
              lb.sources.size(), (dir / "leaderboard.md").c_str(), (dir / "leaderboard.html").c_str());
  return 0;
}

}  // namespace attnbench::cli
