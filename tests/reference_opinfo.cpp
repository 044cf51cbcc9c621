// Every CPU reference kernel with a `run` (kernels/reference_kernels.h) vs
// the tuned kernel on its op-info row's float32 and float64 samples
// (contiguous, broadcast, transposed, step-sliced, empty and 0-d inputs,
// special values), with the row's accumulation length (Note [Tolerances]);
// a sample the reference rejects (an empty max, a bad argument) must be
// rejected by the tuned kernel too.
// The families' own files add random and awkward shapes.
#include <gtest/gtest.h>

#include "core/dispatcher.h"
#include "kernels/reference_kernels.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

const OpInfo* find_row(const std::string& name) {
  for (const OpInfo& row : op_infos()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool rejects(const ReferenceKernel& ref, const Stack& args) {
  try {
    ref.run(args);
    return false;
  } catch (const Error&) {
    return true;
  }
}

TEST(ReferenceOpInfo, EveryReferenceMatchesTheTunedKernelOnTheRowSamples) {
  int compared = 0;
  for (const ReferenceKernel& ref : reference_kernels()) {
    if (ref.backend != DispatchKey::CPU || !ref.run) continue;
    const OpInfo* row = find_row(ref.op);
    if (row == nullptr) continue;  // _fused_elementwise: tests/test_fused_elementwise.cpp covers it
    for (DType dtype : ref.dtypes) {
      for (const Sample& s : row->make_samples(dtype, SampleSize::Small)) {
        SCOPED_TRACE(::testing::Message() << ref.op << " " << dtype << " sample " << s.name);
        if (!s.error.empty() || rejects(ref, s.args)) {  // a bad input: both must reject it
          EXPECT_TRUE(rejects(ref, s.args));
          EXPECT_THROW(run_sample(ref.op, s), Error);
          continue;
        }
        EXPECT_TRUE(tuned_matches_reference(ref.op, s.args, accuracy_of(*row, s).accumulated, row->exact));
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(ReferenceOpInfo, EveryRowNamesADispatchedOpWithKernelsForItsDtypes) {
  for (const ReferenceKernel& ref : reference_kernels()) {
    const OpEntry* op = Dispatcher::instance().find(ref.op);
    ASSERT_NE(op, nullptr) << ref.op;
    if (ref.backend != DispatchKey::CPU) continue;  // CUDA kernels exist only in CUDA builds
    EXPECT_TRUE(static_cast<bool>(ref.run)) << ref.op;
    for (DType t : ref.dtypes) EXPECT_TRUE(op->backend_kernel(DispatchKey::CPU, t).present()) << ref.op << " " << t;
  }
}

}  // namespace
}  // namespace ember::testing
