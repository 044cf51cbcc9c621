// Op-info rows of the recurrent family (Note [The op-info table] in
// tests/op_info.h): lstm_layer and lstm_layer_backward. The references run
// PyTorch's LSTM equations step by step in double on the host values:
//   [a_i a_f a_g a_o] = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh,
//   i, f, o = sigmoid(a), g = tanh(a_g), c_t = f c_{t-1} + i g, h_t = o tanh(c_t),
// and the backward the chain rule of the same, from the saved gates and cells.
#include <cmath>

#include "core/op_decls_rnn.h"
#include "tests/op_info.h"

namespace ember::testing {

namespace {

IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue opt(const Tensor& t) { return t.defined() ? IValue::Payload(t) : IValue(); }
IValue flag(bool b) { return IValue::Payload(b); }

// Uniform values in [-scale, scale), one stream per call.
class Inputs {
 public:
  Inputs(const std::string& op, DType t, SampleSize size) : dtype_(t) {
    for (char c : op) seed_ = seed_ * 131 + static_cast<uint8_t>(c);
    seed_ += 17 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 5 : 0);
  }
  Tensor uniform(const Shape& shape, double scale = 1.0) {
    Generator g(seed_++);
    return ember::rand(shape, kFloat64, &g).mul(Scalar(2 * scale)).sub(Scalar(scale)).to(dtype_);
  }

 private:
  DType dtype_;
  uint64_t seed_ = 11;
};

struct Layer {
  Tensor x, hx, cx, w_ih, w_hh, b_ih, b_hh;
  bool reverse = false;
};

Layer make_layer(Inputs& in, int64_t T, int64_t N, int64_t I, int64_t H, bool bias_ih, bool bias_hh, bool reverse) {
  Layer l;
  l.x = in.uniform({T, N, I});
  l.hx = in.uniform({N, H});
  l.cx = in.uniform({N, H});
  l.w_ih = in.uniform({4 * H, I}, 0.6);
  l.w_hh = in.uniform({4 * H, H}, 0.6);
  if (bias_ih) l.b_ih = in.uniform({4 * H}, 0.5);
  if (bias_hh) l.b_hh = in.uniform({4 * H}, 0.5);
  l.reverse = reverse;
  return l;
}

Stack forward_stack(const Layer& l) {
  return {arg(l.x), arg(l.hx), arg(l.cx), arg(l.w_ih), arg(l.w_hh), opt(l.b_ih), opt(l.b_hh), flag(l.reverse)};
}

// The valid calls: (name, layer).
std::vector<std::pair<std::string, Layer>> valid_layers(Inputs& in, SampleSize size) {
  if (size == SampleSize::Large) return {{"large", make_layer(in, 6, 16, 24, 48, true, true, false)},
                                         {"large_reverse", make_layer(in, 5, 16, 24, 48, true, true, true)}};
  std::vector<std::pair<std::string, Layer>> out;
  out.emplace_back("contiguous", make_layer(in, 3, 2, 3, 4, true, true, false));
  out.emplace_back("reverse", make_layer(in, 3, 2, 3, 4, true, true, true));
  out.emplace_back("no_bias", make_layer(in, 2, 3, 2, 3, false, false, false));
  out.emplace_back("one_bias", make_layer(in, 2, 1, 3, 2, false, true, true));
  out.emplace_back("one_step", make_layer(in, 1, 2, 3, 5, true, true, false));
  Layer t = make_layer(in, 3, 2, 3, 4, true, true, false);
  t.x = t.x.transpose(0, 1).contiguous().transpose(0, 1);  // (T, N, I) read through a transposed layout
  out.emplace_back("transposed", t);
  Layer w = make_layer(in, 2, 2, 3, 2, true, true, false);
  w.w_hh = w.w_hh.t().contiguous().t();
  out.emplace_back("transposed_weight", w);
  out.emplace_back("empty_batch", make_layer(in, 2, 0, 3, 2, true, true, false));
  return out;
}

// ---- reference ----

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct HostLayer {
  int64_t T, N, I, H;
  HostTensor x, hx, cx, w_ih, w_hh;
  std::vector<double> bias;  // b_ih + b_hh (zeros when absent)
  bool reverse;
};

// Reads lstm_layer's arguments starting at `first` (input); an error text when they do not fit.
std::string read_layer(const RefArgs& a, size_t first, HostLayer& l) {
  l.x = a.tensor(first);
  l.hx = a.tensor(first + 1);
  l.cx = a.tensor(first + 2);
  l.w_ih = a.tensor(first + 3);
  l.w_hh = a.tensor(first + 4);
  if (l.x.dim() != 3) return "expected an input of shape (seq_len, batch, input_size)";
  if (l.x.shape[0] < 1) return "at least one step";
  if (l.w_ih.dim() != 2 || l.w_ih.shape[0] % 4 != 0) return "expected w_ih of shape";
  l.T = l.x.shape[0];
  l.N = l.x.shape[1];
  l.I = l.x.shape[2];
  l.H = l.w_ih.shape[0] / 4;
  if (l.w_ih.shape[1] != l.I) return "expected w_ih of shape";
  if (l.w_hh.shape != Shape{4 * l.H, l.H}) return "expected w_hh of shape";
  if (l.hx.shape != Shape{l.N, l.H}) return "expected hx of shape";
  if (l.cx.shape != Shape{l.N, l.H}) return "expected cx of shape";
  for (const HostTensor* t : {&l.hx, &l.cx, &l.w_ih, &l.w_hh})
    if (t->dtype != l.x.dtype) return "(the input's)";
  l.bias.assign(static_cast<size_t>(4 * l.H), 0.0);
  return "";
}

// Forward in double: output, cells, activated gates.
void run_forward(const HostLayer& l, std::vector<double>& out, std::vector<double>& cells,
                 std::vector<double>& gates) {
  const int64_t T = l.T, N = l.N, I = l.I, H = l.H;
  auto at = [](const std::vector<double>& v, int64_t k) -> double { return v[static_cast<size_t>(k)]; };
  auto set = [](std::vector<double>& v, int64_t k, double x) { v[static_cast<size_t>(k)] = x; };
  out.assign(static_cast<size_t>(T * N * H), 0.0);
  cells = out;
  gates.assign(static_cast<size_t>(T * N * 4 * H), 0.0);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = l.reverse ? T - 1 - s : s, tp = l.reverse ? t + 1 : t - 1;
    for (int64_t n = 0; n < N; ++n) {
      std::vector<double> act(static_cast<size_t>(4 * H));
      for (int64_t j = 0; j < 4 * H; ++j) {
        double a = at(l.bias, j);
        for (int64_t k = 0; k < I; ++k) a += at(l.x.f, (t * N + n) * I + k) * at(l.w_ih.f, j * I + k);
        for (int64_t k = 0; k < H; ++k) {
          const double hp = s == 0 ? at(l.hx.f, n * H + k) : at(out, (tp * N + n) * H + k);
          a += hp * at(l.w_hh.f, j * H + k);
        }
        set(act, j, j / H == 2 ? std::tanh(a) : sigmoid(a));
      }
      for (int64_t k = 0; k < H; ++k) {
        const double cp = s == 0 ? at(l.cx.f, n * H + k) : at(cells, (tp * N + n) * H + k);
        const double c = at(act, H + k) * cp + at(act, k) * at(act, 2 * H + k);
        set(cells, (t * N + n) * H + k, c);
        set(out, (t * N + n) * H + k, at(act, 3 * H + k) * std::tanh(c));
      }
      for (int64_t j = 0; j < 4 * H; ++j) set(gates, (t * N + n) * 4 * H + j, at(act, j));
    }
  }
}

HostTensor host(const Shape& shape, DType t, const std::vector<double>& v) {
  HostTensor h(shape, t);
  for (size_t k = 0; k < v.size(); ++k) h.set(static_cast<int64_t>(k), v[k]);
  return h;
}

Expected forward_ref(const RefArgs& a) {
  HostLayer l;
  if (std::string e = read_layer(a, 0, l); !e.empty()) return Expected::raises(e);
  for (size_t b : {5, 6}) {
    if (a.is_none(b)) continue;
    const HostTensor t = a.tensor(b);
    if (t.shape != Shape{4 * l.H}) return Expected::raises("(4 * hidden_size)");
    for (int64_t j = 0; j < 4 * l.H; ++j) l.bias[static_cast<size_t>(j)] += t.f[static_cast<size_t>(j)];
  }
  l.reverse = a.flag(7);
  std::vector<double> out, cells, gates;
  run_forward(l, out, cells, gates);
  return {{host({l.T, l.N, l.H}, a.out, out), host({l.T, l.N, l.H}, a.out, cells),
           host({l.T, l.N, 4 * l.H}, a.out, gates)}};
}

// lstm_layer_backward(grad_output, grad_cells, grad_gates, input, hx, cx, w_ih, w_hh, output, cells, gates, reverse)
Expected backward_ref(const RefArgs& a) {
  HostLayer l;
  if (std::string e = read_layer(a, 3, l); !e.empty()) return Expected::raises(e);
  l.reverse = a.flag(11);
  const HostTensor go = a.tensor(0), gc = a.tensor(1), gg = a.tensor(2), out = a.tensor(8), cel = a.tensor(9),
                   gat = a.tensor(10);
  const int64_t T = l.T, N = l.N, I = l.I, H = l.H, G = 4 * H;
  for (const HostTensor* t : {&go, &gc, &out, &cel})
    if (t->shape != Shape{T, N, H}) return Expected::raises("(seq_len, batch, hidden_size)");
  for (const HostTensor* t : {&gg, &gat})
    if (t->shape != Shape{T, N, G}) return Expected::raises("(seq_len, batch, 4 * hidden_size)");
  auto at = [](const HostTensor& t, int64_t k) { return t.f[static_cast<size_t>(k)]; };
  std::vector<double> dG(static_cast<size_t>(T * N * G)), dh(static_cast<size_t>(N * H), 0.0), dc = dh;
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = l.reverse ? T - 1 - s : s, tp = l.reverse ? t + 1 : t - 1;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < H; ++k) {
        const int64_t e1 = (t * N + n) * H + k, e4 = (t * N + n) * G + k, nk = n * H + k;
        const double i = at(gat, e4), f = at(gat, e4 + H), g = at(gat, e4 + 2 * H), o = at(gat, e4 + 3 * H);
        const double cp = s == 0 ? at(l.cx, nk) : at(cel, (tp * N + n) * H + k);
        const double tc = std::tanh(at(cel, e1));
        const double hg = dh[static_cast<size_t>(nk)] + at(go, e1);
        const double cg = dc[static_cast<size_t>(nk)] + at(gc, e1) + hg * o * (1 - tc * tc);
        dG[static_cast<size_t>(e4)] = (cg * g + at(gg, e4)) * i * (1 - i);
        dG[static_cast<size_t>(e4 + H)] = (cg * cp + at(gg, e4 + H)) * f * (1 - f);
        dG[static_cast<size_t>(e4 + 2 * H)] = (cg * i + at(gg, e4 + 2 * H)) * (1 - g * g);
        dG[static_cast<size_t>(e4 + 3 * H)] = (hg * tc + at(gg, e4 + 3 * H)) * o * (1 - o);
        dc[static_cast<size_t>(nk)] = cg * f;
      }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < H; ++k) {
        double acc = 0;
        for (int64_t j = 0; j < G; ++j)
          acc += dG[static_cast<size_t>((t * N + n) * G + j)] * at(l.w_hh, j * H + k);
        dh[static_cast<size_t>(n * H + k)] = acc;
      }
  }
  std::vector<double> dx(static_cast<size_t>(T * N * I), 0.0), dwi(static_cast<size_t>(G * I), 0.0),
      dwh(static_cast<size_t>(G * H), 0.0), db(static_cast<size_t>(G), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t tp = l.reverse ? t + 1 : t - 1;
    const bool first = l.reverse ? t == T - 1 : t == 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < G; ++j) {
        const double d = dG[static_cast<size_t>((t * N + n) * G + j)];
        db[static_cast<size_t>(j)] += d;
        for (int64_t k = 0; k < I; ++k) {
          dx[static_cast<size_t>((t * N + n) * I + k)] += d * at(l.w_ih, j * I + k);
          dwi[static_cast<size_t>(j * I + k)] += d * at(l.x, (t * N + n) * I + k);
        }
        for (int64_t k = 0; k < H; ++k)
          dwh[static_cast<size_t>(j * H + k)] += d * (first ? at(l.hx, n * H + k) : at(out, (tp * N + n) * H + k));
      }
  }
  const DType o = a.out;
  return {{host({T, N, I}, o, dx), host({N, H}, o, dh), host({N, H}, o, dc), host({G, I}, o, dwi),
           host({G, H}, o, dwh), host({G}, o, db)}};
}

// ---- samples ----

std::vector<Sample> forward_samples(DType t, SampleSize size) {
  Inputs in("lstm_layer", t, size);
  std::vector<Sample> out;
  for (auto& [name, l] : valid_layers(in, size)) out.push_back({name, forward_stack(l)});
  if (size == SampleSize::Large) return out;
  const Layer good = make_layer(in, 2, 2, 3, 4, true, true, false);
  auto bad = [&](std::string name, std::string error, auto change) {
    Layer l = good;
    change(l);
    out.push_back({std::move(name), forward_stack(l), std::nullopt, std::move(error)});
  };
  bad("bad_w_hh", "expected w_hh of shape [16, 4]", [&](Layer& l) { l.w_hh = in.uniform({16, 5}); });
  bad("bad_w_ih", "expected w_ih of shape", [&](Layer& l) { l.w_ih = in.uniform({15, 3}); });
  bad("bad_hx", "expected hx of shape [2, 4]", [&](Layer& l) { l.hx = in.uniform({3, 4}); });
  bad("bad_cx", "expected cx of shape [2, 4]", [&](Layer& l) { l.cx = in.uniform({2, 4, 1}); });
  bad("bad_bias", "(4 * hidden_size)", [&](Layer& l) { l.b_hh = in.uniform({4}); });
  bad("no_steps", "at least one step", [&](Layer& l) { l.x = in.uniform({0, 2, 3}); });
  bad("flat_input", "expected an input of shape (seq_len, batch, input_size)",
      [&](Layer& l) { l.x = in.uniform({2, 3}); });
  bad("mixed_dtype", "(the input's)",
      [&](Layer& l) { l.hx = l.hx.to(t == DType::Float32 ? DType::Float64 : DType::Float32); });
  return out;
}

Stack backward_stack(Inputs& in, const Layer& l) {
  auto maybe = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  const TensorTriple r = op::lstm_layer.call(l.x, l.hx, l.cx, l.w_ih, l.w_hh, maybe(l.b_ih), maybe(l.b_hh), l.reverse);
  const Shape s1(std::get<0>(r).sizes().begin(), std::get<0>(r).sizes().end());
  const Shape s4(std::get<2>(r).sizes().begin(), std::get<2>(r).sizes().end());
  return {arg(in.uniform(s1)),  arg(in.uniform(s1)),  arg(in.uniform(s4)),  arg(l.x),
          arg(l.hx),           arg(l.cx),           arg(l.w_ih),         arg(l.w_hh),
          arg(std::get<0>(r)), arg(std::get<1>(r)), arg(std::get<2>(r)), flag(l.reverse)};
}

std::vector<Sample> backward_samples(DType t, SampleSize size) {
  Inputs in("lstm_layer_backward", t, size);
  std::vector<Sample> out;
  for (auto& [name, l] : valid_layers(in, size)) out.push_back({name, backward_stack(in, l)});
  if (size == SampleSize::Large) return out;
  const Layer good = make_layer(in, 2, 2, 3, 4, true, true, false);
  Stack s = backward_stack(in, good);
  s[2] = arg(in.uniform({2, 2, 15}));
  out.push_back({"bad_grad_gates", s, std::nullopt, "(seq_len, batch, 4 * hidden_size)"});
  s = backward_stack(in, good);
  s[9] = arg(in.uniform({2, 2, 3}));
  out.push_back({"bad_cells", s, std::nullopt, "(seq_len, batch, hidden_size)"});
  s = backward_stack(in, good);
  s[7] = arg(in.uniform({16, 3}));
  out.push_back({"bad_w_hh", s, std::nullopt, "expected w_hh of shape"});
  return out;
}

DType same(DType t) { return t; }

}  // namespace

void add_rnn_rows(std::vector<OpInfo>& rows) {
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64};
  OpInfo fwd;
  fwd.name = "lstm_layer";
  fwd.dtypes = dtypes;
  fwd.out_dtype = &same;
  fwd.samples = &forward_samples;
  fwd.reference = &forward_ref;
  fwd.accumulation = largest_arg_numel;
  fwd.differentiable = true;
  rows.push_back(fwd);
  OpInfo bwd;
  bwd.name = "lstm_layer_backward";
  bwd.dtypes = dtypes;
  bwd.out_dtype = &same;
  bwd.samples = &backward_samples;
  bwd.reference = &backward_ref;
  bwd.accumulation = largest_arg_numel;
  rows.push_back(bwd);
}

}  // namespace ember::testing
