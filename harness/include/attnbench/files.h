// Files the user names. Inputs are read whole, with one clear error for a missing file, a
// directory or an unreadable one; outputs are checked before any work is done (a regular file or
// nothing, never one of the command's own inputs) and written atomically, a failed write naming
// the path and the system's reason (docs/running.md "What a results file guarantees").
#pragma once

#include <string>
#include <vector>

namespace attnbench {

// The file's bytes; InputError "<path>: cannot open the <kind>: <reason>" otherwise.
std::string read_input_file(const std::string& path, const std::string& kind);

// InputError unless `path` can become the output: it names nothing or a regular file, is none of
// `inputs` (the suite or results files this command reads), and its folder exists or can be made.
// `flag` names the option in the message ("--out").
void check_output_file(const std::string& path, const std::vector<std::string>& inputs, const std::string& flag);

// Writes through <path>.tmp, fsync and rename, so a reader sees the old file or the new one.
// std::runtime_error "<path>: write failed: <reason>" on any failure (a full disk, a size limit).
void write_file_atomically(const std::string& path, const std::string& bytes);

// "<what>: <strerror(errno)>", for a failed system call.
std::string errno_text(const std::string& what);

}  // namespace attnbench
