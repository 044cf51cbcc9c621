// `ember bench --machine`: the machine's limits, measured with the loops of
// bench/machine_limits.h, printed, and saved or read as JSON.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "bench/machine_limits.h"
#include "ember/error.h"
#include "serialize/safetensors_format.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown CPU";
}

nlohmann::json by_threads(const std::map<int, double>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [threads, v] : values) out[std::to_string(threads)] = v;
  return out;
}

std::map<int, double> read_by_threads(const nlohmann::json& machine, const char* key, const std::string& source) {
  EMBER_CHECK(machine.contains(key) && machine[key].is_object() && !machine[key].empty(), "bench: ", source,
              ": machine.", key, " must be an object of thread count -> value");
  std::map<int, double> out;
  for (const auto& [threads, v] : machine[key].items()) {
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(threads, &used);
      if (used != threads.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    EMBER_CHECK(n >= 1, "bench: ", source, ": machine.", key, " has a key '", threads,
                "' that is not a thread count");
    EMBER_CHECK(v.is_number() && v.get<double>() > 0, "bench: ", source, ": machine.", key, "[\"", threads,
                "\"] must be a positive number");
    out[n] = v.get<double>();
  }
  return out;
}

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

MachineLimits measure_machine(const std::vector<int>& thread_counts, bool quick) {
  MachineLimits m;
  m.cpu = cpu_model();
  m.isa = ember::bench::fma_isa();
  m.quick = quick;
  m.measured_at = utc_now_iso8601();
  const int fma_runs = 5, stream_runs = quick ? 5 : 9;
  ember::bench::StreamArrays arrays(size_t{quick ? 64u : 256u} << 20);
  for (int threads : thread_counts) {
    double best = 0;
    for (int run = 0; run < fma_runs; ++run)
      best = std::max(best, ember::bench::fma_gflops(threads, quick ? 1.5e9 : 32e9));
    m.fma_peak_gflops[threads] = best;
    std::vector<double> triad, copy;
    for (int run = 0; run < stream_runs; ++run) {
      triad.push_back(arrays.triad_gbs(threads));
      copy.push_back(arrays.copy_gbs(threads));
    }
    m.triad_gbs[threads] = ember::bench::median_of(triad);
    m.copy_gbs[threads] = ember::bench::median_of(copy);
  }
  return m;
}

nlohmann::json machine_to_json(const MachineLimits& m) {
  return {{"cpu", m.cpu},
          {"isa", m.isa},
          {"measured_at", m.measured_at},
          {"quick", m.quick},
          {"fma_peak_gflops", by_threads(m.fma_peak_gflops)},
          {"triad_gbs", by_threads(m.triad_gbs)},
          {"copy_gbs", by_threads(m.copy_gbs)}};
}

MachineLimits machine_from_json(const nlohmann::json& document, const std::string& source) {
  EMBER_CHECK(document.is_object() && document.contains("machine") && document["machine"].is_object(),
              "bench: ", source, " has no \"machine\" object (write one with ember bench --machine --json FILE)");
  const nlohmann::json& j = document["machine"];
  MachineLimits m;
  auto text = [&](const char* key) {
    EMBER_CHECK(j.contains(key) && j[key].is_string(), "bench: ", source, ": machine.", key,
                " must be a string");
    return j[key].get<std::string>();
  };
  m.cpu = text("cpu");
  m.isa = text("isa");
  m.measured_at = text("measured_at");
  EMBER_CHECK(j.contains("quick") && j["quick"].is_boolean(), "bench: ", source,
              ": machine.quick must be true or false");
  m.quick = j["quick"].get<bool>();
  m.fma_peak_gflops = read_by_threads(j, "fma_peak_gflops", source);
  m.triad_gbs = read_by_threads(j, "triad_gbs", source);
  m.copy_gbs = read_by_threads(j, "copy_gbs", source);
  return m;
}

MachineLimits read_machine_file(const std::string& path) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    EMBER_FAIL("bench: --machine-file ", path, " is not valid JSON: ", e.what());
  }
  return machine_from_json(document, path);
}

std::string machine_text(const MachineLimits& m) {
  std::ostringstream os;
  os << "machine: " << m.cpu << ", measured " << m.measured_at << (m.quick ? " (quick)" : "") << "\n";
  for (const auto& [threads, peak] : m.fma_peak_gflops) {
    char line[160];
    std::snprintf(line, sizeof line, "  %2d thread%s: fp32 FMA peak %7.1f GFLOP/s (%s), STREAM triad %6.1f GB/s",
                  threads, threads == 1 ? " " : "s", peak, m.isa.c_str(),
                  m.triad_gbs.count(threads) ? m.triad_gbs.at(threads) : 0.0);
    os << line;
    if (m.copy_gbs.count(threads)) {
      std::snprintf(line, sizeof line, ", copy %6.1f GB/s", m.copy_gbs.at(threads));
      os << line;
    }
    os << "\n";
  }
  return os.str();
}

std::optional<double> roofline_gflops(const MachineLimits& m, int threads, double intensity) {
  const auto peak = m.fma_peak_gflops.find(threads);
  const auto bandwidth = m.triad_gbs.find(threads);
  if (peak == m.fma_peak_gflops.end() || bandwidth == m.triad_gbs.end()) return std::nullopt;
  return std::min(peak->second, intensity * bandwidth->second);
}

void place_on_roofline(BenchResult& result, const MachineLimits& m) {
  result.roof_gflops = roofline_gflops(m, result.threads, result.cost.intensity());
  if (result.roof_gflops)
    result.bound = *result.roof_gflops < m.fma_peak_gflops.at(result.threads) ? "memory" : "compute";
}

std::string read_text_file(const std::string& path) {
  const std::vector<uint8_t> bytes = serialize::read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_text_file(const std::string& path, const std::string& text) {
  serialize::write_file_atomic(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace ember::cli::bench
