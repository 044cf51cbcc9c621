// Padding on CPU: constant_pad_nd, reflection_pad, replication_pad,
// circular_pad and the backward ops of the last three.
//
// Note [Padding]
// `pad` lists (left, right) pairs from the last dim backwards, as in
// torch.nn.functional.pad.
//   constant   any number of trailing dims, any dtype. The output is filled
//              with the value, then the part of the input that survives is
//              copied in with copy_ (negative padding crops). Its backward
//              is constant_pad_nd of the gradient with the padding negated.
//   reflect /  the last 1, 2 or 3 dims of a (K+1)-D or (K+2)-D input. Output
//   replicate/ position o of a dim reads input i = o - left, mirrored about
//   circular   the edges (reflect: -i, 2 (n - 1) - i; needs left, right < n)
//              or clamped to [0, n - 1] (replicate). Circular first crops
//              what a negative padding removes, leaving c elements from s =
//              max(-left, 0), then wraps: o reads s + (o - max(left, 0)) mod c,
//              as torch's copies do; a positive padding may not exceed c
//              (torch: no wrapping around more than once), and the output
//              may be empty. The source index of each
//              output position is computed once per dim; the forward copies
//              element by element (any dtype: only bytes move), parallel over
//              output rows. The backward adds each output gradient into its
//              source, a chunk owning whole planes of the gradient input and
//              walking them in order, so the sums do not depend on threads.
#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_pooling.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {

namespace {

constexpr int64_t kChunkElements = int64_t{1} << 15;

// ---- constant ----

void check_pad_length(const char* op, IntArrayRef pad, int64_t ndim) {
  EMBER_CHECK(pad.size() % 2 == 0, op, ": the padding must be (left, right) pairs, got an odd length ", pad.size(),
              ": ", pad);
  EMBER_CHECK(static_cast<int64_t>(pad.size()) / 2 <= ndim, op, ": padding ", pad, " pads ", pad.size() / 2,
              " dims, but the input has only ", ndim);
}

Tensor constant_pad_nd_cpu(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const char* op = "constant_pad_nd";
  const int64_t ndim = self.dim();
  check_pad_length(op, pad, ndim);
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  const bool grows = std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; });
  DimVector shape(self.sizes());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = ndim - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
    shape[d] = self.size(d) + left + right;
    EMBER_CHECK(shape[d] >= (grows ? 1 : 0), op, ": dim ", d, " of size ", self.size(d), " padded by (", left, ", ",
                right, ") gives an output size of ", shape[d], ", which is invalid for input shape ", self.sizes());
  }
  Tensor out = make_empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  // The region of the output that the input fills, and the part of the input it takes.
  Tensor dst = out, src = self;
  bool empty = false;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = ndim - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
    const int64_t skip = std::max<int64_t>(-left, 0), keep = self.size(d) - skip - std::max<int64_t>(-right, 0);
    if (keep <= 0) {
      empty = true;
      break;
    }
    src = src.narrow(d, skip, keep);
    dst = dst.narrow(d, std::max<int64_t>(left, 0), keep);
  }
  if (grows || empty) out.fill_(value);
  if (!empty) dst.copy_(src);
  return out;
}

// ---- reflect, replicate ----

enum class PadMode : uint8_t { Reflect, Replicate, Circular };

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
    case PadMode::Circular: return "circular";
  }
  return "";
}

// The input position that output position o of a dim of size n, padded by
// (left, right), reads (the Note; the arguments are checked).
int64_t edge_source(PadMode mode, int64_t o, int64_t left, int64_t right, int64_t n) {
  int64_t j = o - left;
  switch (mode) {
    case PadMode::Reflect:
      if (j < 0) j = -j;
      if (j >= n) j = 2 * (n - 1) - j;
      return j;
    case PadMode::Replicate: return std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::Circular: {
      const int64_t first = std::max<int64_t>(-left, 0), kept = n - first - std::max<int64_t>(-right, 0);
      const int64_t k = (o - std::max<int64_t>(left, 0)) % kept;
      return first + (k < 0 ? k + kept : k);
    }
  }
  return j;
}

// The input and output as [planes, D, H, W] (1 for the dims not padded) and
// each output position's source index along D, H, W.
struct EdgePad {
  int64_t planes = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  std::array<std::vector<int64_t>, 3> src;
  DimVector in_shape, out_shape;
};

EdgePad edge_pad_geometry(const char* op, PadMode mode, IntArrayRef input, IntArrayRef pad) {
  const int64_t ndim = static_cast<int64_t>(input.size());
  EMBER_CHECK(pad.size() == 2 || pad.size() == 4 || pad.size() == 6, op, ": ", mode_name(mode),
              " padding pads the last 1, 2 or 3 dims: expected 2, 4 or 6 padding values, got ", pad);
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(ndim == k + 1 || ndim == k + 2, op, ": ", mode_name(mode), " padding of the last ", k, " dims takes a ",
              k + 1, "-D or ", k + 2, "-D input, got shape ", input);
  for (int64_t d = ndim == k + 2 ? 1 : 0; d < ndim; ++d) {
    EMBER_CHECK(input[d] > 0, op, ": ", mode_name(mode),
                " padding expects non-zero dims (only the batch may be empty), got shape ", input);
  }
  EdgePad g;
  g.in_shape = DimVector(input);
  g.out_shape = DimVector(input);
  for (int64_t d = 0; d < ndim - k; ++d) g.planes *= input[d];
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = ndim - 1 - i, left = pad[2 * i], right = pad[2 * i + 1], n = input[d];
    if (mode == PadMode::Reflect) {
      EMBER_CHECK(left < n && right < n, op, ": reflect padding must be smaller than the padded dim, got padding (",
                  left, ", ", right, ") for dim ", d, " of size ", n, " in input shape ", input);
    }
    const int64_t m = n + left + right;
    EMBER_CHECK(m >= (mode == PadMode::Circular ? 0 : 1), op, ": dim ", d, " of size ", n, " padded by (", left, ", ",
                right, ") gives an output size of ", m, ", which is invalid");
    if (mode == PadMode::Circular) {
      const int64_t kept = n - std::max<int64_t>(-left, 0) - std::max<int64_t>(-right, 0);
      EMBER_CHECK(left <= kept && right <= kept, op, ": circular padding (", left, ", ", right, ") of dim ", d,
                  " of size ", n, " (", kept, " after the negative padding) wraps around more than once",
                  " in input shape ", input);
    }
    g.out_shape[d] = m;
    const size_t slot = static_cast<size_t>(2 - i);  // W is slot 2, H slot 1, D slot 0
    g.in[slot] = n;
    g.out[slot] = m;
    std::vector<int64_t>& s = g.src[slot];
    s.resize(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) s[o] = edge_source(mode, o, left, right, n);
  }
  for (auto& s : g.src) {
    if (s.empty()) s.assign(1, 0);
  }
  return g;
}

template <class U>
void edge_pad_rows(const U* in, U* out, const EdgePad& g, int64_t begin, int64_t end) {
  const auto [ID, IH, IW] = g.in;
  const auto [OD, OH, OW] = g.out;
  const int64_t* sw = g.src[2].data();
  for (int64_t r = begin; r < end; ++r) {  // r indexes (plane, od, oh)
    const int64_t oh = r % OH, od = (r / OH) % OD, p = r / (OH * OD);
    const U* row = in + ((p * ID + g.src[0][od]) * IH + g.src[1][oh]) * IW;
    U* y = out + r * OW;
    for (int64_t ow = 0; ow < OW; ++ow) y[ow] = row[sw[ow]];
  }
}

// The op's name, or its backward's.
const char* op_name(PadMode mode, bool backward) {
  switch (mode) {
    case PadMode::Reflect: return backward ? "reflection_pad_backward" : "reflection_pad";
    case PadMode::Replicate: return backward ? "replication_pad_backward" : "replication_pad";
    case PadMode::Circular: return backward ? "circular_pad_backward" : "circular_pad";
  }
  return "";
}

template <PadMode Mode>
Tensor edge_pad_cpu(const Tensor& self, IntArrayRef pad) {
  const char* op = op_name(Mode, false);
  const EdgePad g = edge_pad_geometry(op, Mode, self.sizes(), pad);
  Tensor out = make_empty(g.out_shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  dispatch_width(self.element_size(), [&]<class U>() {
    parallel_for(0, rows, std::max<int64_t>(1, kChunkElements / g.out[2]), [&](int64_t b, int64_t e) {
      edge_pad_rows<U>(static_cast<const U*>(x.data_ptr()), static_cast<U*>(out.data_ptr()), g, b, e);
    });
  });
  return out;
}

template <PadMode Mode>
Tensor edge_pad_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef pad) {
  const char* op = op_name(Mode, true);
  const EdgePad g = edge_pad_geometry(op, Mode, input_size, pad);
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(g.out_shape), op, ": expected grad_output of shape ",
              IntArrayRef(g.out_shape), " for input shape ", input_size, " and padding ", pad, ", got ",
              grad_output.sizes());
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = grad_output.contiguous();
  // Plain copies, not structured bindings: the lambdas below capture them.
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int64_t in_plane = ID * IH * IW, out_plane = OD * OH * OW;
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    parallel_for(0, g.planes, std::max<int64_t>(1, kChunkElements / (in_plane + out_plane)), [&](int64_t b, int64_t e) {
      std::vector<A> scratch(std::is_same_v<T, A> ? 0 : static_cast<size_t>(in_plane));
      for (int64_t p = b; p < e; ++p) {
        T* gi = grad_input.data_ptr<T>() + p * in_plane;
        A* acc = std::is_same_v<T, A> ? reinterpret_cast<A*>(gi) : scratch.data();
        std::fill(acc, acc + in_plane, A(0));
        const T* y = go.data_ptr<T>() + p * out_plane;
        for (int64_t od = 0; od < OD; ++od) {
          for (int64_t oh = 0; oh < OH; ++oh) {
            A* row = acc + (g.src[0][od] * IH + g.src[1][oh]) * IW;
            const T* yr = y + (od * OH + oh) * OW;
            for (int64_t ow = 0; ow < OW; ++ow) row[g.src[2][ow]] += static_cast<A>(yr[ow]);
          }
        }
        if constexpr (!std::is_same_v<T, A>) std::copy(acc, acc + in_plane, gi);
      }
    });
  });
  return grad_input;
}

}  // namespace

void register_cpu_pad_kernels() {
  op::constant_pad_nd.impl(DispatchKey::CPU, kAllDTypes, &constant_pad_nd_cpu, "cpu::constant_pad_nd");
  op::reflection_pad.impl(DispatchKey::CPU, kAllDTypes, &edge_pad_cpu<PadMode::Reflect>, "cpu::reflection_pad");
  op::replication_pad.impl(DispatchKey::CPU, kAllDTypes, &edge_pad_cpu<PadMode::Replicate>, "cpu::replication_pad");
  op::reflection_pad_backward.impl(DispatchKey::CPU, kFloatingDTypes, &edge_pad_backward_cpu<PadMode::Reflect>,
                                   "cpu::reflection_pad_backward");
  op::replication_pad_backward.impl(DispatchKey::CPU, kFloatingDTypes, &edge_pad_backward_cpu<PadMode::Replicate>,
                                    "cpu::replication_pad_backward");
  op::circular_pad.impl(DispatchKey::CPU, kAllDTypes, &edge_pad_cpu<PadMode::Circular>, "cpu::circular_pad");
  op::circular_pad_backward.impl(DispatchKey::CPU, kFloatingDTypes, &edge_pad_backward_cpu<PadMode::Circular>,
                                 "cpu::circular_pad_backward");
}

}  // namespace ember
