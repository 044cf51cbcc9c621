// `ember bench`: every tuned kernel timed against the machine's limits and
// checked against its plain reference kernel (docs/profiling.md, "ember bench").
//
// Note [How ember bench measures]
// 1. The op table (bench_ops.cpp) says, per kernel family member, which
//    dispatcher op runs, how a shape list ("MxKxN") becomes the op's boxed
//    arguments, the default shapes, and the flop/byte model.
// 2. Each case (op, dtype, shape) is timed by Google Benchmark's runner:
//    `repetitions` samples of at least `min_time` seconds each, median,
//    min and max by its statistics (bench_runner.cpp). With --vs-torch the
//    libtorch side is registered beside it and the repetitions of the two
//    are interleaved in one run (bench_torch.cpp loads the libtorch side
//    from a plugin, so the ember binary never links libtorch).
// 3. The same arguments go through the op's reference kernel
//    (kernels/reference_kernels.h); output 0 of both is compared in max
//    abs, max rel and ULP (bench_error.cpp).
// 4. The roofline: the FMA peak and the STREAM triad bandwidth at the
//    bench's thread count (bench/machine_limits.h, measured on the spot or
//    read from an earlier `--machine --json` file) give the attainable rate
//    min(peak, intensity x bandwidth); each case reports its share of it.
// 5. Results print as a markdown table, and go to JSON, an SVG roofline and
//    a marked section of a markdown file (bench_output.cpp, bench_svg.cpp,
//    bench_doc.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ivalue.h"
#include "ember/device.h"
#include "ember/dtype.h"

namespace ember::cli::bench {

// Arithmetic and compulsory memory traffic of one call (bench_ops.cpp says
// what each op counts).
struct Cost {
  double flops = 0;
  double bytes = 0;
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
};

struct BenchOp {
  const char* name;       // the --op name: "mm", "conv2d", ...
  const char* family;     // "gemm", "conv", "pooling", "norm", "softmax", "attention", "reduction", "elementwise"
  const char* op;         // the dispatcher op it runs (and whose reference it is checked against)
  const char* dims_doc;   // what the numbers of a shape mean: "MxKxN"
  int num_dims;           // how many numbers a shape has; 0: any (the tensor's shape)
  std::vector<std::vector<int64_t>> default_shapes;
  Stack (*make_args)(const std::vector<int64_t>& dims, TensorOptions options);  // inputs random, seeded
  Tensor (*call)(Stack& args);                                                 // the op; its output 0
  Cost (*cost)(const std::vector<int64_t>& dims, double element_bytes);
};

// Every op `ember bench` knows, in the order it runs them.
const std::vector<BenchOp>& bench_ops();
// The op called `name`; raises naming the valid choices.
const BenchOp& find_bench_op(const std::string& name);
// Raises unless `dims` fits the op: as many numbers as it takes, a pooling
// window no larger than the image (parse_shapes checks the values are positive).
void check_shape(const BenchOp& op, const std::vector<int64_t>& dims);

// "256x256x256,8x3": shapes separated by commas, sizes by 'x'. Raises on
// anything else (empty parts, zero or negative sizes, overflow).
std::vector<std::vector<int64_t>> parse_shapes(const std::string& spec);
std::string shape_string(const std::vector<int64_t>& dims);  // "256x256x256"
// "float32", "f32", "float64", "f64", "bfloat16", "bf16", "float16", "f16".
DType parse_dtype(const std::string& name);

// Distances between the tuned output and the reference's (bench_error.cpp).
struct ErrorStats {
  std::string reference;  // the reference's name
  double max_abs = 0;
  double max_rel = 0;     // over elements whose reference value is not 0
  double max_ulp = 0;     // in the output dtype's units in the last place
};
// ULPs between two values of a binary floating format of `bits` width (16,
// 32, 64) given as raw bit patterns: how many representable values lie
// between them. Both NaN: 0; one NaN: infinity.
double ulp_distance_bits(uint64_t a, uint64_t b, int bits);
double ulp_distance(float a, float b);
double ulp_distance(double a, double b);
// Compares `tuned` with `reference` (same shape; any device and float dtype).
ErrorStats compare_outputs(const Tensor& tuned, const Tensor& reference);
// Runs the op's reference kernel on `args` and compares; nullopt when the op
// has none for this backend and dtype.
std::optional<ErrorStats> error_against_reference(const BenchOp& op, Stack args, const Tensor& tuned);

// Median, min and max seconds per call over the repetitions.
struct Timing {
  double median_s = 0, min_s = 0, max_s = 0;
  int64_t repetitions = 0;
};

// The machine's limits (bench_machine.cpp).
struct MachineLimits {
  std::string cpu;                       // /proc/cpuinfo's model name
  std::string isa;                       // the FMA loop's instruction set
  std::string measured_at;               // ISO 8601 UTC
  bool quick = false;                    // the short measurement of a plain `ember bench` run
  std::map<int, double> fma_peak_gflops;  // by thread count
  std::map<int, double> triad_gbs;
  std::map<int, double> copy_gbs;
};

struct BenchResult {
  std::string op, family, dtype, device;
  std::vector<int64_t> dims;
  int threads = 1;
  Cost cost;
  Timing ember;
  std::optional<Timing> torch;
  std::optional<ErrorStats> error;
  // The roofline at this thread count: absent off the CPU or without limits.
  std::optional<double> roof_gflops;
  std::string bound;  // with a roof: "memory" (intensity x bandwidth < peak) or "compute"

  double gflops() const { return cost.flops / ember.median_s * 1e-9; }
  double gbs() const { return cost.bytes / ember.median_s * 1e-9; }
};

// The attainable GFLOP/s at `intensity` flop/byte: min(peak, intensity x
// bandwidth) at `threads` (nullopt when the limits lack that thread count).
std::optional<double> roofline_gflops(const MachineLimits& m, int threads, double intensity);
// Sets the result's roof and bound from the limits at its thread count.
void place_on_roofline(BenchResult& result, const MachineLimits& m);

// How long each case is measured (bench_runner.cpp).
struct RunSettings {
  int repetitions = 7;      // samples per side, each timed over at least min_time_s
  double min_time_s = 0.02;
};

// One side of a case: a call to time ("ember", "torch").
struct Side {
  std::string name;
  std::function<void()> call;
};

// Times every side with Google Benchmark's runner, the repetitions of all
// sides interleaved in one run; one Timing per side, in order.
std::vector<Timing> time_sides(const std::vector<Side>& sides, const RunSettings& settings);

// Measures the FMA peak and the STREAM bandwidth at each thread count
// (bench_machine.cpp). `quick`: about half a second (64 MiB arrays, short
// FMA runs), for a plain `ember bench` run; otherwise as bench/fma_peak and
// bench/stream measure.
MachineLimits measure_machine(const std::vector<int>& thread_counts, bool quick);
nlohmann::json machine_to_json(const MachineLimits& m);
// Reads the "machine" object of an `ember bench --machine --json` (or a full
// `ember bench --json`) document; `source` names the file in errors.
MachineLimits machine_from_json(const nlohmann::json& document, const std::string& source);
MachineLimits read_machine_file(const std::string& path);
std::string machine_text(const MachineLimits& m);  // the lines `ember bench --machine` prints
std::string utc_now_iso8601();

// File I/O of the outputs: a whole file, written atomically.
std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& text);

// One `ember bench` run: what `--json` writes and `--update-doc --from` reads.
struct BenchReport {
  std::string created_at;  // ISO 8601 UTC
  std::string ember_version;
  int threads = 1;
  RunSettings settings;
  std::optional<MachineLimits> machine;  // absent for CUDA runs (no device roofline yet)
  std::vector<BenchResult> results;
};

// The JSON schema "ember-bench/1" (docs/profiling.md lists its fields). bench_output.cpp.
nlohmann::json report_to_json(const BenchReport& report);
BenchReport report_from_json(const nlohmann::json& document, const std::string& source);
// The markdown table; "–" where a figure does not exist (no reference, no
// libtorch side, no roofline).
std::string markdown_table(const BenchReport& report);
// The roofline plot: log-log axes, the roofs of the measured peak and
// bandwidth, a labelled point per result. bench_svg.cpp.
std::string roofline_svg(const BenchReport& report);
// The text between the markers: machine, date, the command, the table. bench_doc.cpp.
std::string doc_section(const BenchReport& report);
inline constexpr const char* kDocBegin = "<!-- ember bench: begin -->";
inline constexpr const char* kDocEnd = "<!-- ember bench: end -->";
// `doc` with the text between its markers replaced by `section`; raises
// unless each marker occurs exactly once, begin before end.
std::string replace_marked_section(const std::string& doc, const std::string& section, const std::string& source);

// The libtorch side of --vs-torch, loaded from its plugin (bench_torch.cpp).
class TorchPlugin {
 public:
  // Loads `path`, or else $EMBER_BENCH_TORCH, or else libember_bench_torch.so
  // next to the running ember binary. Gives libtorch the fair setup of
  // docs/performance.md first: OpenBLAS (when installed) and no
  // OPENBLAS_CORETYPE cap. Raises when there is no plugin.
  static TorchPlugin load(const std::string& path);
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }
  void set_threads(int n) const;
  // A call that runs the case on libtorch (its inputs made now).
  std::function<void()> prepare(const std::string& op, const std::vector<int64_t>& dims, const std::string& dtype,
                                const std::string& device) const;

 private:
  struct Api;
  std::shared_ptr<const Api> api_;
  std::string version_, path_;
};

}  // namespace ember::cli::bench
