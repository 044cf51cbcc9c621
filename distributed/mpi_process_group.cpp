#include "distributed/mpi_process_group.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <thread>

#include "ember/error.h"

namespace ember::distributed {

namespace {

std::atomic<bool> g_mpi_failed{false};

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !g_mpi_failed.load()) MPI_Finalize();
}

void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  EMBER_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS,
              "ProcessGroup(mpi): MPI_Init_thread failed");
  EMBER_CHECK(provided >= MPI_THREAD_MULTIPLE, "ProcessGroup(mpi): this MPI library provides thread level ",
              provided, ", ember needs MPI_THREAD_MULTIPLE");
  std::atexit(finalize_at_exit);
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

void check_mpi(int code, const char* what) {
  EMBER_CHECK(code == MPI_SUCCESS, "ProcessGroup(mpi): ", what, " failed: ", mpi_error(code));
}

int checked_count(size_t n, const char* what) {
  EMBER_CHECK(n <= static_cast<size_t>(INT_MAX), "ProcessGroup(mpi): ", what, " of ", n,
              " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int64: return MPI_INT64_T;
    default: EMBER_FAIL("ProcessGroup(mpi): no reduction for ", dtype);
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::MAX: return MPI_MAX;
    case ReduceOp::MIN: return MPI_MIN;
    case ReduceOp::PRODUCT: return MPI_PROD;
    default: return MPI_SUM;
  }
}

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup(MPI_Comm comm, int rank, int size, std::chrono::milliseconds timeout, std::shared_ptr<Store> store)
      : ProcessGroup(rank, size, timeout, std::move(store)), comm_(comm) {}
  ~MpiProcessGroup() override {
    shutdown();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !g_mpi_failed.load()) MPI_Comm_free(&comm_);
  }
  std::string backend_name() const override { return "mpi"; }

 protected:
  void do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) override {
    MPI_Request r;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(count, "all_reduce"), mpi_type(dtype), mpi_op(op),
                             comm_, &r),
              "MPI_Iallreduce");
    complete(r, "MPI_Iallreduce");
  }
  void do_broadcast(void* data, size_t bytes, int root) override {
    MPI_Request r;
    check_mpi(MPI_Ibcast(data, checked_count(bytes, "broadcast"), MPI_BYTE, root, comm_, &r), "MPI_Ibcast");
    complete(r, "MPI_Ibcast");
  }
  void do_all_gather(const void* input, void* output, size_t bytes_per_rank) override {
    const int n = checked_count(bytes_per_rank, "all_gather");
    MPI_Request r;
    check_mpi(MPI_Iallgather(input, n, MPI_BYTE, output, n, MPI_BYTE, comm_, &r), "MPI_Iallgather");
    complete(r, "MPI_Iallgather");
  }
  void do_barrier() override {
    MPI_Request r;
    check_mpi(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
    complete(r, "MPI_Ibarrier");
  }
  void do_send(const void* data, size_t bytes, int dst, int tag) override {
    MPI_Request r;
    check_mpi(MPI_Isend(data, checked_count(bytes, "send"), MPI_BYTE, dst, tag, comm_, &r), "MPI_Isend");
    complete(r, "MPI_Isend");
  }
  void do_recv(void* data, size_t bytes, int src, int tag) override {
    MPI_Request r;
    check_mpi(MPI_Irecv(data, checked_count(bytes, "recv"), MPI_BYTE, src, tag, comm_, &r), "MPI_Irecv");
    MPI_Status status;
    complete(r, "MPI_Irecv", &status);
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    EMBER_CHECK(static_cast<size_t>(received) == bytes, "recv: rank ", src, " sent ", received,
                " bytes, the receiving tensor holds ", bytes);
  }
  void do_abort() override { g_mpi_failed.store(true); }
  std::shared_ptr<ProcessGroup> make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) override {
    const auto me = std::find(ranks.begin(), ranks.end(), rank());
    const int color = me == ranks.end() ? MPI_UNDEFINED : 0;
    const int key = me == ranks.end() ? 0 : static_cast<int>(me - ranks.begin());
    auto result = std::make_shared<MPI_Comm>(MPI_COMM_NULL);
    run_in_order([comm = comm_, color, key, result] {
      check_mpi(MPI_Comm_split(comm, color, key, result.get()), "MPI_Comm_split");
    });
    const MPI_Comm sub = *result;
    if (sub == MPI_COMM_NULL) return nullptr;
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    return std::make_shared<MpiProcessGroup>(sub, key, static_cast<int>(ranks.size()), timeout(), std::move(store));
  }

 private:
  // Polls the request until it completes or the timeout passes (Note [MPI and timeouts]).
  void complete(MPI_Request& r, const char* what, MPI_Status* status = MPI_STATUS_IGNORE) {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    int done = 0;
    for (int spins = 0;; ++spins) {
      check_mpi(MPI_Test(&r, &done, status), what);
      if (done) return;
      if (std::chrono::steady_clock::now() >= deadline)
        EMBER_FAIL("ProcessGroup(mpi): ", what, " did not complete within ", timeout().count(), " ms");
      if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  MPI_Comm comm_;
};

}  // namespace

std::pair<int, int> mpi_world() {
  ensure_mpi();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return {rank, size};
}

std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds timeout, std::shared_ptr<Store> store) {
  const auto [rank, size] = mpi_world();
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::make_shared<MpiProcessGroup>(comm, rank, size, timeout, std::move(store));
}

}  // namespace ember::distributed
