// Markdown tables, for the pages attnbench writes (the leaderboard, the method catalog).
#pragma once

#include <algorithm>
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

// Text that came from a suite or a results file (labels, names, devices, paths) inside Markdown:
// HTML's specials as entities and Markdown's own syntax backslash-escaped, so it reads as the text
// it is and never becomes markup (a label "<script>" stays those eight characters). Pipes are left
// to markdown_cell, which every table cell passes through.
inline std::string markdown_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\\': case '`': case '*': case '_': case '[': case ']':
        out += '\\';
        out += c;
        break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

// Inline code (a case id, a command line): fenced by more backticks than any run inside it, so
// nothing in it can close the span; inside code, HTML is text already.
inline std::string markdown_code(const std::string& s) {
  size_t run = 0, longest = 0;
  std::string flat;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    flat += (c == '\n' || c == '\r') ? ' ' : c;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = longest > 0 || flat.empty() || flat.front() == '`' || flat.back() == '`';
  return fence + (pad ? " " : "") + flat + (pad ? " " : "") + fence;
}

// One table row of escaped cells, and the rule under a header of n columns.
inline std::string markdown_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) {
    s += ' ';
    s += markdown_cell(c);
    s += " |";
  }
  return s + "\n";
}

inline std::string markdown_rule(size_t n) {
  std::string s = "|";
  for (size_t i = 0; i < n; ++i) s += "---|";
  return s + "\n";
}

}  // namespace attnbench
