// The journal next to a results file (<out>.journal): one JSON line per finished row, appended and
// flushed as rows finish, so an interrupted run loses nothing and `--resume` completes it without
// redoing finished cases. The first line records what run it belongs to (the suite hash and the
// settings); a resume must match it.
#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "attnbench/execute.h"
#include "attnbench/json.h"

namespace attnbench {

class Journal {
 public:
  // resume: read the existing journal (InputError if missing or of another run); else start anew.
  Journal(std::string path, const Json& header, bool resume);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return path_; }
  std::vector<RowResult> take_previous_rows() { return std::move(previous_); }
  bool case_done(const std::string& case_id, const std::string& backend) const;
  std::vector<std::string> variants_done(const std::string& case_id, const std::string& backend) const;

  void append(const RowResult& row);
  void mark_case_done(const std::string& case_id, const std::string& backend);
  void remove();  // after the final results file is written

 private:
  void write_line(const Json& j);
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<RowResult> previous_;
  std::set<std::pair<std::string, std::string>> done_;
};

}  // namespace attnbench
