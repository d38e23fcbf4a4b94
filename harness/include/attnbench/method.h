// The method spec contract (docs/design.md "Contracts"): what a method IS, defined once in reference/ and
// shared by every backend. The harness drives every method through this interface and never
// names one.
//
// A spec file reads top to bottom: header comment (catalog id, paper, formula), info(),
// schema(), outputs(), inputs(), reference(), check(), work(), quality(), baseline()/companions(),
// and last the registration line ATTNBENCH_METHOD(Class).
//
// Two contracts that later families lean on:
//
//  * Variable-size outputs. An output declares its capacity shape; if it is ragged it names a
//    `length` tensor (an i32 output whose shape is the capacity's leading `ragged_axis` dims)
//    and a `pad` value required at every position at or beyond the length along `ragged_axis`.
//    Example: kept indices [batch, kv_heads, budget] with length kept[batch, kv_heads], pad −1,
//    order ascending; tokens [batch, draft_len+1] with length emitted[batch], pad −1. The
//    harness checks the layout generically (lengths in range, pad beyond them, no NaN or
//    poison within them, declared order) before the method's check compares values.
//
//  * A method's own random draws. Every draw uses the fp32 uniform of element n of the stream
//    PhiloxStream(case.seed, "<draw site>", kDomainDraws) (rng.h; method_uniform()). The spec
//    names each draw site and the formula of n (e.g. "spec.accept": n = b·draft_len + i), and
//    every backend's impl and the reference draw the same n, so results agree bit for bit
//    except at boundary events (the SEMI check).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnbench/caseid.h"
#include "attnbench/json.h"
#include "attnbench/params.h"
#include "attnbench/tensor.h"

namespace attnbench {

enum class CheckClass { TOL, EXACT, SET, SEMI, STAT };
std::string_view check_class_name(CheckClass c);

enum class Order { none, ascending };

struct OutputDecl {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;                  // capacity
  CheckClass cls = CheckClass::TOL;
  std::string length;           // "" (dense) or the i32 output holding lengths along ragged_axis
  int ragged_axis = -1;
  std::optional<double> pad;    // required beyond the length (ragged outputs only)
  Order order = Order::none;    // order of the valid entries along ragged_axis
  bool check_only = false;      // the reference produces it (margins, scores); impls do not
  std::string doc;              // "O [batch, q_heads, q_len, head_dim]"
  // Every bit pattern is a value (packed codes: kivi's 32-bit words of 2-bit codes): the layout
  // check does not read the poison pattern as an unwritten element (the comparison still runs).
  bool packed_bits = false;
};

struct MethodInfo {
  std::string name;             // "gqa"
  std::string family;           // "attention" | "kvcomp" | "decoding" | "fault"
  std::string summary;          // one line
  std::string catalog_id;       // the method catalog's id, "A-GQA" (docs/methods.md)
  std::string paper;            // short citation
  int spec_version = 1;         // bump when a default or a semantic changes
  std::vector<std::string> phases;  // empty: the id has no phase segment
  std::vector<DType> dtypes;    // the dtypes it is defined for
};

// What the fp64 reference hands to the check. Float outputs are stored as f64.
struct Reference {
  TensorMap tensors;                          // every declared output, plus check-only tensors
  std::map<std::string, double> baseline_err;  // TOL outputs: max-abs error of the same-precision baseline
  // Rows the reference computed and the check compares, empty meaning all: above a work threshold
  // (model-sized cases) a seeded sample. The case has `total_rows` rows; row r of an output is its
  // elements [r·R, (r+1)·R) with R = numel / total_rows (e.g. a query row: head_dim elements of O,
  // one of LSE).
  std::vector<int64_t> checked_rows;
  int64_t total_rows = 0;
};

struct OutputCheck {
  std::string output;
  CheckClass cls = CheckClass::TOL;
  bool pass = true;
  std::string message;  // one line when it fails: metric, value, gate, first bad index
  Json metrics = Json::object();
};

struct CheckReport {
  std::vector<OutputCheck> outputs;
  bool pass() const;
  std::string first_failure() const;  // "O: max_abs 3.1e-2 > gate ..." or ""
};

// What limits an ideal implementation, and so which in-run ceiling a row is judged against
// (backend.h "ceilings"): compute (flops over the compute path's rate), read (bytes, nearly all
// read, over the read bandwidth: decode, scoring, sampling), copy (bytes read and written alike,
// over the copy bandwidth: gathers, compaction). Read and copy rows are timed cold.
enum class Bound { compute, read, copy };

struct Work {
  double flops = 0;   // floating-point operations of the method's math (a multiply-add = 2)
  double bytes = 0;   // bytes an ideal implementation moves: inputs read once, outputs written once
  Bound bound = Bound::compute;  // which of the two the throughput column reports
  bool memory_bound() const { return bound != Bound::compute; }
};

// A related case the harness runs on the same backend: the method's baseline (GQA over MHA) or
// a companion (SnapKV's decode over the compressed cache). `role` names it in results.
struct RelatedCase {
  std::string role;
  std::string method;
  std::string phase;
  std::map<std::string, Value> params;
  DType dtype = DType::f32;
};

class Method {
 public:
  virtual ~Method() = default;

  virtual const MethodInfo& info() const = 0;
  virtual const ParamSchema& schema() const = 0;
  virtual std::vector<OutputDecl> outputs(const Case& c) const = 0;
  // Named host tensors generated from the case seed (domain 0), bit-identical everywhere.
  virtual TensorMap inputs(const Case& c) const = 0;
  // True when inputs() itself replays a case's inputs file (replay_inputs(), replay.h) before it
  // derives inputs from them (quest's page bounds from k); false: the harness replays the
  // generated inputs of the same names afterwards.
  virtual bool replays_own_inputs(const Case& /*c*/) const { return false; }
  // fp64, textbook: reads the inputs (already rounded to the case dtype), parallel over
  // independent slices with each slice sequential, so the thread count changes no bit.
  virtual Reference reference(const Case& c, const TensorMap& inputs) const = 0;
  // Compares the impl's outputs with the reference, one OutputCheck per declared output. The
  // default checks TOL outputs by the gate of docs/design.md "Checks" and EXACT outputs by equality;
  // methods with SET, SEMI or STAT outputs override it (and may call the default for the rest).
  virtual CheckReport check(const Case& c, const TensorMap& inputs, const Reference& ref,
                            const TensorMap& got) const;
  virtual Work work(const Case& c) const = 0;
  // Method-level figures (§7): fidelity, compression, acceptance, p-values. Optional.
  virtual Json quality(const Case& /*c*/, const TensorMap& /*inputs*/, const TensorMap& /*outputs*/) const {
    return Json::object();
  }
  // The method this one is measured against (gqa -> mha with kv_heads dropped), and companion
  // cases timed on the same backend and joined by the leaderboard. Optional.
  virtual std::optional<RelatedCase> baseline(const Case& /*c*/) const { return std::nullopt; }
  virtual std::vector<RelatedCase> companions(const Case& /*c*/) const { return {}; }
};

// Registration (registry.cpp): ATTNBENCH_METHOD(Class) at the end of a spec file.
void register_method(std::unique_ptr<Method> m, const char* source_file);

namespace detail {
struct MethodRegistrar {
  MethodRegistrar(std::unique_ptr<Method> m, const char* file) { register_method(std::move(m), file); }
};
}  // namespace detail

}  // namespace attnbench

#define ATTNBENCH_CONCAT_INNER(a, b) a##b
#define ATTNBENCH_CONCAT(a, b) ATTNBENCH_CONCAT_INNER(a, b)
#define ATTNBENCH_METHOD(Class)                                                            \
  static ::attnbench::detail::MethodRegistrar ATTNBENCH_CONCAT(attnbench_method_, __COUNTER__)( \
      std::make_unique<Class>(), __FILE__)
