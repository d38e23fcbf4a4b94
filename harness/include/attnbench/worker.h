// Worker processes (docs/design.md "Running"): each backend's cases run in a child `attnbench worker` (the
// same binary, a hidden verb), so a kernel that crashes, aborts or hangs costs one row, not the run.
//
// The child is spawned in a process group of its own (a timeout kills the whole group), reads one
// JSON job per line on stdin and answers one JSON line per event on fd 3 (its own descriptor:
// fd 1 inside the worker goes to stderr, since drivers and layers print). Messages:
//   child → parent  {"hello": probe}            once, after opening its backend
//                   {"peaks": peaks}            answer to {"op": "peaks"}
//                   {"start": variant}          a variant begins (its timeout starts)
//                   {"row": row}                a finished row (row_io.h)
//                   {"done": true}              the job is finished
//                   {"fatal": message}          the worker cannot go on (then it exits)
//   parent → child  {"op": "peaks"} | job_to_json(...) (case_job.h); EOF ends the worker.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "attnbench/json.h"

namespace attnbench {

class WorkerProcess {
 public:
  // Spawns `exe worker` with the arguments; fd 0/1+2/3 as above.
  WorkerProcess(const std::string& exe, const std::vector<std::string>& args);
  ~WorkerProcess();  // closes stdin, waits a moment, then kills the group
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  void send(const Json& message);  // false-free: a dead child is noticed by the next read
  enum class Read { message, eof, timeout, interrupted };
  // Waits up to timeout_s for the next message, collecting stderr meanwhile.
  Read read(Json& out, double timeout_s);
  // Kills the process group and reaps the child.
  void kill();
  // "signal 11 (Segmentation fault)", "exit code 134", ... after eof or kill().
  std::string exit_description();
  int term_signal();  // the signal that ended it (after eof or kill()), or 0

  std::string stderr_tail(size_t max_bytes = 2048) const;
  pid_t pid() const { return pid_; }

 private:
  void reap(bool block);
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, err_ = -1;
  std::string pending_, stderr_;
  bool reaped_ = false;
  int status_ = 0;
};

// The hidden `attnbench worker` verb.
int worker_main(const std::vector<std::string>& args);

}  // namespace attnbench
