#include "attnbench/journal.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attnbench/error.h"
#include "attnbench/row_io.h"

namespace attnbench {

Journal::Journal(std::string path, const Json& header, bool resume) : path_(std::move(path)) {
  if (std::filesystem::path(path_).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  if (resume) {
    std::ifstream in(path_);
    if (!in) throw InputError(cat("--resume: no journal at ", path_, " (nothing to resume)"));
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      Json j;
      try {
        j = Json::parse(line);
      } catch (const std::exception&) {
        break;  // a line cut short by the interruption: everything before it stands
      }
      if (first) {
        first = false;
        if (j.value("suite_hash", "") != header.value("suite_hash", ""))
          throw InputError(cat("--resume: ", path_, " belongs to another suite (hash ", j.value("suite_hash", "?"),
                               ", this suite ", header.value("suite_hash", "?"), ")"));
        continue;
      }
      if (j.contains("row")) {
        try {
          previous_.push_back(row_from_json(j["row"]));
        } catch (const InputError& e) {
          throw InputError(cat("--resume: ", path_, ": ", e.what()));
        }
      }
      if (j.contains("case_done"))
        done_.insert({j["case_done"][0].get<std::string>(), j["case_done"][1].get<std::string>()});
    }
    file_ = std::fopen(path_.c_str(), "a");
  } else {
    file_ = std::fopen(path_.c_str(), "w");
    if (file_) write_line(header);
  }
  if (!file_) throw InputError(cat(path_, ": cannot write the journal"));
}

Journal::~Journal() {
  if (file_) std::fclose(file_);
}

bool Journal::case_done(const std::string& case_id, const std::string& backend) const {
  return done_.count({case_id, backend}) != 0;
}

std::vector<std::string> Journal::variants_done(const std::string& case_id, const std::string& backend) const {
  std::vector<std::string> out;
  for (const auto& r : previous_)
    if (r.record.case_id == case_id && r.record.backend == backend) out.push_back(r.record.variant);
  return out;
}

void Journal::write_line(const Json& j) {
  const std::string line = j.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
  fdatasync(fileno(file_));
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
