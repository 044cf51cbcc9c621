// The convolution reference (conv_reference.h). 1-D and 2-D convolutions are
// computed as 3-D ones with unit leading spatial dims (depth, then height),
// so one set of loops covers every case.
#include "kernels/cpu/conv/conv_reference.h"

#include <algorithm>
#include <array>

#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

using Triple = std::array<int64_t, 3>;  // (depth, height, width)

// The trailing `spatial` entries of a 1-value or per-dim argument; `neutral` for the dims the input lacks.
Triple triple_of(const std::vector<int64_t>& v, int64_t spatial, int64_t neutral, const char* name) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == spatial, "convolution: expected ", name,
              " to have 1 or ", spatial, " values, got ", IntArrayRef(v));
  Triple t{neutral, neutral, neutral};
  for (int64_t d = 0; d < spatial; ++d) t[3 - spatial + d] = v.size() == 1 ? v[0] : v[d];
  return t;
}

Triple spatial_sizes(const std::vector<int64_t>& sizes) {
  Triple t{1, 1, 1};
  const int64_t spatial = static_cast<int64_t>(sizes.size()) - 2;
  for (int64_t d = 0; d < spatial; ++d) t[3 - spatial + d] = sizes[2 + d];
  return t;
}

}  // namespace

Tensor convolution_reference(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  const char* op = "convolution";
  reference::check_dtype(input, op);
  reference::check_dtype(weight, op);
  EMBER_CHECK(input.dtype() == weight.dtype(), op, ": expected input and weight of one dtype, got ", input.dtype(),
              " and ", weight.dtype());
  EMBER_CHECK(input.dim() >= 3 && input.dim() <= 5 && weight.dim() == input.dim(), op,
              ": expected a (N, C, *spatial) input with 1 to 3 spatial dims and a weight of as many dims, got ",
              input.sizes(), " and ", weight.sizes());
  const reference::Values x = reference::read(input, op), w = reference::read(weight, op);
  const int64_t spatial = x.dim() - 2, groups = p.groups;
  const Triple stride = triple_of(p.stride, spatial, 1, "stride"), pad = triple_of(p.padding, spatial, 0, "padding"),
               dil = triple_of(p.dilation, spatial, 1, "dilation"),
               out_pad = triple_of(p.output_padding.empty() ? std::vector<int64_t>{0} : p.output_padding, spatial, 0,
                                   "output_padding");
  for (int d = 0; d < 3; ++d) {
    EMBER_CHECK(stride[d] > 0 && dil[d] > 0 && pad[d] >= 0 && out_pad[d] >= 0, op,
                ": expected stride and dilation > 0, padding and output_padding >= 0, got stride ",
                IntArrayRef(p.stride), ", dilation ", IntArrayRef(p.dilation), ", padding ", IntArrayRef(p.padding),
                ", output_padding ", IntArrayRef(p.output_padding));
  }
  for (int d = 0; d < 3; ++d) {
    EMBER_CHECK(
        p.transposed ? out_pad[d] < std::max(stride[d], dil[d]) : out_pad[d] == 0, op, ": output_padding ",
        IntArrayRef(p.output_padding),
        p.transposed ? " must be below max(stride, dilation) in each dim" : " is only for transposed convolutions");
  }
  const Triple in = spatial_sizes(x.sizes), k = spatial_sizes(w.sizes);
  const int64_t n_batch = x.size(0), c_in = x.size(1);
  EMBER_CHECK(groups > 0 && c_in % groups == 0 && w.size(0) % groups == 0, op, ": groups (", groups,
              ") must divide the input channels (", c_in, ") and the weight's first dim (", w.size(0), ")");
  // Per group: cin_g input channels, cout_g output channels.
  const int64_t cin_g = c_in / groups;
  const int64_t cout_g = p.transposed ? w.size(1) : w.size(0) / groups;
  EMBER_CHECK(p.transposed ? w.size(0) == c_in : w.size(1) == cin_g, op, ": weight of shape ", weight.sizes(),
              " does not fit an input of shape ", input.sizes(), " with ", groups, " groups");
  const int64_t c_out = cout_g * groups;
  Triple out{};
  for (int d = 0; d < 3; ++d) {
    out[d] = p.transposed ? (in[d] - 1) * stride[d] - 2 * pad[d] + dil[d] * (k[d] - 1) + out_pad[d] + 1
                          : (in[d] + 2 * pad[d] - dil[d] * (k[d] - 1) - 1) / stride[d] + 1;
    EMBER_CHECK(out[d] > 0 || in[d] == 0, op, ": the kernel is larger than the padded input of shape ", input.sizes());
  }
  std::vector<long double> y(n_batch * c_out * out[0] * out[1] * out[2], 0);
  auto y_at = [&](int64_t n, int64_t o, int64_t a, int64_t b, int64_t c) -> long double& {
    return y[(((n * c_out + o) * out[0] + a) * out[1] + b) * out[2] + c];
  };
  auto x_at = [&](int64_t n, int64_t ch, int64_t a, int64_t b, int64_t c) {
    return x.v[(((n * c_in + ch) * in[0] + a) * in[1] + b) * in[2] + c];
  };
  auto w_at = [&](int64_t i, int64_t j, int64_t a, int64_t b, int64_t c) {
    return w.v[(((i * w.size(1) + j) * k[0] + a) * k[1] + b) * k[2] + c];
  };
  auto inside = [](int64_t v, int64_t size) { return v >= 0 && v < size; };

  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t o = 0; o < cout_g; ++o) {
        for (int64_t c = 0; c < cin_g; ++c) {
          const int64_t ci = g * cin_g + c, co = g * cout_g + o;
          for (int64_t ka = 0; ka < k[0]; ++ka) {
            for (int64_t kb = 0; kb < k[1]; ++kb) {
              for (int64_t kc = 0; kc < k[2]; ++kc) {
                const long double wv = p.transposed ? w_at(ci, o, ka, kb, kc) : w_at(co, c, ka, kb, kc);
                // Ordinary: output position q reads input q * stride - pad + t * dilation.
                // Transposed: input position i writes output i * stride - pad + t * dilation.
                const Triple& from = p.transposed ? in : out;
                const Triple& to = p.transposed ? out : in;
                for (int64_t a = 0; a < from[0]; ++a) {
                  const int64_t ta = a * stride[0] - pad[0] + ka * dil[0];
                  if (!inside(ta, to[0])) continue;
                  for (int64_t b = 0; b < from[1]; ++b) {
                    const int64_t tb = b * stride[1] - pad[1] + kb * dil[1];
                    if (!inside(tb, to[1])) continue;
                    for (int64_t e = 0; e < from[2]; ++e) {
                      const int64_t te = e * stride[2] - pad[2] + kc * dil[2];
                      if (!inside(te, to[2])) continue;
                      if (p.transposed)
                        y_at(n, co, ta, tb, te) += x_at(n, ci, a, b, e) * wv;
                      else
                        y_at(n, co, a, b, e) += x_at(n, ci, ta, tb, te) * wv;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (bias.defined()) {
    reference::check_dtype(bias, op);
    const reference::Values b = reference::read(bias, op);
    EMBER_CHECK(b.numel() == c_out, op, ": expected a bias of ", c_out, " values, got ", bias.sizes());
    const int64_t plane = out[0] * out[1] * out[2];
    for (size_t i = 0; i < y.size(); ++i) y[i] += b.v[i / plane % c_out];
  }
  std::vector<int64_t> sizes = {n_batch, c_out};
  for (int64_t d = 3 - spatial; d < 3; ++d) sizes.push_back(out[d]);
  return reference::write(sizes, std::vector<double>(y.begin(), y.end()), input.dtype());
}

}  // namespace ember::cpu
