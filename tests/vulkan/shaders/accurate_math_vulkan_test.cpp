// accurate_log and accurate_exp (impls/vulkan/shaders/accurate_math.glsl) on the device, against
// fp64: within 2 ulp of the correctly rounded result, as the race's boundary constant c_race and
// SnapKV's tie band assume (docs/methodology.md) — over the fp32 uniforms the samplers draw,
// their −log, probabilities down to 1e-30, and the exp arguments of a softmax.
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include <cmath>
#include <cstring>

#include "attnbench/rng.h"
#include "impls/vulkan/runtime/vulkan_backend.h"

using namespace attnbench;

namespace {

struct Evaluated {
  std::vector<float> log, exp;
};

Evaluated evaluate(vulkan::VulkanBackend& be, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  BufferPtr in = be.allocator().allocate(x.size() * 4, "math.x", BufferRole::input);
  BufferPtr lg = be.allocator().allocate(x.size() * 4, "math.log", BufferRole::output);
  BufferPtr ex = be.allocator().allocate(x.size() * 4, "math.exp", BufferRole::output);
  HostTensor t("x", DType::f32, {n});
  std::memcpy(t.raw(), x.data(), x.size() * 4);
  be.upload(t, *in);
  auto k = be.bind(be.pipeline("accurate_math_probe", {64}, 3), {in.get(), lg.get(), ex.get()});
  const uint32_t count = static_cast<uint32_t>(n);
  be.dispatch(*k, count, (count + 63) / 64);
  be.synchronize();
  Evaluated e{std::vector<float>(x.size()), std::vector<float>(x.size())};
  be.download(*lg, t);
  std::memcpy(e.log.data(), t.raw(), x.size() * 4);
  be.download(*ex, t);
  std::memcpy(e.exp.data(), t.raw(), x.size() * 4);
  return e;
}

// |got − exact| in units of the ulp of the correctly rounded result.
double ulps(float got, double exact) {
  const float want = static_cast<float>(exact);
  const double ulp = std::fabs(static_cast<double>(std::nextafter(want, INFINITY)) - want);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

}  // namespace

TEST_CASE("accurate_log and accurate_exp on Vulkan are within 2 ulp", "[vulkan]") {
  auto& be = vulkan::as_vulkan(test::require_backend("vulkan"));
  const PhiloxStream s(11, "accurate_math.test", kDomainInputs);
  std::vector<float> log_args, exp_args;
  for (uint32_t i = 0; i < (1u << 24); i += 61) log_args.push_back(static_cast<float>(i + 1) * 0x1p-24f);  // uniforms
  for (uint32_t i = 0; i < 200000; ++i) {
    const double u = s.uniform_f64(i);
    log_args.push_back(static_cast<float>(-std::log(u)));                                  // −log u
    log_args.push_back(static_cast<float>(std::ldexp(0.5 + 0.5 * u, static_cast<int>(i % 200) - 100)));  // 2^-101 .. 2^99
    exp_args.push_back(static_cast<float>(-87.0 * s.uniform_f64(200000 + i)));  // a softmax's e^(s − m)
    exp_args.push_back(static_cast<float>(-0.01 * s.uniform_f64(400000 + i)));  // near the maximum
  }
  const Evaluated lg = evaluate(be, log_args), ex = evaluate(be, exp_args);
  double worst_log = 0, worst_exp = 0;
  float worst_log_x = 0, worst_exp_x = 0;
  for (size_t i = 0; i < log_args.size(); ++i) {
    const double e = ulps(lg.log[i], std::log(static_cast<double>(log_args[i])));
    if (e > worst_log) {
      worst_log = e;
      worst_log_x = log_args[i];
    }
  }
  for (size_t i = 0; i < exp_args.size(); ++i) {
    const double e = ulps(ex.exp[i], std::exp(static_cast<double>(exp_args[i])));
    if (e > worst_exp) {
      worst_exp = e;
      worst_exp_x = exp_args[i];
    }
  }
  INFO("worst log: " << worst_log << " ulp at " << worst_log_x << "; worst exp: " << worst_exp << " ulp at " << worst_exp_x);
  CHECK(worst_log <= 2.0);
  CHECK(worst_exp <= 2.0);
  std::printf("accurate_math: log within %.3f ulp, exp within %.3f ulp\n", worst_log, worst_exp);

  const std::vector<float> special = {0.0f, INFINITY, 1.0f, 1.0f - 0x1p-24f, 0x1p-24f, -1.0f, -120.0f, 100.0f};
  const Evaluated sp = evaluate(be, special);
  CHECK(sp.log[0] == -INFINITY);
  CHECK(sp.log[1] == INFINITY);
  CHECK(sp.log[2] == 0.0f);
  CHECK(ulps(sp.log[3], std::log1p(-0x1p-24)) <= 1.0);
  CHECK(ulps(sp.log[4], std::log(0x1p-24)) <= 1.0);
  CHECK(std::isnan(sp.log[5]));
  CHECK(sp.exp[2] == Approx(std::exp(1.0)).epsilon(2e-7));
  CHECK(sp.exp[6] == 0.0f);
  CHECK(sp.exp[7] == INFINITY);
}

#else

TEST_CASE("accurate_log and accurate_exp on Vulkan are within 2 ulp", "[vulkan]") { attnbench::test::require_backend("vulkan"); }

#endif
