#include "attnbench/dump.h"

#include <filesystem>

#include "attnbench/error.h"
#include "attnbench/execute.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"
#include "attnbench/runner.h"
#include "attnbench/safetensors.h"

namespace attnbench {

std::string default_dump_dir(const Case& c) {
  std::string id = c.id();
  std::string name;
  for (size_t i = 0; i < id.size(); ++i) name += id[i] == '/' ? std::string("__") : std::string(1, id[i]);
  return "dumps/" + name;
}

namespace {

SafetensorsMetadata case_metadata(const CaseData& data) {
  const Case& c = data.c;
  SafetensorsMetadata m = {{"case_id", c.id()},
          {"method", c.method_name()},
          {"spec_version", std::to_string(c.method->info().spec_version)},
          {"seed", std::to_string(c.seed)},
          {"dtype", std::string(dtype_name(c.dtype))},
          {"input_hash", data.input_hash},
          {"reference_hash", data.reference_hash}};
  if (c.source) {
    m["replayed_from"] = c.source->path;
    m["replayed_hash"] = c.source->hash;
  }
  return m;
}

}  // namespace

DumpResult dump_case(const DumpRequest& req) {
  Case c = parse_case_id(req.case_id);
  if (!req.inputs_path.empty()) c = with_source(std::move(c), open_input_source(req.inputs_path, req.input_tensors));
  if (c.source) check_replay_fits(c);
  auto backends = open_backends(req.all_backends ? std::vector<std::string>{} : req.backends, req.backend_opts);
  if (!req.all_backends && req.backends.empty()) backends.clear();
  DumpResult res;
  res.dir = req.out_dir.empty() ? default_dump_dir(c) : req.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(res.dir, ec);
  if (ec) throw InputError(cat("cannot create ", res.dir, ": ", ec.message()));

  const CaseData data = prepare_case_data(c);
  const SafetensorsMetadata meta = case_metadata(data);
  const auto write = [&](const std::string& file, const TensorMap& tensors, const SafetensorsMetadata& m) {
    const std::string path = res.dir + "/" + file;
    write_safetensors(path, tensors, m);
    res.files.push_back(path);
  };
  write("inputs.safetensors", data.inputs, meta);
  write("reference.safetensors", data.ref.tensors, meta);

  ExecuteOptions opt;
  opt.timing = false;
  opt.keep_outputs = true;
  std::vector<Status> statuses;
  bool unavailable = false;  // a backend asked for by name: exit 3, as run does
  for (auto& b : backends) {
    BackendState state{b.get(), b->probe(), std::nullopt};
    if (!state.probe.available) {
      res.row_lines.push_back(cat(b->name(), ": compiled in but unavailable here: ", state.probe.reason));
      unavailable |= !req.all_backends;
      continue;
    }
    for (const ImplEntry* e : registry().impls(c.method_name(), b->name())) {
      if (!req.impl.empty() && e->variant != req.impl) continue;
      const Support sup = e->make()->supports(c, state.probe.limits);
      if (!sup.ok) {
        res.row_lines.push_back(cat(e->row_suffix(), ": unsupported: ", sup.reason));
        continue;
      }
      RowResult row = execute_case(data, state, *e, opt);
      const Row& rec = row.record;
      statuses.push_back(rec.status);
      res.row_lines.push_back(cat(e->row_suffix(), ": ", status_name(rec.status), rec.reason.empty() ? "" : " " + rec.reason));
      if (row.outputs.empty()) continue;  // an error before the outputs came back
      SafetensorsMetadata m = meta;
      m["backend"] = e->backend;
      m["variant"] = e->variant;
      m["status"] = status_name(rec.status);
      m["reason"] = rec.reason;
      write(e->backend + "." + e->variant + ".safetensors", row.outputs, m);
    }
  }
  res.exit_code = exit_code_for(statuses);
  if (res.exit_code == 0 && unavailable) res.exit_code = 3;
  return res;
}

}  // namespace attnbench
