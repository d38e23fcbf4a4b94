// `attnbench dump CASE_ID`: inputs, reference and each backend's outputs as .safetensors (dump.h).
#include "verbs.h"

#include <cstdio>

#include "args.h"
#include "attnbench/dump.h"
#include "attnbench/error.h"
#include "attnbench/replay.h"

namespace attnbench::cli {

int verb_dump(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {
      {"help", false, false, "this text"},
      {"backends", true, false, "comma-separated backends whose outputs to dump (default: every available one; none: inputs and reference only)"},
      {"impl", true, false, "dump only this variant"},
      {"backend-opt", true, true, "<backend>.<option>=<value> (repeatable)"},
      {"out", true, false, "directory (default dumps/<case id with '/' as \"__\">)"},
      {"inputs", true, false, "FILE.safetensors: the inputs file a replayed case id (\"...@<hash>\") names by its hash"},
      {"input-tensor", true, true, "INPUT=TENSOR: an input read from a tensor of another name (repeatable)"},
  };
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench dump CASE_ID [options]\n\nWrites the case's inputs, fp64 reference (with check-only tensors) and each\n"
                "backend's outputs as .safetensors files; docs/dump.md shows how to load them in numpy.\n\n%s",
                flags_help(flags).c_str());
    return 0;
  }
  if (args.positional().size() != 1) throw InputError("dump needs exactly one case id; see attnbench dump --help");
  DumpRequest req;
  req.case_id = args.positional()[0];
  req.out_dir = args.get("out");
  req.impl = args.get("impl");
  req.backend_opts = args.all("backend-opt");
  req.inputs_path = args.get("inputs");
  req.input_tensors = parse_tensor_map(args.all("input-tensor"));
  const std::string backends = args.get("backends");
  req.all_backends = !args.has("backends");
  if (backends != "none") {
    size_t start = 0;
    while (start <= backends.size() && !backends.empty()) {
      const size_t comma = backends.find(',', start);
      const std::string name = backends.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) req.backends.push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const DumpResult res = dump_case(req);
  for (const auto& line : res.row_lines) std::fprintf(stderr, "%s\n", line.c_str());
  for (const auto& f : res.files) std::printf("%s\n", f.c_str());
  return res.exit_code;
}

}  // namespace attnbench::cli
