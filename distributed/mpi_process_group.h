// The MPI backend: collectives over the MPI library the job was started
// with (mpirun), on a communicator of its own.
//
// Note [MPI and timeouts]
// MPI has no timeouts, so every call is the non-blocking form (MPI_Iallreduce,
// ...), polled until it completes or the group's timeout passes; then the
// collective fails with an ember::Error naming it, as with Gloo. MPI cannot
// cancel a collective, so a failed group stays failed, and MPI is then not
// finalised at exit: mpirun sees the rank end without MPI_Finalize and stops
// the others. Errors are returned (MPI_ERRORS_RETURN), never fatal.
#pragma once

#include <memory>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

// Initialises MPI (MPI_THREAD_MULTIPLE) if needed and returns a group over
// all its processes. `store` may be null.
std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds timeout, std::shared_ptr<Store> store);
// The rank and size MPI gives this process (initialising MPI).
std::pair<int, int> mpi_world();

}  // namespace ember::distributed
