// The journal next to a results file (<out>.journal): one JSON line per finished row, appended and
// flushed as rows finish, so an interrupted run loses nothing and `--resume` completes it without
// redoing finished cases (docs/running.md "What a results file guarantees"). The first line
// records which run it belongs to: the suite's hash and the settings that shape its rows; a
// resume must match both, and is refused naming the difference.
//
// A run holds <out>.lock while it writes (flock: released by the kernel however the run ends, so
// a lock left by a dead run is stale and taken over); a second run on the same --out is refused,
// naming the first by pid.
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attnbench/execute.h"
#include "attnbench/json.h"

namespace attnbench {

class OutputLock {
 public:
  explicit OutputLock(const std::string& out);  // InputError when another live run holds it
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

class Journal {
 public:
  // resume: continue the journal at `path` (InputError if missing, of another suite, or run with
  // other settings). Else start one; InputError if `path` holds rows of an interrupted run, which
  // is kept and named with how to resume or discard it.
  Journal(std::string path, const Json& suite_hash, const Json& settings, const std::string& command_line, bool resume);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return path_; }
  // The rows a resumed journal holds (once: they move out); variants_done() answers from its own
  // index, so it is right before and after.
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
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> variants_;
  std::set<std::pair<std::string, std::string>> done_;
};

// The settings of a run that the journal's header records: every one that changes what a row
// holds. "key: journal <a>, now <b>" for each that differs.
std::vector<std::string> settings_differences(const Json& journal, const Json& now);

}  // namespace attnbench
