#include "ember/distributed/environment.h"

#include <charconv>
#include <cstdlib>
#include <vector>

#include "ember/error.h"

namespace ember::distributed {

namespace {

struct Source {
  std::string name;
  int value;
};

int parse_int(const std::string& name, const std::string& text) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  EMBER_CHECK(ec == std::errc() && p == end && !text.empty(), "init_process_group: ", name, "='", text,
              "' is not an integer");
  return v;
}

// The agreed value of a quantity that the named variables (and an explicit
// value, when >= 0) may give; -1 when none gives it.
int agreed(const char* quantity, int explicit_value, const std::vector<std::string>& names, const EnvLookup& env) {
  std::vector<Source> sources;
  if (explicit_value >= 0) sources.push_back({"the explicit " + std::string(quantity), explicit_value});
  for (const std::string& n : names)
    if (std::optional<std::string> v = env(n)) sources.push_back({n, parse_int(n, *v)});
  if (sources.empty()) return -1;
  for (const Source& s : sources)
    EMBER_CHECK(s.value == sources[0].value, "init_process_group: the ", quantity, " is contradictory: ",
                sources[0].name, "=", sources[0].value, " but ", s.name, "=", s.value);
  return sources[0].value;
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

WorldInfo resolve_world(int rank, int world_size, const EnvLookup& env) {
  WorldInfo w;
  w.rank = agreed("rank", rank, {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}, env);
  w.world_size = agreed("world size", world_size, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}, env);
  EMBER_CHECK(w.rank >= 0, "init_process_group: no rank given: pass InitOptions::rank or set RANK (torchrun, "
              "ember launch), OMPI_COMM_WORLD_RANK (mpirun) or SLURM_PROCID (srun)");
  EMBER_CHECK(w.world_size >= 1, "init_process_group: no world size given (or it is below 1: ", w.world_size,
              "): pass InitOptions::world_size or set WORLD_SIZE, OMPI_COMM_WORLD_SIZE or SLURM_NTASKS");
  EMBER_CHECK(w.rank < w.world_size, "init_process_group: rank ", w.rank, " is outside [0, ", w.world_size,
              ") for world size ", w.world_size);
  w.local_rank = agreed("local rank", -1, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}, env);
  w.local_world_size = agreed("local world size", -1, {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"}, env);
  if (w.local_rank >= 0 && w.local_world_size >= 1)
    EMBER_CHECK(w.local_rank < w.local_world_size, "init_process_group: local rank ", w.local_rank,
                " is outside [0, ", w.local_world_size, ")");
  if (std::optional<std::string> a = env("MASTER_ADDR")) w.master_addr = *a;
  if (std::optional<std::string> p = env("MASTER_PORT")) {
    w.master_port = parse_int("MASTER_PORT", *p);
    EMBER_CHECK(w.master_port >= 1 && w.master_port <= 65535, "init_process_group: MASTER_PORT=", w.master_port,
                " is outside [1, 65535]");
  }
  return w;
}

}  // namespace ember::distributed
