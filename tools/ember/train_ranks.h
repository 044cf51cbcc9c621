// `ember train --nproc N`: the run as N ranks of this machine.
#pragma once

#include "tools/ember/commands.h"

namespace ember::cli {

// Whether this process is one rank of a launched run: a launcher's
// environment (WORLD_SIZE from `ember launch` or torchrun, or mpirun's
// OMPI_COMM_WORLD_SIZE) is present.
bool is_launched_rank();

// How often `ember launch --max-restarts` has restarted the ranks
// (EMBER_RESTART_COUNT; 0 without it).
int restart_count();

// Runs this program's `train` again as `command.nproc` ranks with the same
// arguments: through `ember launch`'s code for gloo, through mpiexec for
// mpi. Returns the launcher's exit code (the first failing rank's, or 0).
int train_on_ranks(const TrainCommand& command);

}  // namespace ember::cli
