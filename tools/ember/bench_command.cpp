// `ember bench`: the command (Note [How ember bench measures] in bench.h).
#include <algorithm>
#include <iostream>
#include <thread>

#include "core/dispatcher.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/parallel.h"
#include "ember/version.h"
#include "tools/ember/bench.h"
#include "tools/ember/commands.h"

namespace ember::cli {
namespace {

using namespace bench;

Device parse_bench_device(const std::string& spec) {
  Device d;
  try {
    d = Device(spec);
  } catch (const Error&) {
    EMBER_FAIL("bench: unknown device '", spec, "' (devices: cpu, cuda, cuda:N)");
  }
  EMBER_CHECK(!d.is_cuda() || cuda::is_available(), "bench: --device ", spec,
              ": no CUDA device here (this build has no CUDA backend, or no GPU is visible); devices: cpu");
  EMBER_CHECK(!d.is_cuda() || d.index < cuda::device_count(), "bench: --device ", spec, ": there are ",
              cuda::device_count(), " CUDA devices");
  return d;
}

// The ops to run, each checked for a kernel for the dtype on the device.
std::vector<const BenchOp*> selected_ops(const BenchCommand& c, DType dtype, Device device) {
  std::vector<const BenchOp*> ops;
  if (c.ops.empty())
    for (const BenchOp& op : bench_ops()) ops.push_back(&op);
  for (const std::string& name : c.ops) ops.push_back(&find_bench_op(name));
  for (const BenchOp* op : ops) {
    const OpEntry* entry = Dispatcher::instance().find(op->op);
    EMBER_CHECK(entry != nullptr, "bench: ", op->name, ": the dispatcher has no op ", op->op);
    EMBER_CHECK(entry->backend_kernel(backend_key(device), dtype).present(), "bench: ", op->name, " has no ",
                dispatch_key_name(backend_key(device)), " kernel for ", dtype, " (kernels: ",
                entry->registered_summary(), ")");
  }
  return ops;
}

BenchResult run_case(const BenchOp& op, const std::vector<int64_t>& dims, DType dtype, Device device, int threads,
                     const RunSettings& settings, const TorchPlugin* torch) {
  BenchResult r;
  r.op = op.name;
  r.family = op.family;
  r.dtype = std::string(dtype_name(dtype));
  r.device = device.str();
  r.dims = dims;
  r.threads = threads;
  r.cost = op.cost(dims, static_cast<double>(element_size(dtype)));
  const Stack args = op.make_args(dims, TensorOptions(dtype).device(device));
  Stack timed = args;
  // One call first: the output to check, and the warm-up of caches and allocator.
  const Tensor output = op.call(timed);
  r.error = error_against_reference(op, args, output);
  std::vector<Side> sides = {{"ember", [&] {
                                op.call(timed);
                                if (device.is_cuda()) cuda::synchronize();
                              }}};
  if (torch != nullptr) sides.push_back({"torch", torch->prepare(op.name, dims, r.dtype, r.device)});
  const std::vector<Timing> timings = time_sides(sides, settings);
  r.ember = timings[0];
  if (torch != nullptr) r.torch = timings[1];
  return r;
}

void write_outputs(const BenchCommand& c, const BenchReport& report) {
  const std::string table = markdown_table(report);
  std::cout << table << std::flush;
  if (!c.markdown.empty()) write_text_file(c.markdown, table);
  if (!c.json.empty()) write_text_file(c.json, report_to_json(report).dump(1) + "\n");
  if (!c.svg.empty()) write_text_file(c.svg, roofline_svg(report));
}

int update_doc(const BenchCommand& c) {
  EMBER_CHECK(!c.update_doc.empty() && !c.from.empty(),
              "bench: --update-doc FILE and --from REPORT.json go together");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(read_text_file(c.from));
  } catch (const nlohmann::json::exception& e) {
    EMBER_FAIL("bench: --from ", c.from, " is not valid JSON: ", e.what());
  }
  const BenchReport report = report_from_json(document, c.from);
  write_text_file(c.update_doc, replace_marked_section(read_text_file(c.update_doc), doc_section(report), c.update_doc));
  std::cerr << "bench: rewrote the ember bench section of " << c.update_doc << " from " << c.from << " ("
            << report.results.size() << " results)\n";
  return 0;
}

int measure_machine_command(const BenchCommand& c) {
  const int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts = {1, max_threads};
  if (c.threads > 0) counts.push_back(c.threads);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  const MachineLimits m = measure_machine(counts, /*quick=*/false);
  std::cout << machine_text(m);
  if (!c.json.empty())
    write_text_file(c.json, nlohmann::json{{"schema", "ember-bench-machine/1"}, {"machine", machine_to_json(m)}}.dump(1) +
                                "\n");
  return 0;
}

}  // namespace

int run_bench(const BenchCommand& c) {
  if (!c.update_doc.empty() || !c.from.empty()) return update_doc(c);
  EMBER_CHECK(c.threads >= 0, "bench: --threads must be positive, got ", c.threads);
  if (c.machine) return measure_machine_command(c);
  const DType dtype = parse_dtype(c.dtype);
  const Device device = parse_bench_device(c.device);
  const std::vector<const BenchOp*> ops = selected_ops(c, dtype, device);
  std::vector<std::vector<int64_t>> shapes;
  if (!c.shapes.empty()) shapes = parse_shapes(c.shapes);
  for (const BenchOp* op : ops)
    for (const auto& dims : shapes.empty() ? op->default_shapes : shapes) check_shape(*op, dims);
  const RunSettings settings{c.repetitions, c.min_time};
  EMBER_CHECK(settings.repetitions >= 1, "bench: --repetitions must be at least 1, got ", settings.repetitions);
  EMBER_CHECK(settings.min_time_s > 0, "bench: --min-time must be positive, got ", settings.min_time_s);

  if (c.threads > 0) set_num_threads(c.threads);
  BenchReport report;
  report.created_at = utc_now_iso8601();
  report.ember_version = version();
  report.threads = get_num_threads();
  report.settings = settings;
  std::optional<TorchPlugin> torch;
  if (c.vs_torch) {
    torch = TorchPlugin::load(c.torch_plugin);
    torch->set_threads(report.threads);
    std::cerr << "bench: libtorch " << torch->version() << " from " << torch->path() << "\n";
  }
  // The roofline is the CPU's: CUDA runs report times, rates and errors only.
  if (!device.is_cuda()) {
    report.machine = c.machine_file.empty() ? measure_machine({report.threads}, /*quick=*/true)
                                            : read_machine_file(c.machine_file);
    std::cerr << machine_text(*report.machine);
    if (!roofline_gflops(*report.machine, report.threads, 1.0))
      std::cerr << "bench: the limits have no figures for " << report.threads
                << " threads, so no roofline (measure them with ember bench --machine --threads " << report.threads
                << ")\n";
  }
  for (const BenchOp* op : ops) {
    for (const auto& dims : shapes.empty() ? op->default_shapes : shapes) {
      std::cerr << "bench: " << op->name << " " << shape_string(dims) << "\n";
      BenchResult r = run_case(*op, dims, dtype, device, report.threads, settings, torch ? &*torch : nullptr);
      if (report.machine) place_on_roofline(r, *report.machine);
      report.results.push_back(std::move(r));
    }
  }
  write_outputs(c, report);
  return 0;
}

}  // namespace ember::cli
