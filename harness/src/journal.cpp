#include "attnbench/journal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/row_io.h"

namespace attnbench {

OutputLock::OutputLock(const std::string& out) : path_(out + ".lock") {
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);  // CLOEXEC: workers must not hold it
  if (fd_ < 0) throw InputError(errno_text(cat(path_, ": cannot create the lock of ", out)));
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[256] = {0};
    const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
    close(fd_);
    fd_ = -1;
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("another process");
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
    throw InputError(cat(out, ": another run is writing it (", holder, "); wait for it, or give another --out"));
  }
  // The holder's pid and command, for the message a second run prints. A lock file left by a
  // killed run holds no flock: it is taken over here.
  const std::string me = cat("pid ", getpid());
  if (ftruncate(fd_, 0) == 0) [[maybe_unused]] const ssize_t w = pwrite(fd_, me.data(), me.size(), 0);
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  unlink(path_.c_str());
  close(fd_);
}

namespace {

std::string show(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::vector<std::string> settings_differences(const Json& journal, const Json& now) {
  std::vector<std::string> out;
  for (const auto& [k, v] : now.items()) {
    const Json was = journal.contains(k) ? journal.at(k) : Json();
    if (was != v) out.push_back(cat(k, ": journal ", journal.contains(k) ? show(was) : "(none)", ", now ", show(v)));
  }
  for (const auto& [k, v] : journal.items())
    if (!now.contains(k)) out.push_back(cat(k, ": journal ", show(v), ", now (none)"));
  return out;
}

Journal::Journal(std::string path, const Json& suite_hash, const Json& settings, const std::string& command_line,
                 bool resume)
    : path_(std::move(path)) {
  const Json header = {{"journal", 2}, {"suite_hash", suite_hash}, {"settings", settings}, {"command_line", command_line}};
  std::string text;
  const bool exists = std::filesystem::exists(path_);
  if (exists) text = read_input_file(path_, "journal");
  if (resume && !exists) throw InputError(cat("--resume: no journal at ", path_, " (nothing to resume)"));
  // Complete lines only: a line cut short by a kill ends the journal, and is cut off the file
  // before anything is appended.
  size_t good_end = 0, rows = 0;
  bool header_seen = false;
  std::string journal_command = "?";
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    Json j;
    try {
      j = Json::parse(text.substr(at, nl - at));
    } catch (const Json::exception&) {
      break;
    }
    if (!j.is_object()) break;
    if (!header_seen) {
      header_seen = true;
      if (j.contains("command_line") && j["command_line"].is_string()) journal_command = j["command_line"];
      if (resume) {
        if (j.value("suite_hash", Json()) != suite_hash)
          throw InputError(cat("--resume: ", path_, " belongs to another suite (hash ", show(j.value("suite_hash", Json("?"))),
                               ", this suite ", show(suite_hash), ")"));
        const auto diff = settings_differences(j.value("settings", Json::object()), settings);
        if (!diff.empty()) {
          std::string list;
          for (const auto& d : diff) list += (list.empty() ? "" : "; ") + d;
          throw InputError(cat("--resume: ", path_, " was run with other settings (", list,
                               "); resume with the journal's settings (its command: ", journal_command, ")"));
        }
      }
    } else if (j.contains("row")) {
      ++rows;
      if (resume) {
        try {
          previous_.push_back(row_from_json(j["row"]));
        } catch (const InputError& e) {
          throw InputError(cat("--resume: ", path_, ": ", e.what()));
        }
        const Row& r = previous_.back().record;
        variants_[{r.case_id, r.backend}].push_back(r.variant);
      }
    } else if (j.contains("case_done") && resume) {
      const Json& d = j["case_done"];
      if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_string()) break;
      done_.insert({d[0].get<std::string>(), d[1].get<std::string>()});
    }
    good_end = at = nl + 1;
  }
  if (!resume && rows > 0)
    throw InputError(cat(path_, " holds ", rows, " rows of an interrupted run (its command: ", journal_command,
                         "); continue it with --resume, or delete ", path_, " to start over"));
  if (resume && header_seen) {
    if (good_end < text.size() && truncate(path_.c_str(), static_cast<off_t>(good_end)) != 0)
      throw std::runtime_error(errno_text(cat(path_, ": cannot cut off its incomplete last line")));
    file_ = std::fopen(path_.c_str(), "a");
  } else {
    file_ = std::fopen(path_.c_str(), "w");  // a journal killed before its header was whole holds nothing
    if (file_) write_line(header);
  }
  if (!file_) throw InputError(errno_text(cat(path_, ": cannot write the journal")));
}

Journal::~Journal() {
  if (file_) std::fclose(file_);
}

bool Journal::case_done(const std::string& case_id, const std::string& backend) const {
  return done_.count({case_id, backend}) != 0;
}

std::vector<std::string> Journal::variants_done(const std::string& case_id, const std::string& backend) const {
  const auto it = variants_.find({case_id, backend});
  return it == variants_.end() ? std::vector<std::string>{} : it->second;
}

void Journal::write_line(const Json& j) {
  const std::string line = j.dump() + "\n";
  // One write per line, flushed and synced: a kill leaves whole lines and at most one cut short.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      fdatasync(fileno(file_)) != 0)
    throw std::runtime_error(errno_text(cat(path_, ": write failed")));
}

void Journal::append(const RowResult& row) { write_line({{"row", row_to_json(row)}}); }

void Journal::mark_case_done(const std::string& case_id, const std::string& backend) {
  write_line({{"case_done", Json::array({case_id, backend})}});
}

void Journal::remove() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  std::filesystem::remove(path_);
}

}  // namespace attnbench
