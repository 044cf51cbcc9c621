// gradcheck and gradgradcheck: see Note [How gradcheck works] in ember/gradcheck.h.
#include "ember/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::autograd {
namespace {

// d output / d input, dense: row r is output element r, column c input
// element c (both in row-major order of the logical shape).
struct Jacobian {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Jacobian(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

// The multi-index of row-major element k of `sizes`, printed as "[i, j]".
std::string element_str(int64_t k, IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = k % sizes[d];
    k /= sizes[d];
  }
  std::ostringstream os;
  os << IntArrayRef(idx);
  return os.str();
}

// Memory offsets (in elements, from data_ptr) of every element, row-major.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.numel()));
  std::vector<int64_t> idx(static_cast<size_t>(t.dim()), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.stride(d);
    out.push_back(off);
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++idx[d] < t.size(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The values of a tensor as doubles, row-major, copied now (an output that
// views an input would otherwise change when the input is perturbed).
std::vector<double> values_of(const Tensor& t) {
  NoGradGuard no_grad;
  const Tensor c = t.detach().to(Device::cpu(), kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// What gradcheck looks at: the inputs that require grad, the floating outputs.
struct Problem {
  std::vector<size_t> wrt;      // indices into inputs
  std::vector<size_t> outputs;  // indices into fn's outputs
  TensorList first_outputs;     // fn(inputs), recorded
};

Problem analyse(const GradcheckFunction& fn, const TensorList& inputs) {
  Problem p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    EMBER_CHECK(x.dtype() == kFloat64 && x.device().is_cpu(), "gradcheck: input ", i,
                " requires grad but is ", x.dtype(), " on ", x.device(), "; expected a Float64 CPU tensor");
    std::vector<int64_t> offs = element_offsets(x);
    std::sort(offs.begin(), offs.end());
    EMBER_CHECK(std::adjacent_find(offs.begin(), offs.end()) == offs.end(), "gradcheck: input ", i, " (sizes ",
                x.sizes(), ", strides ", x.strides(), ") has elements that share memory; pass a contiguous copy");
    for (size_t j : p.wrt) {
      EMBER_CHECK(inputs[j].is_same(x) || inputs[j].impl()->storage() != x.impl()->storage(), "gradcheck: inputs ",
                  j, " and ", i, " share memory; pass separate tensors (or the same tensor twice)");
    }
    p.wrt.push_back(i);
  }
  EMBER_CHECK(!p.wrt.empty(), "gradcheck: no input requires grad (", inputs.size(), " inputs)");
  p.first_outputs = fn(inputs);
  for (size_t o = 0; o < p.first_outputs.size(); ++o) {
    const Tensor& y = p.first_outputs[o];
    if (y.defined() && y.is_floating_point()) p.outputs.push_back(o);
  }
  return p;
}

// J[o][i] for checked output o and checked input i, by backward with one-hot grad_outputs.
std::vector<std::vector<Jacobian>> analytical_jacobians(const Problem& p, const TensorList& inputs,
                                                        std::string& error) {
  TensorList wrt;
  for (size_t i : p.wrt) wrt.push_back(inputs[i]);
  std::vector<std::vector<Jacobian>> jac;
  for (size_t o : p.outputs) {
    const Tensor& y = p.first_outputs[o];
    jac.emplace_back();
    for (const Tensor& x : wrt) jac.back().emplace_back(y.numel(), x.numel());
    if (!y.requires_grad()) continue;  // does not depend on any input: zeros
    for (int64_t r = 0; r < y.numel(); ++r) {
      Tensor one_hot = zeros(y.sizes(), y.options());
      one_hot.reshape({-1}).select(0, r).fill_(1.0);
      const TensorList g = grad({y}, wrt, {one_hot}, /*retain_graph=*/true, /*create_graph=*/false,
                                /*allow_unused=*/true);
      for (size_t i = 0; i < wrt.size(); ++i) {
        if (!g[i].defined()) continue;
        if (g[i].sizes() != wrt[i].sizes() || g[i].dtype() != wrt[i].dtype()) {
          std::ostringstream os;
          os << "the gradient of output " << o << " w.r.t. input " << p.wrt[i] << " has sizes " << g[i].sizes()
             << " and dtype " << g[i].dtype() << "; the input has sizes " << wrt[i].sizes() << " and dtype "
             << wrt[i].dtype();
          error = os.str();
          return jac;
        }
        const std::vector<double> row = values_of(g[i]);
        for (int64_t c = 0; c < wrt[i].numel(); ++c) jac.back()[i].at(r, c) = row[static_cast<size_t>(c)];
      }
    }
  }
  return jac;
}

// fn's checked outputs at the inputs' current values.
std::vector<std::vector<double>> evaluate(const GradcheckFunction& fn, const Problem& p, const TensorList& inputs) {
  const TensorList out = fn(inputs);
  EMBER_CHECK(out.size() == p.first_outputs.size(), "gradcheck: fn returned ", p.first_outputs.size(),
              " outputs, then ", out.size());
  std::vector<std::vector<double>> values;
  for (size_t o : p.outputs) {
    EMBER_CHECK(out[o].defined() && out[o].sizes() == p.first_outputs[o].sizes(), "gradcheck: output ", o,
                " changed shape between calls of fn");
    values.push_back(values_of(out[o]));
  }
  return values;
}

// Puts an element back when leaving the scope, also when fn throws.
struct RestoreElement {
  double* slot;
  double value;
  ~RestoreElement() { *slot = value; }
};

// J[o][i] by central differences: each input element moved by +-eps in place.
std::vector<std::vector<Jacobian>> numerical_jacobians(const GradcheckFunction& fn, const Problem& p,
                                                       const TensorList& inputs, double eps) {
  std::vector<std::vector<Jacobian>> jac(p.outputs.size());
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    for (size_t i : p.wrt) jac[o].emplace_back(p.first_outputs[p.outputs[o]].numel(), inputs[i].numel());
  }
  for (size_t i = 0; i < p.wrt.size(); ++i) {
    const Tensor& x = inputs[p.wrt[i]];
    double* data = x.numel() ? x.data_ptr<double>() : nullptr;
    const std::vector<int64_t> offsets = element_offsets(x);
    for (int64_t c = 0; c < x.numel(); ++c) {
      double* slot = data + offsets[static_cast<size_t>(c)];
      const RestoreElement restore{slot, *slot};
      *slot = restore.value + eps;
      const std::vector<std::vector<double>> plus = evaluate(fn, p, inputs);
      *slot = restore.value - eps;
      const std::vector<std::vector<double>> minus = evaluate(fn, p, inputs);
      for (size_t o = 0; o < p.outputs.size(); ++o) {
        for (int64_t r = 0; r < jac[o][i].rows; ++r)
          jac[o][i].at(r, c) = (plus[o][static_cast<size_t>(r)] - minus[o][static_cast<size_t>(r)]) / (2 * eps);
      }
    }
  }
  return jac;
}

// The element that is furthest outside |a - n| <= atol + rtol * |n|.
struct Mismatch {
  double ratio = 0;  // |a - n| / allowed; infinite for NaN
  size_t output = 0, input = 0;
  int64_t row = 0, col = 0;
  double numerical = 0, analytical = 0, allowed = 0;
};

GradcheckResult compare(const Problem& p, const TensorList& inputs, const std::vector<std::vector<Jacobian>>& num,
                        const std::vector<std::vector<Jacobian>>& ana, const GradcheckOptions& opt) {
  Mismatch worst;
  double largest_ok = 0;
  int64_t bad = 0, total = 0;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    for (size_t i = 0; i < p.wrt.size(); ++i) {
      const Jacobian& n = num[o][i];
      for (int64_t r = 0; r < n.rows; ++r) {
        for (int64_t c = 0; c < n.cols; ++c) {
          const double nv = n.at(r, c), av = ana[o][i].at(r, c);
          const double allowed = opt.atol + opt.rtol * std::fabs(nv), diff = std::fabs(av - nv);
          ++total;
          if (diff <= allowed) {
            largest_ok = std::max(largest_ok, diff / allowed);
            continue;
          }
          const double ratio = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff / allowed;
          if (bad++ == 0 || ratio > worst.ratio) worst = {ratio, p.outputs[o], p.wrt[i], r, c, nv, av, allowed};
        }
      }
    }
  }
  std::ostringstream os;
  os.precision(10);
  if (bad == 0) {
    os << "gradcheck passed: " << p.wrt.size() << " inputs, " << p.outputs.size() << " outputs, " << total
       << " Jacobian elements; largest |difference| / allowed " << largest_ok;
    return {true, os.str()};
  }
  const Tensor& y = p.first_outputs[worst.output];
  const Tensor& x = inputs[worst.input];
  os << "gradcheck failed: " << bad << " of " << total << " Jacobian elements differ. Worst: d output "
     << worst.output << element_str(worst.row, y.sizes()) << " / d input " << worst.input
     << element_str(worst.col, x.sizes()) << ": numerical " << worst.numerical << ", analytical " << worst.analytical
     << ", |difference| " << std::fabs(worst.analytical - worst.numerical) << " > allowed " << worst.allowed
     << " (atol " << opt.atol << " + rtol " << opt.rtol << " * |numerical|)";
  return {false, os.str()};
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFunction& fn, const TensorList& inputs, const GradcheckOptions& options) {
  const Problem p = analyse(fn, inputs);
  std::string error;
  // Backward first: the recorded graph belongs to the unperturbed inputs.
  const std::vector<std::vector<Jacobian>> ana = analytical_jacobians(p, inputs, error);
  if (!error.empty()) return {false, "gradcheck failed: " + error};
  const std::vector<std::vector<Jacobian>> num = numerical_jacobians(fn, p, inputs, options.eps);
  return compare(p, inputs, num, ana, options);
}

GradcheckResult gradgradcheck(const GradcheckFunction& fn, const TensorList& inputs, const GradcheckOptions& options) {
  const Problem p = analyse(fn, inputs);
  std::vector<size_t> outs;  // the outputs a gradient can flow from
  for (size_t o : p.outputs) {
    if (p.first_outputs[o].requires_grad()) outs.push_back(o);
  }
  EMBER_CHECK(!outs.empty(), "gradgradcheck: no output of fn requires grad");
  Generator gen(20240601);  // fixed: the same grad_outputs every run
  TensorList all = inputs;
  for (size_t o : outs) all.push_back(randn(p.first_outputs[o].sizes(), kFloat64, &gen).requires_grad_());
  const size_t n = inputs.size();
  auto first_derivatives = [&](const TensorList& xs) {
    const TensorList x(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n));
    const TensorList y = fn(x);
    TensorList ys, vs, wrt;
    for (size_t k = 0; k < outs.size(); ++k) {
      ys.push_back(y[outs[k]]);
      vs.push_back(xs[n + k]);
    }
    for (size_t i : p.wrt) wrt.push_back(x[i]);
    TensorList g = grad(ys, wrt, vs, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < g.size(); ++i) {
      if (!g[i].defined()) g[i] = zeros_like(wrt[i]);
    }
    return g;
  };
  GradcheckResult r = gradcheck(first_derivatives, all, options);
  std::ostringstream os;
  const std::vector<int64_t> wrt(p.wrt.begin(), p.wrt.end());
  os << "gradgradcheck (outputs: the gradients w.r.t. inputs " << IntArrayRef(wrt) << " in order; inputs " << n
     << ".. are grad_outputs): " << r.report;
  r.report = os.str();
  return r;
}

}  // namespace ember::autograd
