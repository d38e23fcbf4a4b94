#include "attnbench/check.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "attnbench/error.h"

namespace attnbench {

std::string_view check_class_name(CheckClass c) {
  switch (c) {
    case CheckClass::TOL: return "TOL";
    case CheckClass::EXACT: return "EXACT";
    case CheckClass::SET: return "SET";
    case CheckClass::SEMI: return "SEMI";
    case CheckClass::STAT: return "STAT";
  }
  return "?";
}

bool CheckReport::pass() const {
  for (const auto& o : outputs)
    if (!o.pass) return false;
  return true;
}

std::string CheckReport::first_failure() const {
  for (const auto& o : outputs)
    if (!o.pass) return o.output + ": " + o.message;
  return {};
}

void poison(HostTensor& t) {
  if (dtype_is_float(t.dtype())) t.fill(std::numeric_limits<double>::quiet_NaN());
  else t.fill_bits(0xA5A5A5A5A5A5A5A5ull);
}

bool is_poison(const HostTensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::i32: return static_cast<uint32_t>(static_cast<int32_t>(t.get(i))) == kPoisonInt;
    case DType::i8:
    case DType::u8: return (static_cast<uint32_t>(static_cast<int64_t>(t.get(i))) & 0xFF) == 0xA5;
    default: return std::isnan(t.get(i));
  }
}

std::string index_str(const Shape& shape, int64_t flat) {
  Shape idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return shape_str(idx);
}

std::string short_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

namespace {

OutputCheck failed(const OutputDecl& d, std::string msg) {
  OutputCheck o{d.name, d.cls, false, std::move(msg), Json::object()};
  return o;
}

}  // namespace

Extent::Extent(const OutputDecl& d, const HostTensor* lengths) : lengths_(d.length.empty() ? nullptr : lengths) {
  if (!lengths_) return;
  ATTNBENCH_ASSERT(d.ragged_axis >= 0 && d.ragged_axis < static_cast<int>(d.shape.size()), d.name, ": bad ragged_axis");
  axis_len_ = d.shape[d.ragged_axis];
  for (size_t i = d.ragged_axis + 1; i < d.shape.size(); ++i) inner_ *= d.shape[i];
}

int64_t Extent::length_of(int64_t outer) const { return static_cast<int64_t>(lengths_->get(outer)); }

bool Extent::valid(int64_t flat) const {
  if (!lengths_) return true;
  const int64_t pos = (flat / inner_) % axis_len_;
  const int64_t outer = flat / (inner_ * axis_len_);
  return pos < length_of(outer);
}

OutputCheck check_layout(const OutputDecl& d, const TensorMap& got) {
  auto it = got.find(d.name);
  if (it == got.end()) return failed(d, "missing output");
  const HostTensor& t = it->second;
  if (t.shape() != d.shape || t.dtype() != d.dtype)
    return failed(d, cat("shape/dtype ", shape_str(t.shape()), " ", dtype_name(t.dtype()), " differs from the declared ",
                         shape_str(d.shape), " ", dtype_name(d.dtype)));
  const HostTensor* lengths = nullptr;
  if (!d.length.empty()) {
    auto lt = got.find(d.length);
    ATTNBENCH_ASSERT(lt != got.end(), d.name, ": length tensor ", d.length, " is not an output");
    lengths = &lt->second;
    const int64_t cap = d.shape[d.ragged_axis];
    for (int64_t i = 0; i < lengths->numel(); ++i) {
      const double len = lengths->get(i);
      if (is_poison(*lengths, i) || len < 0 || len > cap)
        return failed(d, cat("length ", d.length, index_str(lengths->shape(), i), " = ",
                             is_poison(*lengths, i) ? std::string("unwritten") : short_num(len), " is outside [0, ", cap, "]"));
    }
  }
  const Extent extent(d, lengths);
  int64_t n_valid = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (extent.valid(i)) {
      ++n_valid;
      if (is_poison(t, i) && !d.packed_bits)
        return failed(d, cat(dtype_is_float(t.dtype()) ? "NaN (unwritten or computed)" : "unwritten element",
                             " at ", index_str(t.shape(), i)));
    } else if (d.pad) {
      const double v = t.get(i);
      const bool ok = std::isnan(*d.pad) ? std::isnan(v) : v == *d.pad;
      if (!ok) return failed(d, cat("pad at ", index_str(t.shape(), i), " is ", is_poison(t, i) ? "unwritten" : short_num(v),
                                    ", expected ", short_num(*d.pad)));
    }
  }
  if (d.order == Order::ascending && lengths) {
    const int64_t axis_len = d.shape[d.ragged_axis];
    for (int64_t outer = 0; outer < lengths->numel(); ++outer) {
      const int64_t len = extent.length_of(outer);
      for (int64_t k = 1; k < len; ++k)
        if (!(t.get(outer * axis_len + k - 1) < t.get(outer * axis_len + k)))
          return failed(d, cat("entries at ", index_str(t.shape(), outer * axis_len + k), " are not strictly ascending"));
    }
  }
  OutputCheck ok{d.name, d.cls, true, "", Json::object()};
  ok.metrics["n_valid"] = n_valid;
  return ok;
}

double tol_floor(DType t, double max_abs_ref) {
  // One ulp of the largest reference magnitude in the output's storage type (ulp ≤ 2u·|x|).
  return 2.0 * dtype_unit_roundoff(t) * std::max(max_abs_ref, std::numeric_limits<double>::min());
}

double tol_gate(DType t, double baseline_err, double max_abs_ref) { return 2.0 * baseline_err + tol_floor(t, max_abs_ref); }

double max_abs_diff(const HostTensor& ref, const HostTensor& other, const RowSelection& sel) {
  double err = 0;
  sel.for_each(ref.numel(), [&](int64_t i) {
    const double a = ref.get(i), b = other.get(i);
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) err = INFINITY;
      return;
    }
    if (std::isnan(b)) {
      err = INFINITY;
      return;
    }
    err = std::max(err, std::fabs(a - b));
  });
  return err;
}

OutputCheck check_tol(const OutputDecl& d, const HostTensor& ref, const HostTensor& got, double baseline_err,
                      const RowSelection& sel) {
  ATTNBENCH_ASSERT(ref.numel() == got.numel(), d.name, ": reference and output sizes differ");
  double max_abs = 0, max_rel = 0, max_ref = 0, sum_sq_err = 0, sum_sq_ref = 0, dot = 0, sum_sq_got = 0;
  int64_t worst = -1, compared = 0;
  std::string inf_mismatch;
  sel.for_each(ref.numel(), [&](int64_t i) {
    const double a = ref.get(i), b = got.get(i);
    ++compared;
    if (std::isnan(b)) {
      if (inf_mismatch.empty()) inf_mismatch = cat("NaN at ", index_str(d.shape, i));
      return;
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b && inf_mismatch.empty())
        inf_mismatch = cat("infinity mismatch at ", index_str(d.shape, i), ": ", short_num(b), " vs reference ", short_num(a));
      return;
    }
    const double e = std::fabs(a - b);
    if (e > max_abs || worst < 0) {
      max_abs = std::max(max_abs, e);
      worst = i;
    }
    max_ref = std::max(max_ref, std::fabs(a));
    if (a != 0) max_rel = std::max(max_rel, e / std::fabs(a));
    sum_sq_err += e * e;
    sum_sq_ref += a * a;
    sum_sq_got += b * b;
    dot += a * b;
  });
  const double floor = tol_floor(d.dtype, max_ref);
  const double gate = tol_gate(d.dtype, baseline_err, max_ref);
  OutputCheck o{d.name, d.cls, true, "", Json::object()};
  o.metrics["max_abs"] = max_abs;
  o.metrics["gate"] = gate;
  o.metrics["baseline_err"] = baseline_err;
  o.metrics["floor"] = floor;
  o.metrics["max_rel"] = max_rel;
  o.metrics["nmse"] = sum_sq_ref > 0 ? sum_sq_err / sum_sq_ref : 0.0;
  o.metrics["cosine"] = (sum_sq_ref > 0 && sum_sq_got > 0) ? dot / std::sqrt(sum_sq_ref * sum_sq_got) : 1.0;
  o.metrics["compared"] = compared;
  if (!inf_mismatch.empty()) {
    o.pass = false;
    o.message = inf_mismatch;
  } else if (!(max_abs <= gate)) {
    o.pass = false;
    o.message = cat("max_abs ", short_num(max_abs), " > gate ", short_num(gate), " (2×baseline ", short_num(baseline_err), " + floor ",
                    short_num(floor), ") at ", index_str(d.shape, worst));
  }
  return o;
}

OutputCheck check_exact(const OutputDecl& d, const HostTensor& ref, const HostTensor& got, const HostTensor* lengths) {
  const Extent extent(d, lengths);
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (!extent.valid(i)) continue;
    if (ref.get(i) != got.get(i)) {
      if (first < 0) first = i;
      ++mismatches;
    }
  }
  OutputCheck o{d.name, d.cls, mismatches == 0, "", Json::object()};
  o.metrics["mismatches"] = mismatches;
  if (mismatches)
    o.message = cat(mismatches, " mismatches; first at ", index_str(d.shape, first), ": ", short_num(got.get(first)),
                    " vs reference ", short_num(ref.get(first)));
  return o;
}

CheckReport Method::check(const Case& c, const TensorMap& /*inputs*/, const Reference& ref, const TensorMap& got) const {
  CheckReport report;
  for (const OutputDecl& d : outputs(c)) {
    if (d.check_only) continue;
    const HostTensor& g = got.at(d.name);
    const HostTensor& r = ref.tensors.at(d.name);
    switch (d.cls) {
      case CheckClass::TOL: {
        auto be = ref.baseline_err.find(d.name);
        ATTNBENCH_ASSERT(be != ref.baseline_err.end(), d.name, ": TOL output without a baseline error");
        report.outputs.push_back(check_tol(d, r, g, be->second, {ref.checked_rows, ref.total_rows}));
        break;
      }
      case CheckClass::EXACT:
        report.outputs.push_back(check_exact(d, r, g, d.length.empty() ? nullptr : &got.at(d.length)));
        break;
      default:
        ATTNBENCH_ASSERT(false, info().name, ": output ", d.name, " of class ", check_class_name(d.cls),
                         " needs the method's own check()");
    }
  }
  return report;
}

}  // namespace attnbench
