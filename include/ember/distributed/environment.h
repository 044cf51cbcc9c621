// Who am I in the job: the launchers' environment contract.
//
// A launcher tells each process its place through environment variables:
// torchrun and `ember launch` set RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; OpenMPI's mpirun sets
// OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and _LOCAL_SIZE; Slurm's srun sets
// SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID. Every source that is present
// must agree with the others and with explicit values.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ember::distributed {

struct WorldInfo {
  int rank = -1;
  int world_size = -1;
  int local_rank = -1;        // -1: no launcher said
  int local_world_size = -1;  // -1: no launcher said
  std::string master_addr;    // empty: MASTER_ADDR unset
  int master_port = -1;       // -1: MASTER_PORT unset
};

// Looks a variable up; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process's environment (getenv).
EnvLookup process_environment();

// Rank and world size from explicit values (-1: not given) and the
// environment. Raises an ember::Error when a value is missing, is not an
// integer, is out of range, or two sources contradict each other (naming both).
WorldInfo resolve_world(int rank, int world_size, const EnvLookup& env = process_environment());

}  // namespace ember::distributed
