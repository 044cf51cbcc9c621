// Profile::key_averages() and its table, laid out as PyTorch's profiler
// prints it.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "ember/error.h"
#include "profiler/profile_result.h"

namespace ember::profiler {
namespace {

std::string shapes_text(const Event& e) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < e.input_shapes.size(); ++i) {
    os << (i ? ", " : "") << "[";
    for (size_t d = 0; d < e.input_shapes[i].size(); ++d) os << (d ? ", " : "") << e.input_shapes[i][d];
    os << "]";
  }
  os << "]";
  return os.str();
}

std::string format_time(double ns) {
  char buf[32];
  if (ns >= 1e9) std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  return buf;
}

std::string format_memory(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  const double mag = b < 0 ? -b : b;
  if (mag >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f Gb", b / (1024.0 * 1024 * 1024));
  else if (mag >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.2f Mb", b / (1024.0 * 1024));
  else if (mag >= 1024.0) std::snprintf(buf, sizeof buf, "%.2f Kb", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld b", static_cast<long long>(bytes));
  return buf;
}

std::string format_percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

// The sort key of a row, largest first.
double sort_value(const KeyAverage& r, const std::string& by) {
  if (by == "self_cpu_time" || by == "self_cpu_time_total") return static_cast<double>(r.self_ns);
  if (by == "cpu_time_total") return static_cast<double>(r.total_ns);
  if (by == "cpu_time") return r.average_ns();
  if (by == "count") return static_cast<double>(r.count);
  if (by == "self_cpu_memory_usage") return static_cast<double>(r.self_memory_bytes);
  if (by == "cpu_memory_usage") return static_cast<double>(r.memory_bytes);
  if (by == "self_cuda_time" || by == "self_cuda_time_total") return r.self_device_time_us;
  if (by == "cuda_time_total") return r.device_time_total_us;
  if (by == "cuda_time") return r.device_average_us();
  EMBER_FAIL("profiler: key_averages().table: unknown sort_by '", by,
             "' (expected self_cpu_time, self_cpu_time_total, cpu_time_total, cpu_time, count, "
             "self_cpu_memory_usage, cpu_memory_usage, self_cuda_time, self_cuda_time_total, cuda_time_total "
             "or cuda_time)");
}

}  // namespace

KeyAverages::KeyAverages(std::vector<KeyAverage> rows, bool with_shapes, bool with_memory, bool with_device)
    : rows_(std::move(rows)), with_shapes_(with_shapes), with_memory_(with_memory), with_device_(with_device) {}

KeyAverages Profile::key_averages(bool group_by_input_shape) const {
  check_stopped("key_averages");
  std::vector<KeyAverage> rows;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (name, shapes) -> row
  bool with_device = false;
  for (const Event& e : result_->events) {
    std::string shapes = group_by_input_shape ? shapes_text(e) : std::string();
    auto [it, added] = index.try_emplace({e.name, shapes}, rows.size());
    if (added) {
      KeyAverage& r = rows.emplace_back();
      r.name = e.name;
      r.input_shapes = std::move(shapes);
      r.kind = e.kind;
    }
    KeyAverage& r = rows[it->second];
    ++r.count;
    r.self_ns += e.self_ns;
    r.total_ns += e.duration_ns();
    r.self_memory_bytes += e.self_allocated_bytes - e.self_freed_bytes;
    r.memory_bytes += e.allocated_bytes - e.freed_bytes;
    if (e.device_stream >= 0) {
      with_device = true;
      ++r.device_count;
      r.self_device_time_us += e.self_device_time_us;
      r.device_time_total_us += e.device_time_us;
    }
  }
  return KeyAverages(std::move(rows), group_by_input_shape, options_.profile_memory, with_device);
}

std::string KeyAverages::table(const TableOptions& options) const {
  std::vector<const KeyAverage*> order;
  for (const KeyAverage& r : rows_) order.push_back(&r);
  sort_value(KeyAverage{}, options.sort_by);  // an unknown key raises, also when there are no rows
  std::stable_sort(order.begin(), order.end(), [&](const KeyAverage* a, const KeyAverage* b) {
    return sort_value(*a, options.sort_by) > sort_value(*b, options.sort_by);
  });
  if (options.row_limit >= 0 && order.size() > static_cast<size_t>(options.row_limit)) order.resize(options.row_limit);

  int64_t self_total = 0;
  double self_device_total = 0;
  for (const KeyAverage& r : rows_) {
    self_total += r.self_ns;
    self_device_total += r.self_device_time_us;
  }

  constexpr size_t kMaxName = 55;
  size_t name_width = 4;
  for (const KeyAverage* r : order) name_width = std::max(name_width, std::min(r->name.size(), kMaxName));
  size_t shapes_width = 12;
  if (with_shapes_)
    for (const KeyAverage* r : order) shapes_width = std::max(shapes_width, std::min<size_t>(r->input_shapes.size(), 80));

  std::vector<std::string> headers = {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (with_device_) headers.insert(headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  if (with_memory_) headers.insert(headers.end(), {"CPU Mem", "Self CPU Mem"});
  headers.push_back("# of Calls");
  constexpr int kColumn = 12;

  std::ostringstream os;
  auto rule = [&] {
    os << std::string(name_width, '-');
    for (size_t i = 0; i < headers.size(); ++i) os << "  " << std::string(kColumn, '-');
    if (with_shapes_) os << "  " << std::string(shapes_width, '-');
    os << "\n";
  };
  auto cell = [&](const std::string& text) {
    os << "  " << std::string(text.size() < kColumn ? kColumn - text.size() : 0, ' ') << text;
  };
  auto clip = [](const std::string& s, size_t width) { return s.size() <= width ? s : s.substr(0, width - 3) + "..."; };

  rule();
  os << "Name" << std::string(name_width - 4, ' ');
  for (const std::string& h : headers) cell(h);
  if (with_shapes_) os << "  Input Shapes";
  os << "\n";
  rule();
  for (const KeyAverage* r : order) {
    const std::string name = clip(r->name, name_width);
    os << name << std::string(name_width - name.size(), ' ');
    cell(format_percent(static_cast<double>(r->self_ns), static_cast<double>(self_total)));
    cell(format_time(static_cast<double>(r->self_ns)));
    cell(format_percent(static_cast<double>(r->total_ns), static_cast<double>(self_total)));
    cell(format_time(static_cast<double>(r->total_ns)));
    cell(format_time(r->average_ns()));
    if (with_device_) {
      cell(format_time(r->self_device_time_us * 1e3));
      cell(format_percent(r->self_device_time_us, self_device_total));
      cell(format_time(r->device_time_total_us * 1e3));
      cell(format_time(r->device_average_us() * 1e3));
    }
    if (with_memory_) {
      cell(format_memory(r->memory_bytes));
      cell(format_memory(r->self_memory_bytes));
    }
    cell(std::to_string(r->count));
    if (with_shapes_) os << "  " << clip(r->input_shapes, 80);
    os << "\n";
  }
  rule();
  os << "Self CPU time total: " << format_time(static_cast<double>(self_total)) << "\n";
  if (with_device_) os << "Self CUDA time total: " << format_time(self_device_total * 1e3) << "\n";
  return os.str();
}

}  // namespace ember::profiler
