// Markdown tables, for the pages attnbench writes (the leaderboard, the method catalog).
#pragma once

#include <string>
#include <vector>

namespace attnbench {

// A cell's text inside a table: pipes escaped, line breaks as spaces.
inline std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// One table row of escaped cells, and the rule under a header of n columns.
inline std::string markdown_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + markdown_cell(c) + " |";
  return s + "\n";
}

inline std::string markdown_rule(size_t n) {
  std::string s = "|";
  for (size_t i = 0; i < n; ++i) s += "---|";
  return s + "\n";
}

}  // namespace attnbench
