#include "attnbench/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "attnbench/error.h"

namespace attnbench {

namespace fs = std::filesystem;

std::string errno_text(const std::string& what) { return cat(what, ": ", std::strerror(errno)); }

std::string read_input_file(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw InputError(errno_text(cat(path, ": cannot open the ", kind)));
  if (S_ISDIR(st.st_mode)) throw InputError(cat(path, ": is a directory, not a ", kind));
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(errno_text(cat(path, ": cannot open the ", kind)));
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text(cat(path, ": cannot read the ", kind));
      close(fd);
      throw InputError(why);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

void check_output_file(const std::string& path, const std::vector<std::string>& inputs, const std::string& flag) {
  if (path.empty()) throw InputError(cat(flag, " is empty"));
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) throw InputError(cat(flag, " ", path, ": is a directory; give a file name"));
    if (!fs::is_regular_file(st)) throw InputError(cat(flag, " ", path, ": is not a regular file (a device, pipe or socket)"));
    for (const auto& in : inputs)
      if (!in.empty() && fs::equivalent(path, in, ec))
        throw InputError(cat(flag, " ", path, ": is ", in, ", which this command reads; write elsewhere"));
  }
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  fs::create_directories(parent, ec);
  if (ec || !fs::is_directory(parent))
    throw InputError(cat(flag, " ", path, ": cannot create its folder ", parent.string(), ec ? ": " + ec.message() : ""));
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw std::runtime_error(cat(path, ": write failed: not a regular file"));
  int fd = -1;
  // The reason is errno's at the failure, taken before close and unlink can change it.
  const auto fail = [&](const std::string& at) {
    const std::string why = errno_text(cat(at, ": write failed"));
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    throw std::runtime_error(why);
  };
  fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp);
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = ENOSPC;
    if (n <= 0) fail(tmp);
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) fail(tmp);
  const int closing = fd;
  fd = -1;
  if (close(closing) != 0) fail(tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) fail(path);
}

}  // namespace attnbench
