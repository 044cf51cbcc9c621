// `ember bench`'s report as JSON (schema "ember-bench/1") and as a markdown table.
#include <cmath>
#include <cstdio>
#include <limits>

#include "ember/error.h"
#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

constexpr const char* kSchema = "ember-bench/1";
constexpr const char* kNone = "–";

nlohmann::json timing_json(const Timing& t) {
  return {{"median_s", t.median_s}, {"min_s", t.min_s}, {"max_s", t.max_s}, {"repetitions", t.repetitions}};
}

// A finite number, or null (JSON has no infinity).
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Readers of an untrusted document: each names the field it wanted.
struct Reader {
  const std::string& source;
  const nlohmann::json& at(const nlohmann::json& j, const char* key) const {
    EMBER_CHECK(j.is_object() && j.contains(key), "bench: ", source, ": missing field \"", key, "\"");
    return j[key];
  }
  double num(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = at(j, key);
    if (v.is_null()) return std::numeric_limits<double>::infinity();  // written for a non-finite value
    EMBER_CHECK(v.is_number(), "bench: ", source, ": \"", key, "\" must be a number");
    return v.get<double>();
  }
  std::string str(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = at(j, key);
    EMBER_CHECK(v.is_string(), "bench: ", source, ": \"", key, "\" must be a string");
    return v.get<std::string>();
  }
  int64_t integer(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = at(j, key);
    EMBER_CHECK(v.is_number_integer(), "bench: ", source, ": \"", key, "\" must be an integer");
    return v.get<int64_t>();
  }
  Timing timing(const nlohmann::json& j) const {
    Timing t{num(j, "median_s"), num(j, "min_s"), num(j, "max_s"), integer(j, "repetitions")};
    EMBER_CHECK(t.median_s > 0 && std::isfinite(t.median_s), "bench: ", source,
                ": median_s must be a positive number");
    return t;
  }
};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt_time(double s) {
  if (s < 1e-6) return fmt("%.0f ns", s * 1e9);
  if (s < 1e-3) return fmt("%.2f µs", s * 1e6);
  if (s < 1) return fmt("%.3f ms", s * 1e3);
  return fmt("%.3f s", s);
}

std::string fmt_rate(double v) { return v >= 100 ? fmt("%.0f", v) : v >= 1 ? fmt("%.1f", v) : fmt("%.3f", v); }
std::string fmt_error(double v) { return std::isfinite(v) ? (v == 0 ? "0" : fmt("%.1e", v)) : "inf"; }

}  // namespace

nlohmann::json report_to_json(const BenchReport& r) {
  nlohmann::json results = nlohmann::json::array();
  for (const BenchResult& b : r.results) {
    nlohmann::json j = {{"op", b.op},
                        {"family", b.family},
                        {"dtype", b.dtype},
                        {"device", b.device},
                        {"shape", b.dims},
                        {"threads", b.threads},
                        {"flops", b.cost.flops},
                        {"bytes", b.cost.bytes},
                        {"intensity", b.cost.intensity()},
                        {"time", timing_json(b.ember)},
                        {"gflops", b.gflops()},
                        {"gbs", b.gbs()},
                        {"roof_gflops", nullptr},
                        {"roofline_percent", nullptr},
                        {"bound", nullptr},
                        {"error", nullptr},
                        {"torch", nullptr}};
    if (b.roof_gflops) {
      j["roof_gflops"] = *b.roof_gflops;
      j["roofline_percent"] = 100 * b.gflops() / *b.roof_gflops;
      j["bound"] = b.bound;
    }
    if (b.error)
      j["error"] = {{"reference", b.error->reference},
                    {"max_abs", number(b.error->max_abs)},
                    {"max_rel", number(b.error->max_rel)},
                    {"max_ulp", number(b.error->max_ulp)}};
    if (b.torch) {
      j["torch"] = timing_json(*b.torch);
      j["torch"]["speedup"] = b.torch->median_s / b.ember.median_s;
    }
    results.push_back(std::move(j));
  }
  nlohmann::json doc = {{"schema", kSchema},
                        {"created_at", r.created_at},
                        {"ember_version", r.ember_version},
                        {"settings",
                         {{"threads", r.threads},
                          {"repetitions", r.settings.repetitions},
                          {"min_time_s", r.settings.min_time_s}}},
                        {"machine", nullptr},
                        {"results", results}};
  if (r.machine) doc["machine"] = machine_to_json(*r.machine);
  return doc;
}

BenchReport report_from_json(const nlohmann::json& doc, const std::string& source) {
  const Reader rd{source};
  EMBER_CHECK(doc.is_object() && doc.contains("schema") && doc["schema"] == kSchema, "bench: ", source,
              " is not an ember bench report (schema \"", kSchema, "\"; write one with ember bench --json FILE)");
  BenchReport r;
  r.created_at = rd.str(doc, "created_at");
  r.ember_version = rd.str(doc, "ember_version");
  const nlohmann::json& settings = rd.at(doc, "settings");
  r.threads = static_cast<int>(rd.integer(settings, "threads"));
  r.settings.repetitions = static_cast<int>(rd.integer(settings, "repetitions"));
  r.settings.min_time_s = rd.num(settings, "min_time_s");
  if (!rd.at(doc, "machine").is_null()) r.machine = machine_from_json(doc, source);
  const nlohmann::json& results = rd.at(doc, "results");
  EMBER_CHECK(results.is_array(), "bench: ", source, ": \"results\" must be an array");
  for (const nlohmann::json& j : results) {
    BenchResult b;
    b.op = rd.str(j, "op");
    b.family = rd.str(j, "family");
    b.dtype = rd.str(j, "dtype");
    b.device = rd.str(j, "device");
    const nlohmann::json& shape = rd.at(j, "shape");
    EMBER_CHECK(shape.is_array(), "bench: ", source, ": \"shape\" must be an array of sizes");
    for (const nlohmann::json& d : shape) {
      EMBER_CHECK(d.is_number_integer() && d.get<int64_t>() > 0, "bench: ", source,
                  ": \"shape\" must hold positive integers");
      b.dims.push_back(d.get<int64_t>());
    }
    b.threads = static_cast<int>(rd.integer(j, "threads"));
    b.cost = {rd.num(j, "flops"), rd.num(j, "bytes")};
    b.ember = rd.timing(rd.at(j, "time"));
    if (!rd.at(j, "roof_gflops").is_null()) {
      b.roof_gflops = rd.num(j, "roof_gflops");
      b.bound = rd.str(j, "bound");
    }
    if (const nlohmann::json& e = rd.at(j, "error"); !e.is_null())
      b.error = ErrorStats{rd.str(e, "reference"), rd.num(e, "max_abs"), rd.num(e, "max_rel"), rd.num(e, "max_ulp")};
    if (const nlohmann::json& t = rd.at(j, "torch"); !t.is_null()) b.torch = rd.timing(t);
    r.results.push_back(std::move(b));
  }
  return r;
}

std::string markdown_table(const BenchReport& r) {
  std::string out =
      "| op | dtype | shape | median (min–max) | GFLOP/s | GB/s | flop/B | % of roof | max abs err | max rel err "
      "| ULP | torch median | torch/ember |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const BenchResult& b : r.results) {
    std::string roof = kNone;
    if (b.roof_gflops) roof = fmt("%.0f%%", 100 * b.gflops() / *b.roof_gflops) + (b.bound == "memory" ? " (mem)" : " (fma)");
    out += "| " + b.op + " | " + b.dtype + " | " + shape_string(b.dims) + " | " + fmt_time(b.ember.median_s) + " (" +
           fmt_time(b.ember.min_s) + "–" + fmt_time(b.ember.max_s) + ") | " + fmt_rate(b.gflops()) + " | " +
           fmt_rate(b.gbs()) + " | " + fmt_rate(b.cost.intensity()) + " | " + roof + " | " +
           (b.error ? fmt_error(b.error->max_abs) : kNone) + " | " + (b.error ? fmt_error(b.error->max_rel) : kNone) +
           " | " + (b.error ? (std::isfinite(b.error->max_ulp) ? fmt("%.0f", b.error->max_ulp) : "inf") : kNone) +
           " | " + (b.torch ? fmt_time(b.torch->median_s) : kNone) + " | " +
           (b.torch ? fmt("%.2f×", b.torch->median_s / b.ember.median_s) : kNone) + " |\n";
  }
  return out;
}

}  // namespace ember::cli::bench
