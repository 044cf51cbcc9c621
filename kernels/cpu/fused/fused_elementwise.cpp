// _fused_elementwise on CPU: a fused program (core/fused_program.h) in one
// pass over memory.
//
// The output's elements are cut into tiles of kTile elements. For each tile
// every input is made available as kTile contiguous values (a pointer into
// the input when it is laid out like the output, else gathered through its
// broadcast strides, TensorIterator-style), then each instruction runs over
// the whole tile with the same lane code as its eager kernel (vec::VecF for
// float32 math, the double forms for float64; float16 and bfloat16 compute in
// float32 and round each result, as their eager kernels), into a small buffer reused as
// soon as its value is dead; the last instruction writes the output. So the
// inputs are read once and the output written once, and the intermediates
// stay in the L1 cache. Tiles are split over the thread pool; the grain
// shrinks with the length of the program (more work per element). A program
// ending in a sum or mean adds its elements up tile by tile instead of
// writing them: over every element in float64 per chunk, chunks in order;
// over the last dim (add_to_rows) in float64 per row, each row by one thread
// in element order, the chunks made of whole rows. Either way the result
// does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember {
namespace {

namespace vec = cpu::vec;
using fused::FusedOp;
using fused::FusedProgram;
using fused::Instruction;
using fused::Operand;

constexpr int64_t kTile = 512;

// One operand of an instruction over a tile: kTile values at p, or one value s.
template <class T>
struct Src {
  const T* p = nullptr;
  T s = T(0);
  bool scalar() const { return p == nullptr; }
};

// The inputs, their broadcast strides over the output (in elements, innermost
// dim first, size-1 and mergeable dims coalesced).
struct Layout {
  std::vector<int64_t> shape;                 // innermost first
  std::vector<std::vector<int64_t>> strides;  // per input
  enum class Kind : uint8_t { Contiguous, Broadcast, Gather };
  std::vector<Kind> kinds;
};

Layout plan_layout(const std::vector<Tensor>& inputs, IntArrayRef out_shape) {
  Layout l;
  const int64_t nd = static_cast<int64_t>(out_shape.size());
  const size_t ni = inputs.size();
  std::vector<std::vector<int64_t>> st(ni);
  std::vector<int64_t> shape;
  for (int64_t d = nd - 1; d >= 0; --d) {
    if (out_shape[static_cast<size_t>(d)] == 1) continue;
    shape.push_back(out_shape[static_cast<size_t>(d)]);
    for (size_t k = 0; k < ni; ++k) {
      const Tensor& t = inputs[k];
      const int64_t td = d - (nd - t.dim());  // right-aligned broadcast
      st[k].push_back(td < 0 || t.size(td) == 1 ? 0 : t.stride(td));
    }
  }
  // Merge dim d+1 into d where every input steps through both as one dim.
  for (size_t d = 0; d + 1 < shape.size();) {
    bool merge = true;
    for (size_t k = 0; k < ni && merge; ++k) merge = st[k][d + 1] == st[k][d] * shape[d];
    if (!merge) {
      ++d;
      continue;
    }
    shape[d] *= shape[d + 1];
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d + 1));
    for (auto& s : st) s.erase(s.begin() + static_cast<std::ptrdiff_t>(d + 1));
  }
  if (shape.empty()) {
    shape.push_back(1);
    for (auto& s : st) s.push_back(0);
  }
  for (size_t k = 0; k < ni; ++k) {
    bool contiguous = true, zero = true;
    int64_t expect = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      contiguous = contiguous && st[k][d] == expect;
      zero = zero && st[k][d] == 0;
      expect *= shape[d];
    }
    l.kinds.push_back(contiguous ? Layout::Kind::Contiguous : zero ? Layout::Kind::Broadcast : Layout::Kind::Gather);
  }
  l.shape = std::move(shape);
  l.strides = std::move(st);
  return l;
}

// dst[0, n) = input elements [start, start + n) of the output's order.
template <class T, class In>
void gather(T* dst, const In* base, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
            int64_t start, int64_t n) {
  const size_t nd = shape.size();
  int64_t idx[64];
  int64_t off = 0, rest = start;
  for (size_t d = 0; d < nd; ++d) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
    off += idx[d] * strides[d];
  }
  const int64_t s0 = strides[0];
  for (int64_t j = 0; j < n;) {
    const int64_t run = std::min(shape[0] - idx[0], n - j);
    for (int64_t r = 0; r < run; ++r) dst[j + r] = static_cast<T>(base[off + r * s0]);
    j += run;
    idx[0] += run;
    off += run * s0;
    for (size_t d = 0; d + 1 < nd && idx[d] == shape[d]; ++d) {
      off -= idx[d] * strides[d];
      idx[d] = 0;
      ++idx[d + 1];
      off += strides[d + 1];
    }
  }
}

// out[0, n) = f(a) with f taking float and VecF (float32) or double.
template <class T, class F>
void unary(const T* a, T* out, int64_t n, F f) {
  if constexpr (std::is_same_v<T, float>) {
    using V = vec::VecF;
    int64_t i = 0;
    for (; i + V::kLanes <= n; i += V::kLanes) f(V::load(a + i)).store(out + i);
    if (i < n) f(V::load_partial(a + i, static_cast<int>(n - i))).store_partial(out + i, static_cast<int>(n - i));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i]);
  }
}

// out[0, n) = f(a, b); a scalar operand is read once. Float32 runs f on
// vec::VecF lanes (f takes float and VecF alike), float64 on doubles.
template <class T, class F>
void binary(const Src<T>& a, const Src<T>& b, T* __restrict out, int64_t n, F f) {
  if constexpr (std::is_same_v<T, float>) {
    using V = vec::VecF;
    // One loop per operand kind, so no lane loop tests which kind it has.
    auto lanes = [&](auto load_a, auto load_b) {
      int64_t i = 0;
      for (; i + V::kLanes <= n; i += V::kLanes) f(load_a(i, V::kLanes), load_b(i, V::kLanes)).store(out + i);
      if (i < n) {
        const int r = static_cast<int>(n - i);
        f(load_a(i, r), load_b(i, r)).store_partial(out + i, r);
      }
    };
    auto from = [](const T* p) {
      return [p](int64_t i, int r) { return r == V::kLanes ? V::load(p + i) : V::load_partial(p + i, r); };
    };
    auto splat = [](T x) { return [v = V(x)](int64_t, int) { return v; }; };
    if (a.scalar()) lanes(splat(a.s), from(b.p));
    else if (b.scalar()) lanes(from(a.p), splat(b.s));
    else lanes(from(a.p), from(b.p));
    return;
  }
  if (a.scalar()) {
    const T x = a.s;
    const T* __restrict y = b.p;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, y[i]);
  } else if (b.scalar()) {
    const T* __restrict x = a.p;
    const T y = b.s;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y);
  } else {
    const T* __restrict x = a.p;
    const T* __restrict y = b.p;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y[i]);
  }
}

// vec::blend on float lanes, the plain choice on double.
template <class M, class X>
X select(M mask, X a, X b) {
  if constexpr (std::is_same_v<X, double>) return mask ? a : b;
  else return vec::blend(mask, a, b);
}

// The unary ops, as their eager kernels compute them (kernels/cpu/elementwise/).
template <class T, class Run>
void with_unary(const Instruction& ins, Run run) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  switch (ins.op) {
    case FusedOp::Neg: return run([](auto x) { return -x; });
    case FusedOp::Abs: return run([](auto x) { return vec::abs(x); });
    case FusedOp::Relu: return run([](auto x) { return vec::max(x, decltype(x)(T(0))); });
    case FusedOp::LeakyRelu: {
      const T s = static_cast<T>(ins.slope);
      return run([s](auto x) {
        using X = decltype(x);
        return select(x > X(T(0)), x, x * X(s));
      });
    }
    case FusedOp::Clamp: {
      const T lo = static_cast<T>(ins.lo), hi = static_cast<T>(ins.hi);
      const bool has_lo = ins.has_lo, has_hi = ins.has_hi;
      return run([=](auto x) {
        using X = decltype(x);
        if (has_lo) x = select(x < X(lo), X(lo), x);
        if (has_hi) x = select(x > X(hi), X(hi), x);
        return x;
      });
    }
    default: break;
  }
  if constexpr (kFloat) {
    switch (ins.op) {
      case FusedOp::Exp: return run([](auto x) { return vec::exp(x); });
      case FusedOp::Exp2: return run([](auto x) { return vec::exp2(x); });
      case FusedOp::Log: return run([](auto x) { return vec::log(x); });
      case FusedOp::Log2: return run([](auto x) { return vec::log2(x); });
      case FusedOp::Log1p: return run([](auto x) { return vec::log1p(x); });
      case FusedOp::Expm1: return run([](auto x) { return vec::expm1(x); });
      case FusedOp::Sqrt: return run([](auto x) { return vec::sqrt(x); });
      case FusedOp::Rsqrt: return run([](auto x) { return vec::rsqrt(x); });
      case FusedOp::Reciprocal: return run([](auto x) { return vec::reciprocal(x); });
      case FusedOp::Sin: return run([](auto x) { return vec::sin(x); });
      case FusedOp::Cos: return run([](auto x) { return vec::cos(x); });
      case FusedOp::Tan: return run([](auto x) { return vec::sin(x) / vec::cos(x); });
      case FusedOp::Tanh: return run([](auto x) { return vec::tanh(x); });
      case FusedOp::Sigmoid: return run([](auto x) { return vec::sigmoid(x); });
      case FusedOp::Erf: return run([](auto x) { return vec::erf(x); });
      case FusedOp::Silu: return run([](auto x) { return vec::silu(x); });
      case FusedOp::Floor: return run([](auto x) { return vec::floor(x); });
      case FusedOp::Ceil: return run([](auto x) { return vec::ceil(x); });
      case FusedOp::Trunc: return run([](auto x) { return vec::trunc(x); });
      case FusedOp::Round: return run([](auto x) { return vec::round(x); });
      case FusedOp::Gelu:
        if (ins.tanh) return run([](auto x) { return vec::gelu_tanh(x); });
        return run([](auto x) { return vec::gelu_erf(x); });
      default: break;
    }
  } else {
    switch (ins.op) {
      case FusedOp::Exp: return run([](double x) { return std::exp(x); });
      case FusedOp::Exp2: return run([](double x) { return std::exp2(x); });
      case FusedOp::Log: return run([](double x) { return std::log(x); });
      case FusedOp::Log2: return run([](double x) { return std::log2(x); });
      case FusedOp::Log1p: return run([](double x) { return std::log1p(x); });
      case FusedOp::Expm1: return run([](double x) { return std::expm1(x); });
      case FusedOp::Sqrt: return run([](double x) { return std::sqrt(x); });
      case FusedOp::Rsqrt: return run([](double x) { return 1.0 / std::sqrt(x); });
      case FusedOp::Reciprocal: return run([](double x) { return 1.0 / x; });
      case FusedOp::Sin: return run([](double x) { return std::sin(x); });
      case FusedOp::Cos: return run([](double x) { return std::cos(x); });
      case FusedOp::Tan: return run([](double x) { return std::tan(x); });
      case FusedOp::Tanh: return run([](double x) { return std::tanh(x); });
      case FusedOp::Sigmoid: return run([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
      case FusedOp::Erf: return run([](double x) { return std::erf(x); });
      case FusedOp::Silu:
        return run([](double x) { return std::isinf(x) && x < 0 ? -0.0 : x / (1.0 + std::exp(-x)); });
      case FusedOp::Floor: return run([](double x) { return std::floor(x); });
      case FusedOp::Ceil: return run([](double x) { return std::ceil(x); });
      case FusedOp::Trunc: return run([](double x) { return std::trunc(x); });
      case FusedOp::Round: return run([](double x) { return std::nearbyint(x); });
      case FusedOp::Gelu:
        if (ins.tanh)
          return run([](double x) {
            if (std::isinf(x) && x < 0) return -0.0;
            const double k = std::sqrt(2.0 / M_PI);
            return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
          });
        return run([](double x) { return std::isinf(x) && x < 0 ? -0.0 : 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); });
      default: break;
    }
  }
  EMBER_FAIL("_fused_elementwise: ", fused::op_name(ins.op), " is not a unary op");
}

// Runs instruction `ins` on one tile: a scalar result when every operand is one.
template <class T>
Src<T> run_instruction(const Instruction& ins, const Src<T>* a, T* out, int64_t n) {
  if (ins.arity == 1) {
    Src<T> r;
    with_unary<T>(ins, [&](auto f) {
      if (a[0].scalar()) r.s = static_cast<T>(f(a[0].s));
      else unary<T>(a[0].p, out, n, f);
    });
    if (!a[0].scalar()) r.p = out;
    return r;
  }
  const bool all_scalar = a[0].scalar() && a[1].scalar() && (ins.arity < 3 || a[2].scalar());
  auto apply = [&](auto f) {
    Src<T> r;
    if (all_scalar) {
      r.s = f(a[0].s, a[1].s);
      return r;
    }
    binary<T>(a[0], a[1], out, n, f);
    r.p = out;
    return r;
  };
  switch (ins.op) {
    case FusedOp::Add:
    case FusedOp::Sub: {
      const T s = static_cast<T>(ins.op == FusedOp::Sub ? -ins.alpha : ins.alpha);
      if (s == T(1)) return apply([](auto x, auto y) { return x + y; });
      return apply([s](auto x, auto y) { return x + decltype(x)(s) * y; });
    }
    case FusedOp::Mul: return apply([](auto x, auto y) { return x * y; });
    case FusedOp::Div: return apply([](auto x, auto y) { return x / y; });
    // NaN in either operand gives x + y (a NaN), as the eager kernels.
    case FusedOp::Maximum:
      return apply([](auto x, auto y) { return select((x != x) | (y != y), x + y, select(x > y, x, y)); });
    case FusedOp::Minimum:
      return apply([](auto x, auto y) { return select((x != x) | (y != y), x + y, select(x < y, x, y)); });
    case FusedOp::Where: {
      Src<T> r;
      if (all_scalar) {
        r.s = a[0].s != T(0) ? a[1].s : a[2].s;
        return r;
      }
      for (int64_t i = 0; i < n; ++i) {
        const T c = a[0].scalar() ? a[0].s : a[0].p[i];
        const T x = a[1].scalar() ? a[1].s : a[1].p[i];
        const T y = a[2].scalar() ? a[2].s : a[2].p[i];
        out[i] = c != T(0) ? x : y;
      }
      r.p = out;
      return r;
    }
    default: break;
  }
  EMBER_FAIL("_fused_elementwise: ", fused::op_name(ins.op), " takes ", fused::op_arity(ins.op), " operands");
}

// The buffer of each temp: buffers are reused once a value is dead. slot[k]
// = -1 for the last instruction (it writes the output).
std::vector<int> assign_slots(const FusedProgram& p, int& num_slots) {
  const size_t n = p.code.size();
  std::vector<size_t> last_use(n, 0);
  for (size_t k = 0; k < n; ++k)
    for (int a = 0; a < p.code[k].arity; ++a)
      if (p.code[k].args[a].kind == Operand::Kind::Temp) last_use[static_cast<size_t>(p.code[k].args[a].index)] = k;
  std::vector<int> slot(n, -1), free_slots;
  num_slots = 0;
  for (size_t k = 0; k + 1 < n; ++k) {
    // Operands whose last use is this instruction free their buffers after it
    // runs, so an instruction never writes a buffer it reads.
    if (free_slots.empty()) slot[k] = num_slots++;
    else {
      slot[k] = free_slots.back();
      free_slots.pop_back();
    }
    for (int a = 0; a < p.code[k].arity; ++a) {
      const Operand& o = p.code[k].args[a];
      if (o.kind == Operand::Kind::Temp && last_use[static_cast<size_t>(o.index)] == k &&
          std::find(free_slots.begin(), free_slots.end(), slot[static_cast<size_t>(o.index)]) == free_slots.end())
        free_slots.push_back(slot[static_cast<size_t>(o.index)]);
    }
  }
  return slot;
}

// Float16 and bfloat16 groups compute in float32 and round every result to
// the storage type S, as each eager kernel does (float in, S out), so they
// give the unfused ops' values; float32 and float64 compute in S itself.
template <class S>
using compute_t = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <class S, class T>
void round_to_storage(T* x, int64_t n) {
  if constexpr (!std::is_same_v<S, T>)
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<T>(S(x[i]));
}

// A last-dim reduction: adds the tile's values, elements [start, start + n)
// of the broadcast shape in row-major order, to the sums of their rows (row
// r holds elements [r * len, (r + 1) * len)); sums[0] is row first_row's.
template <class T>
void add_to_rows(const Src<T>& v, int64_t start, int64_t n, int64_t len, int64_t first_row, double* sums) {
  for (int64_t i = 0; i < n;) {
    const int64_t e = start + i, row = e / len;
    const int64_t run = std::min(n - i, (row + 1) * len - e);
    double& acc = sums[row - first_row];
    if (v.scalar())
      for (int64_t j = 0; j < run; ++j) acc += static_cast<double>(v.s);
    else
      for (int64_t j = 0; j < run; ++j) acc += static_cast<double>(v.p[i + j]);
    i += run;
  }
}

// The rows' sums (or means) into out[first_row, first_row + sums.size()).
template <class S, class T>
void write_rows(const std::vector<double>& sums, int64_t first_row, int64_t len, bool mean, S* out) {
  for (size_t r = 0; r < sums.size(); ++r)
    out[first_row + static_cast<int64_t>(r)] = S(static_cast<T>(mean ? sums[r] / static_cast<double>(len) : sums[r]));
}

// row_len: the length of the reduced last dim when the program reduces rows.
template <class S>
void run_program(const FusedProgram& p, const std::vector<Tensor>& inputs, const Layout& l, S* out, int64_t numel,
                 int64_t row_len) {
  using T = compute_t<S>;
  constexpr bool kRounds = !std::is_same_v<S, T>;
  auto rounded = [](T x) { return static_cast<T>(S(x)); };
  const size_t ni = inputs.size();
  int num_slots = 0;
  std::vector<int> slot = assign_slots(p, num_slots);
  if (kRounds) slot.back() = num_slots++;  // the last result is converted into the output
  // Broadcast inputs (one element) are read once, here.
  std::vector<T> broadcast_value(ni, T(0));
  for (size_t k = 0; k < ni; ++k) {
    if (l.kinds[k] != Layout::Kind::Broadcast) continue;
    const char* base = static_cast<const char*>(inputs[k].impl()->data());
    broadcast_value[k] = inputs[k].dtype() == DType::Bool ? T(*reinterpret_cast<const bool*>(base) ? 1 : 0)
                                                          : static_cast<T>(*reinterpret_cast<const S*>(base));
  }
  // Numbers are converted to the storage type first, as the eager ops'
  // wrapped scalars are; so are clamp's bounds (alpha and slope stay float).
  std::vector<Instruction> code = p.code;
  for (Instruction& ins : code) {
    if constexpr (!kRounds) break;
    for (int a = 0; a < ins.arity; ++a)
      if (ins.args[a].kind == Operand::Kind::Number)
        ins.args[a].number = rounded(static_cast<T>(ins.args[a].number));
    ins.lo = rounded(static_cast<T>(ins.lo));
    ins.hi = rounded(static_cast<T>(ins.hi));
  }
  const int64_t grain = std::max<int64_t>(4 * kTile, 32768 / static_cast<int64_t>(code.size()));
  // A trailing sum or mean: each chunk adds up its elements in double, and
  // the chunks' sums are added in chunk order, so the result does not depend
  // on the thread count.
  const bool reduces = p.reduces(), rows = p.reduces_rows();
  const size_t elementwise = reduces ? code.size() - 1 : code.size();
  std::vector<double> partial(reduces && !rows ? static_cast<size_t>((numel + grain - 1) / grain) : 0, 0.0);
  auto chunk = [&](int64_t begin, int64_t end) {
    double sum = 0.0;
    std::vector<double> row_sums(rows ? static_cast<size_t>((end - begin) / row_len) : 0, 0.0);
    std::vector<T> buffers(static_cast<size_t>(num_slots + static_cast<int>(ni)) * kTile);
    T* slots = buffers.data();
    T* gathered = buffers.data() + static_cast<size_t>(num_slots) * kTile;
    std::vector<Src<T>> in(ni), temps(code.size());
    for (int64_t start = begin; start < end; start += kTile) {
      const int64_t n = std::min(kTile, end - start);
      for (size_t k = 0; k < ni; ++k) {
        const char* base = static_cast<const char*>(inputs[k].impl()->data());
        const bool is_bool = inputs[k].dtype() == DType::Bool;
        in[k] = Src<T>();
        if (l.kinds[k] == Layout::Kind::Broadcast) {
          in[k].s = broadcast_value[k];
        } else if (l.kinds[k] == Layout::Kind::Contiguous && !is_bool && !kRounds) {
          in[k].p = reinterpret_cast<const T*>(base) + start;
        } else {
          T* dst = gathered + k * kTile;
          if (is_bool) gather(dst, reinterpret_cast<const bool*>(base), l.shape, l.strides[k], start, n);
          else gather(dst, reinterpret_cast<const S*>(base), l.shape, l.strides[k], start, n);
          in[k].p = dst;
        }
      }
      auto operand = [&](const Operand& o) {
        Src<T> r;
        if (o.kind == Operand::Kind::Input) r = in[static_cast<size_t>(o.index)];
        else if (o.kind == Operand::Kind::Temp) r = temps[static_cast<size_t>(o.index)];
        else r.s = static_cast<T>(o.number);
        return r;
      };
      for (size_t k = 0; k < elementwise; ++k) {
        const Instruction& ins = code[k];
        Src<T> args[3];
        for (int a = 0; a < ins.arity; ++a) args[a] = operand(ins.args[a]);
        T* dst = slot[k] < 0 ? reinterpret_cast<T*>(out + start) : slots + static_cast<size_t>(slot[k]) * kTile;
        temps[k] = run_instruction<T>(ins, args, dst, n);
        if constexpr (kRounds) {
          if (temps[k].scalar()) temps[k].s = rounded(temps[k].s);
          else round_to_storage<S>(dst, n);
        }
      }
      if (reduces) {
        const Src<T> v = operand(code.back().args[0]);
        if (rows) add_to_rows(v, start, n, row_len, begin / row_len, row_sums.data());
        else if (v.scalar()) sum += static_cast<double>(v.s) * static_cast<double>(n);
        else
          for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v.p[i]);
        continue;
      }
      const Src<T>& result = temps.back();
      if (result.scalar()) std::fill(out + start, out + start + n, static_cast<S>(result.s));
      else if constexpr (kRounds)
        for (int64_t i = 0; i < n; ++i) out[start + i] = S(result.p[i]);
    }
    if (rows) write_rows<S, T>(row_sums, begin / row_len, row_len, code.back().op == FusedOp::Mean, out);
    else if (reduces) partial[static_cast<size_t>(begin / grain)] = sum;
  };
  if (rows)  // chunks of whole rows
    parallel_for(0, numel / row_len, std::max<int64_t>(1, grain / row_len),
                 [&](int64_t r0, int64_t r1) { chunk(r0 * row_len, r1 * row_len); });
  else
    parallel_for(0, numel, grain, chunk);
  if (!reduces || rows) return;
  double total = 0.0;
  for (double x : partial) total += x;
  if (code.back().op == FusedOp::Mean) total /= static_cast<double>(numel);
  out[0] = S(static_cast<T>(total));
}

// inputs: tensors of the output's dtype, or bool for where's conditions;
// they broadcast to the output's shape.
Tensor fused_elementwise_cpu(const TensorList& inputs, std::string_view expr) {
  const FusedProgram p = FusedProgram::parse(expr, inputs.size(), "_fused_elementwise");
  const std::vector<char> condition = p.condition_inputs();
  EMBER_CHECK(!inputs.empty() && inputs[0].dtype() != DType::Bool, "_fused_elementwise: the first input must hold ",
              "the output's dtype (a floating-point one)");
  const DType dtype = inputs[0].dtype();
  EMBER_CHECK(is_floating_point(dtype), "_fused_elementwise: computes in a floating-point dtype, got ", dtype);
  DimVector shape(inputs[0].sizes());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    const DType want = condition[k] ? DType::Bool : dtype;
    EMBER_CHECK(t.dtype() == want, "_fused_elementwise: input i", k, " is ", t.dtype(), ", expected ", want,
                condition[k] ? " (a where condition)" : " (the output's dtype)");
    EMBER_CHECK(t.device().is_cpu(), "_fused_elementwise: input i", k, " is on ", t.device(), ", expected cpu");
    shape = broadcast_shapes(shape, t.sizes(), "_fused_elementwise");
  }
  EMBER_CHECK(shape.size() <= 64, "_fused_elementwise: at most 64 dims, got ", shape.size());
  // A trailing reduction leaves one value (shape [], or all ones with
  // keepdim), or one per row when it reduces the last dim.
  const bool reduces = p.reduces();
  DimVector out_shape = !reduces ? shape : p.code.back().keepdim ? DimVector(shape.size(), 1) : DimVector();
  int64_t row_len = 0;
  if (p.reduces_rows()) {
    EMBER_CHECK(!shape.empty(), "_fused_elementwise: '", expr, "' reduces the last dim, but the inputs are 0-d");
    row_len = shape.back();
    out_shape = shape;
    if (p.code.back().keepdim) out_shape.back() = 1;
    else out_shape.pop_back();
  }
  Tensor out = make_empty(out_shape, dtype, Device::cpu());
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == 0) {  // the sum of nothing is 0, its mean NaN, as in eager (no rows: nothing to fill)
    if (reduces) out.fill_(p.code.back().op == FusedOp::Sum ? 0.0 : std::numeric_limits<double>::quiet_NaN());
    return out;
  }
  const Layout l = plan_layout(inputs, shape);
  char* data = out.impl()->data();
  switch (dtype) {
    case DType::Float32: run_program(p, inputs, l, reinterpret_cast<float*>(data), numel, row_len); break;
    case DType::Float64: run_program(p, inputs, l, reinterpret_cast<double*>(data), numel, row_len); break;
    case DType::Float16: run_program(p, inputs, l, reinterpret_cast<Half*>(data), numel, row_len); break;
    case DType::BFloat16: run_program(p, inputs, l, reinterpret_cast<BFloat16*>(data), numel, row_len); break;
    default: EMBER_FAIL("_fused_elementwise: unexpected dtype ", dtype);
  }
  return out;
}

}  // namespace

void register_cpu_fused_kernels() {
  op::_fused_elementwise.impl(DispatchKey::CPU, kFloatingDTypes, &fused_elementwise_cpu, "cpu::_fused_elementwise");
}

}  // namespace ember
