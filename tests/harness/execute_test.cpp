// The execution pipeline's own checks (docs/design.md "Contracts", "Checks"), with a toy ragged method and impls that
// misbehave on purpose: each fault must fail the case with the right message, and the correct
// impl must pass. Also: an impl's runtime error becomes an `error` row.
#include <catch2/catch.hpp>

#include <cstring>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/execute.h"
#include "attnbench/impl.h"
#include "support.h"

using namespace attnbench;

namespace {

// Kept indices per row: row r keeps the ascending indices 0, 2, 4, ... (r + 1 of them), padded -1.
class ToyRagged final : public Method {
 public:
  ToyRagged() {
    info_ = {.name = "toy_ragged", .family = "test", .summary = "", .catalog_id = "", .paper = "", .spec_version = 1,
             .phases = {}, .dtypes = {DType::f32}};
    schema_.add({"rows", ParamType::Int, Value(int64_t{4}), {}, 1.0, 8.0, {}, "rows"});
  }
  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }
  std::vector<OutputDecl> outputs(const Case&) const override {
    OutputDecl idx{"idx", DType::i32, {4, 8}, CheckClass::EXACT, "len", 1, -1.0, Order::ascending};
    OutputDecl len{"len", DType::i32, {4}, CheckClass::EXACT};
    OutputDecl val{"val", DType::f32, {4}, CheckClass::TOL};
    return {idx, len, val};
  }
  TensorMap inputs(const Case&) const override {
    TensorMap in;
    in.emplace("x", HostTensor("x", DType::f32, {4}));
    for (int i = 0; i < 4; ++i) in.at("x").set(i, 0.5 * i);
    return in;
  }
  Reference reference(const Case& c, const TensorMap& in) const override {
    Reference r;
    HostTensor idx("idx", DType::i32, {4, 8}), len("len", DType::i32, {4}), val("val", DType::f64, {4});
    idx.fill(-1);
    for (int row = 0; row < 4; ++row) {
      len.set(row, row + 1);
      for (int k = 0; k <= row; ++k) idx.set(row * 8 + k, 2 * k);
      val.set(row, in.at("x").get(row));
    }
    (void)c;
    r.tensors.emplace("idx", std::move(idx));
    r.tensors.emplace("len", std::move(len));
    r.tensors.emplace("val", std::move(val));
    r.baseline_err["val"] = 0;
    return r;
  }
  Work work(const Case&) const override { return {}; }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

enum class Fault { none, unwritten, wrong_pad, guard_overwrite, not_ascending, wrong_value, wrong_float, throws };

template <Fault F>
class ToyImpl final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }
  void prepare(const Case&, Backend&, const IoBuffers& io) override {
    idx_ = io["idx"].ptr<int32_t>();
    len_ = io["len"].ptr<int32_t>();
    val_ = io["val"].ptr<float>();
    x_ = io["x"].ptr<float>();
  }
  void run() override {
    if (F == Fault::throws) throw BackendError("toy: device lost (VK_ERROR_DEVICE_LOST)");
    for (int row = 0; row < 4; ++row) {
      len_[row] = row + 1;
      for (int k = 0; k < 8; ++k) idx_[row * 8 + k] = k <= row ? 2 * k : -1;
      val_[row] = x_[row];
    }
    if (F == Fault::unwritten) idx_[3 * 8 + 2] = static_cast<int32_t>(kPoisonInt);
    if (F == Fault::wrong_pad) idx_[0 * 8 + 5] = 0;
    if (F == Fault::guard_overwrite) idx_[4 * 8] = 7;  // one element past the end
    if (F == Fault::not_ascending) std::swap(idx_[2 * 8 + 0], idx_[2 * 8 + 1]);
    if (F == Fault::wrong_value) idx_[1 * 8 + 1] = 4;
    if (F == Fault::wrong_float) val_[2] += 1e-3f;
  }

 private:
  int32_t *idx_ = nullptr, *len_ = nullptr;
  float *val_ = nullptr, *x_ = nullptr;
};

template <Fault F>
RowResult run_toy() {
  static ToyRagged method;
  Case c;
  c.method = &method;
  c.params = method.schema().complete({}, "");
  Backend& cpu = test::require_backend("cpu");
  const CaseData data = prepare_case_data(c);
  BackendState state{&cpu, cpu.probe(), std::nullopt};
  const ImplEntry entry{"toy_ragged", "cpu", "toy", []() -> std::unique_ptr<Impl> { return std::make_unique<ToyImpl<F>>(); },
                        __FILE__};
  ExecuteOptions opt;
  opt.timing = false;
  return execute_case(data, state, entry, opt);
}

}  // namespace

TEST_CASE("a correct impl passes the layout and value checks", "[cpu]") {
  const RowResult r = run_toy<Fault::none>();
  CHECK(r.record.status == Status::pass);
  CHECK(r.record.reason == "");
}

TEST_CASE("negative: an unwritten element fails", "[cpu]") {
  const RowResult r = run_toy<Fault::unwritten>();
  CHECK(r.record.status == Status::fail);
  CHECK_THAT(r.record.reason, Catch::Contains("idx: unwritten element at [3,2]"));
}

TEST_CASE("negative: a wrong pad value fails", "[cpu]") {
  const RowResult r = run_toy<Fault::wrong_pad>();
  CHECK(r.record.status == Status::fail);
  CHECK_THAT(r.record.reason, Catch::Contains("pad at [0,5] is 0, expected -1"));
}

TEST_CASE("negative: a write past the end of a buffer fails on its guard", "[cpu]") {
  const RowResult r = run_toy<Fault::guard_overwrite>();
  CHECK(r.record.status == Status::fail);
  CHECK_THAT(r.record.reason, Catch::Contains("guard region overwritten: idx (after end)"));
}

TEST_CASE("negative: entries out of the declared order fail", "[cpu]") {
  const RowResult r = run_toy<Fault::not_ascending>();
  CHECK(r.record.status == Status::fail);
  CHECK_THAT(r.record.reason, Catch::Contains("not strictly ascending"));
}

TEST_CASE("negative: a wrong integer fails EXACT, a wrong float fails TOL", "[cpu]") {
  const RowResult r = run_toy<Fault::wrong_value>();
  CHECK(r.record.status == Status::fail);
  CHECK_THAT(r.record.reason, Catch::Contains("idx: 1 mismatches; first at [1,1]: 4 vs reference 2"));
  const RowResult f = run_toy<Fault::wrong_float>();
  CHECK(f.record.status == Status::fail);
  CHECK_THAT(f.record.reason, Catch::Contains("val: max_abs 0.001 > gate"));
}

TEST_CASE("an impl's runtime error becomes an error row naming it", "[cpu]") {
  const RowResult r = run_toy<Fault::throws>();
  CHECK(r.record.status == Status::error);
  CHECK(r.record.reason == "toy: device lost (VK_ERROR_DEVICE_LOST)");
}

TEST_CASE("a real impl with a corrupted output fails TOL at the right place", "[cpu]") {
  const Case c = test::case_from_id("gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=300/bf16/s2");
  const CaseData data = prepare_case_data(c);
  TensorMap got;
  got.emplace("O", HostTensor("O", DType::bf16, {2, 8, 1, 64}));
  got.emplace("LSE", HostTensor("LSE", DType::f32, {2, 8, 1}));
  for (int64_t i = 0; i < got.at("O").numel(); ++i) got.at("O").set(i, data.ref.tensors.at("O").get(i));
  for (int64_t i = 0; i < got.at("LSE").numel(); ++i) got.at("LSE").set(i, data.ref.tensors.at("LSE").get(i));
  CHECK(c.method->check(c, data.inputs, data.ref, got).pass());  // the rounded reference passes
  got.at("O").set(5 * 64 + 7, data.ref.tensors.at("O").get(5 * 64 + 7) + 0.25);
  const CheckReport bad = c.method->check(c, data.inputs, data.ref, got);
  CHECK_FALSE(bad.pass());
  CHECK_THAT(bad.first_failure(), Catch::Contains("O: max_abs 0.2") && Catch::Contains("> gate") && Catch::Contains("at [0,5,0,7]"));
}
