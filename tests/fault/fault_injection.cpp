// The `fault` family: a method whose CPU impl misbehaves on request, compiled only into the test
// build (attnbench_tests and attnbench_faulty). It proves the harness survives its impls: each
// kind of fault must come out as exactly its status while real cases around it pass.
//
//   kind=none        y = x·Σ terms, correct                               -> pass
//   kind=spin        correct, after busy-waiting `micros` µs (× the env    -> pass (timing tests)
//                    ATTNBENCH_FAULT_SLOWDOWN, default 1)
//   kind=wrong       one element off by one                                -> fail (TOL)
//   kind=overrun     writes one element past the end of y                  -> fail (guard region)
//   kind=huge_alloc  asks the tracked allocator for 1 PiB                  -> error (refused, never attempted)
//   kind=segfault    writes through a null pointer                         -> crashed (SIGSEGV)
//   kind=abort       std::abort()                                          -> crashed (SIGABRT)
//   kind=hang        never returns                                         -> timeout
//   kind=slow_reference  correct, but its fp64 reference busy-waits `micros` µs: the parent is
//                    busy where it cannot look for a signal (the interrupt tests)  -> pass
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "attnbench/impl.h"
#include "attnbench/inputs.h"
#include "attnbench/method.h"

namespace attnbench::fault {
namespace {

class FaultInjection final : public Method {
 public:
  FaultInjection() {
    info_ = {.name = "fault_injection", .family = "fault", .summary = "an impl that fails on request (tests only)",
             .catalog_id = "-", .paper = "-", .spec_version = 1, .phases = {}, .dtypes = {DType::f32}};
    schema_.add({"kind", ParamType::String, Value(std::string("none")), {}, {}, {},
                 {"none", "spin", "wrong", "overrun", "huge_alloc", "segfault", "abort", "hang", "slow_reference"}, "the fault to inject"});
    schema_.add({"n", ParamType::Int, Value(int64_t{1000}), {}, 1.0, 1e8, {}, "elements"});
    schema_.add({"micros", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e8, {}, "spin time of kind=spin and slow_reference"});
    schema_.add({"terms", ParamType::FloatList, Value(FloatList{2.0}), {}, -1e6, 1e6, {}, "y = x·Σ terms (a list value)"});
  }
  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }
  std::vector<OutputDecl> outputs(const Case& c) const override {
    return {{"y", DType::f32, {c.i64("n")}, CheckClass::TOL}};
  }
  TensorMap inputs(const Case& c) const override {
    TensorMap in;
    in.emplace("x", normal_tensor("x", DType::f32, {c.i64("n")}, c.seed));
    return in;
  }
  Reference reference(const Case& c, const TensorMap& in) const override {
    if (c.str("kind") == "slow_reference") {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(c.i64("micros"));
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    double sum = 0;
    for (double t : std::get<FloatList>(c.params.at("terms"))) sum += t;
    Reference r;
    HostTensor y("y", DType::f64, {c.i64("n")});
    for (int64_t i = 0; i < y.numel(); ++i) y.set(i, in.at("x").get(i) * sum);
    r.tensors.emplace("y", std::move(y));
    r.baseline_err["y"] = 0;  // one fp32 multiply of exactly representable values: the floor governs
    return r;
  }
  Work work(const Case& c) const override { return {static_cast<double>(c.i64("n")), 8.0 * c.i64("n"), Bound::compute}; }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

class FaultyCpu final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    kind_ = c.str("kind");
    n_ = c.i64("n");
    micros_ = c.i64("micros");
    for (double t : std::get<FloatList>(c.params.at("terms"))) factor_ += static_cast<float>(t);
    x_ = io["x"].ptr<float>();
    y_ = io["y"].ptr<float>();
    if (const char* s = std::getenv("ATTNBENCH_FAULT_SLOWDOWN")) slowdown_ = std::atof(s);
    if (kind_ == "huge_alloc") huge_ = backend.allocator().allocate(size_t{1} << 50, "fault.huge");
  }
  void run() override {
    if (kind_ == "spin") {
      const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(1000 * micros_ * slowdown_));
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    if (kind_ == "segfault") *static_cast<volatile int*>(nullptr) = 1;
    if (kind_ == "abort") std::abort();
    if (kind_ == "hang")
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    for (int64_t i = 0; i < n_; ++i) y_[i] = x_[i] * factor_;
    if (kind_ == "wrong") y_[n_ / 2] += 1.0f;
    if (kind_ == "overrun") y_[n_] = 0.0f;
  }

 private:
  std::string kind_;
  int64_t n_ = 0, micros_ = 0;
  float factor_ = 0;
  double slowdown_ = 1;
  float *x_ = nullptr, *y_ = nullptr;
  BufferPtr huge_;
};

}  // namespace
}  // namespace attnbench::fault

ATTNBENCH_METHOD(attnbench::fault::FaultInjection);
ATTNBENCH_IMPL(attnbench::fault::FaultyCpu, "fault_injection", "cpu", "faulty");
