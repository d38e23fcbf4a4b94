#include "attnbench/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>

#include "attnbench/case_job.h"
#include "attnbench/error.h"
#include "attnbench/interrupt.h"
#include "attnbench/row_io.h"
#include "attnbench/runner.h"

extern char** environ;

namespace attnbench {

WorkerProcess::WorkerProcess(const std::string& exe, const std::vector<std::string>& args) {
  int in[2], out[2], err[2];
  if (pipe(in) || pipe(out) || pipe(err)) throw BackendError(cat("worker: pipe failed: ", std::strerror(errno)));
  // Move every pipe end above the child's target descriptors (0-3) and mark it close-on-exec, so
  // the dup2s below cannot clobber one another and nothing else leaks into the child.
  for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1]}) {
    const int high = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
    close(*fd);
    *fd = high;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, err[1], 1);  // drivers and layers print: their fd 1 is our stderr pipe
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_adddup2(&fa, out[1], 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: a timeout kills everything it started
  sigset_t none, def;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  std::vector<std::string> argv_s = {exe, "worker", "--parent-pid", std::to_string(getpid())};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, exe.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  err_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    throw BackendError(cat("worker: cannot start ", exe, ": ", std::strerror(rc)));
  }
}

WorkerProcess::~WorkerProcess() {
  if (to_child_ >= 0) close(to_child_);
  to_child_ = -1;
  if (pid_ > 0 && !reaped_) {
    // Give it a moment to leave on EOF, then make sure.
    for (int i = 0; i < 50 && !reaped_; ++i) {
      reap(false);
      if (!reaped_) usleep(20000);
    }
    if (!reaped_) kill();
  }
  for (int fd : {from_child_, err_})
    if (fd >= 0) close(fd);
}

void WorkerProcess::send(const Json& message) {
  const std::string line = message.dump() + "\n";
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = write(to_child_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the child is gone; read() will say how
    off += static_cast<size_t>(n);
  }
}

WorkerProcess::Read WorkerProcess::read(Json& out, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool out_open = from_child_ >= 0;
  while (true) {
    if (const size_t nl = pending_.find('\n'); nl != std::string::npos) {
      const std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      try {
        out = Json::parse(line);
        return Read::message;
      } catch (const std::exception&) {
        continue;  // not ours: ignore a stray line
      }
    }
    if (!out_open) {
      reap(true);
      return Read::eof;
    }
    if (interrupt_signal()) return Read::interrupted;
    const auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return Read::timeout;
    pollfd fds[2] = {{from_child_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int n = poll(fds, err_ >= 0 ? 2 : 1, static_cast<int>(std::min(left, 0.5) * 1000) + 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw BackendError(cat("worker: poll failed: ", std::strerror(errno)));
    }
    char buf[65536];
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      const ssize_t r = ::read(err_, buf, sizeof buf);
      if (r > 0) {
        stderr_.append(buf, static_cast<size_t>(r));
        if (stderr_.size() > 65536) stderr_.erase(0, stderr_.size() - 32768);
      } else if (r == 0) {
        close(err_);
        err_ = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t r = ::read(from_child_, buf, sizeof buf);
      if (r > 0) pending_.append(buf, static_cast<size_t>(r));
      else if (r == 0) out_open = false;
    }
  }
}

void WorkerProcess::reap(bool block) {
  if (reaped_ || pid_ <= 0) return;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
  }
}

void WorkerProcess::kill() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);  // the whole group
    reap(true);
  }
}

std::string WorkerProcess::exit_description() {
  reap(true);
  if (WIFSIGNALED(status_)) return cat("signal ", WTERMSIG(status_), " (", strsignal(WTERMSIG(status_)), ")");
  if (WIFEXITED(status_)) return cat("exit code ", WEXITSTATUS(status_));
  return "unknown exit";
}

int WorkerProcess::term_signal() {
  reap(true);
  return WIFSIGNALED(status_) ? WTERMSIG(status_) : 0;
}

std::string WorkerProcess::stderr_tail(size_t max_bytes) const {
  std::string t = stderr_.size() > max_bytes ? stderr_.substr(stderr_.size() - max_bytes) : stderr_;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// --- the child ------------------------------------------------------------------------------------

namespace {

class ResultChannel {
 public:
  ResultChannel() : fd_(3) {}
  void send(const Json& j) {
    const std::string line = j.dump() + "\n";
    size_t off = 0;
    while (off < line.size()) {
      const ssize_t n = write(fd_, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) std::_Exit(1);  // the parent is gone
      off += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

}  // namespace

int worker_main(const std::vector<std::string>& args) {
  std::string backend_name, cache_dir, cache_salt = ReferenceCache::default_salt();
  std::vector<std::string> options;
  pid_t parent = 0;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--parent-pid") parent = static_cast<pid_t>(std::stol(args[i + 1]));
    else if (args[i] == "--backend") backend_name = args[i + 1];
    else if (args[i] == "--backend-opt") options.push_back(args[i + 1]);
    else if (args[i] == "--cache-dir") cache_dir = args[i + 1];
    else if (args[i] == "--cache-salt") cache_salt = args[i + 1];
  }
  // A worker never outlives its parent: the kernel kills it the moment the parent dies (it would
  // otherwise finish its case first), and a parent gone before this line is noticed here.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent > 0 && getppid() != parent) return 1;
  ResultChannel channel;
  try {
    auto backends = open_backends({backend_name}, options);
    BackendState state{backends.at(0).get(), backends.at(0)->probe(), std::nullopt};
    channel.send({{"hello", probe_to_json(state.probe)}});
    if (!state.probe.available) return 0;
    const ReferenceCache cache(cache_dir, cache_salt);
    std::string line;
    while (std::getline(std::cin, line)) {
      const Json msg = Json::parse(line);
      const std::string op = msg.value("op", "");
      if (op == "peaks") {
        state.peaks = state.backend->measure_peaks();
        channel.send({{"peaks", peaks_to_json(*state.peaks)}});
      } else if (op == "case") {
        if (msg.contains("peaks")) state.peaks = peaks_from_json(msg["peaks"]);
        const CaseJob job = job_from_json(msg);
        bool lost = false;
        run_case_job(job, state, cache,
                     {[&](const std::string& v) {
                        if (lost) return false;
                        channel.send({{"start", v}});
                        return true;
                      },
                      [&](RowResult r) {
                        lost |= r.record.device_lost;
                        channel.send({{"row", row_to_json(r)}});
                      }});
        if (lost) {  // a sticky device error: this process is done; a fresh worker takes the rest
          channel.send({{"restart", true}});
          return 0;
        }
        channel.send({{"done", true}});
      }
    }
  } catch (const InputError& e) {  // a bad --backend-opt: the parent reports it as the user's error
    channel.send({{"input_error", e.what()}});
    return 2;
  } catch (const std::exception& e) {
    channel.send({{"fatal", e.what()}});
    return 1;
  }
  return 0;
}

}  // namespace attnbench
