// Printing a tensor the way PyTorch's repr does (torch 1.13, default print
// options), so a user can hold ember's output next to a Python session's.
//
// Note [How torch lays out a printed tensor]
// - One formatter for the whole tensor: it looks at the values that will be
//   shown (all of them, or only the edge items when the tensor is
//   summarised) and picks a mode and one column width.
//     integers and bool: plain decimal (True/False), width = widest value;
//     floats whose nonzero finite values are all integers ("int mode"):
//       `3.` (no digits after the point);
//     other floats: `%.4f`.
//   Floats switch to scientific `%.4e` when max/min of the nonzero finite
//   magnitudes exceeds 1000 or the max exceeds 1e8, or (outside int mode)
//   the min is below 1e-4. nan and inf never count toward the mode or width.
// - Rows: a 1-d row holds as many elements as fit in 80 columns after the
//   indent (at least one); wrapped lines are indented one past the '['.
//   Sub-tensors of a k-d tensor are joined by ',' plus k-1 newlines.
// - Summarising: above 1000 elements, every dim longer than 6 shows its first
//   and last 3 entries around `...`.
// - Suffixes after the values: device for non-CPU tensors, dtype unless it is
//   float32, int64 or bool (an empty tensor shows every dtype but float32, and
//   its size unless it is 1-d). ember writes `dtype=float64`, without torch's
//   `torch.` prefix; a suffix that would pass column 80 goes on its own line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "core/tensor_util.h"
#include "ember/tensor.h"

namespace ember {
namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// Python's float formatting of nan and inf: "nan" (never "-nan"), "inf", "-inf".
std::string nonfinite_text(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

// Python's '{:.Nf}' of a double.
std::string fixed_text(double v, int digits) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  char buf[400];  // %.Nf of the largest double has 309 integer digits
  const int n = std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return std::string(buf, static_cast<size_t>(n));
}
// Python's '{:.4e}' of a double (at least two exponent digits, as C's %e).
std::string sci_text(double v) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.*e", kPrecision, v);
  return std::string(buf, static_cast<size_t>(n));
}

// Reads the elements of a CPU tensor through its strides.
class ElementReader {
 public:
  explicit ElementReader(const Tensor& t)
      : base_(static_cast<const char*>(t.data_ptr())), dtype_(t.dtype()), elem_(t.element_size()) {}

  double as_double(int64_t offset) const {
    const char* p = base_ + offset * static_cast<int64_t>(elem_);
    switch (dtype_) {
      case DType::Float32: return load<float>(p);
      case DType::Float64: return load<double>(p);
      case DType::Float16: return static_cast<float>(load<Half>(p));
      case DType::BFloat16: return static_cast<float>(load<BFloat16>(p));
      default: return static_cast<double>(as_int(offset));
    }
  }
  int64_t as_int(int64_t offset) const {
    const char* p = base_ + offset * static_cast<int64_t>(elem_);
    switch (dtype_) {
      case DType::Int32: return load<int32_t>(p);
      case DType::Int64: return load<int64_t>(p);
      case DType::UInt8: return load<uint8_t>(p);
      case DType::Bool: return load<uint8_t>(p) != 0;
      default: return static_cast<int64_t>(as_double(offset));
    }
  }

 private:
  template <class T>
  static T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }

  const char* base_;
  DType dtype_;
  size_t elem_;
};

// The one formatter of a tensor (see Note [How torch lays out a printed tensor]).
class ElementFormatter {
 public:
  ElementFormatter(ElementReader reader, DType dtype, const std::vector<int64_t>& shown)
      : reader_(reader), dtype_(dtype), floating_(is_floating_point(dtype)) {
    if (!floating_) {
      for (int64_t off : shown) width_ = std::max(width_, text_of_integral(off).size());
      return;
    }
    std::vector<double> vals;  // nonzero finite values
    for (int64_t off : shown) {
      const double v = reader_.as_double(off);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    }
    if (vals.empty()) return;
    double lo = std::fabs(vals[0]), hi = lo;
    for (double v : vals) {
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1e8 || (!int_mode_ && lo < 1e-4);
    for (double v : vals) {
      const size_t w = sci_mode_ ? sci_text(v).size() : int_mode_ ? fixed_text(v, 0).size() + 1
                                                                     : fixed_text(v, kPrecision).size();
      width_ = std::max(width_, w);
    }
  }

  size_t width() const { return width_; }

  std::string format(int64_t offset) const {
    std::string s;
    if (!floating_) {
      s = text_of_integral(offset);
    } else {
      const double v = reader_.as_double(offset);
      if (sci_mode_) {
        s = sci_text(v);
      } else if (int_mode_) {
        s = fixed_text(v, 0);
        if (std::isfinite(v)) s += '.';
      } else {
        s = fixed_text(v, kPrecision);
      }
    }
    if (s.size() < width_) s.insert(0, width_ - s.size(), ' ');
    return s;
  }

 private:
  std::string text_of_integral(int64_t offset) const {
    const int64_t v = reader_.as_int(offset);
    if (dtype_ == DType::Bool) return v ? "True" : "False";
    return std::to_string(v);
  }

  ElementReader reader_;
  DType dtype_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

class TensorPrinter {
 public:
  TensorPrinter(const Tensor& host, bool summarize)
      : sizes_(host.sizes()), strides_(host.strides()), summarize_(summarize),
        formatter_(ElementReader(host), host.dtype(), shown_offsets()) {}

  // `indent`: the column of this sub-tensor's '['.
  std::string str(size_t d, int64_t offset, int64_t indent) const {
    const size_t ndim = sizes_.size();
    if (d == ndim) return formatter_.format(offset);
    if (d + 1 == ndim) return row(offset, indent);
    std::vector<std::string> parts;
    for (int64_t i : shown_indices(d, /*with_gap=*/true)) {
      parts.push_back(i < 0 ? "..." : str(d + 1, offset + i * strides_[d], indent + 1));
    }
    const std::string sep = "," + std::string(ndim - d - 1, '\n') + std::string(static_cast<size_t>(indent + 1), ' ');
    return "[" + join(parts, sep) + "]";
  }

 private:
  // Indices of dim d that are printed; with_gap puts -1 where `...` goes.
  std::vector<int64_t> shown_indices(size_t d, bool with_gap) const {
    const int64_t n = sizes_[d];
    std::vector<int64_t> idx;
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      if (with_gap) idx.push_back(-1);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  // Element offsets of every printed value, for the formatter.
  std::vector<int64_t> shown_offsets() const {
    std::vector<int64_t> out{0};
    for (size_t d = 0; d < sizes_.size(); ++d) {
      std::vector<int64_t> next;
      const std::vector<int64_t> idx = shown_indices(d, /*with_gap=*/false);
      for (int64_t base : out)
        for (int64_t i : idx) next.push_back(base + i * strides_[d]);
      out = std::move(next);
    }
    return out;
  }

  std::string row(int64_t offset, int64_t indent) const {
    const int64_t element_length = static_cast<int64_t>(formatter_.width()) + 2;
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
    const size_t d = sizes_.size() - 1;
    std::vector<std::string> items;
    for (int64_t i : shown_indices(d, /*with_gap=*/true)) {
      items.push_back(i < 0 ? " ..." : formatter_.format(offset + i * strides_[d]));
    }
    // per_line items to a line; wrapped lines start one past the '['.
    const std::string line_break = ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
    std::string out = "[";
    for (size_t k = 0; k < items.size(); ++k) {
      if (k) out += k % static_cast<size_t>(per_line) == 0 ? line_break : ", ";
      out += items[k];
    }
    return out + "]";
  }

  static std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) out += sep;
      out += parts[i];
    }
    return out;
  }

  IntArrayRef sizes_, strides_;  // of the tensor being printed, which outlives the printer
  bool summarize_;
  ElementFormatter formatter_;
};

std::string shape_tuple(IntArrayRef sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + (sizes.size() == 1 ? ",)" : ")");
}

// Appends the suffixes as torch's _add_suffixes does, including its count of
// the last line's length (two more than the characters after the last newline).
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, size_t indent) {
  const size_t nl = text.rfind('\n');
  size_t last_line = nl == std::string::npos ? text.size() + 2 : text.size() - nl + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line + suffix.size() + 2 > static_cast<size_t>(kLineWidth)) {
      text += ",\n" + std::string(indent, ' ') + suffix;
      last_line = indent + suffix.size();
    } else {
      text += ", " + suffix;
      last_line += suffix.size() + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const size_t indent = prefix.size();
  std::vector<std::string> suffixes;
  if (!device().is_cpu()) suffixes.push_back("device='" + device().str() + "'");
  const std::string dtype_suffix = "dtype=" + std::string(dtype_name(dtype()));
  std::string body;
  if (numel() == 0) {
    if (dim() != 1) suffixes.push_back("size=" + shape_tuple(sizes()));
    if (dtype() != DType::Float32) suffixes.push_back(dtype_suffix);
    body = "[]";
  } else {
    const bool default_dtype = dtype() == DType::Float32 || dtype() == DType::Int64 || dtype() == DType::Bool;
    if (!default_dtype) suffixes.push_back(dtype_suffix);
    const Tensor host = device().is_cpu() ? *this : cpu();
    const TensorPrinter printer(host, numel() > kThreshold);
    body = printer.str(0, 0, static_cast<int64_t>(indent));
  }
  if (requires_grad()) {
    const std::string fn = grad_fn_name(*this);
    suffixes.push_back(fn.empty() ? std::string("requires_grad=True") : "grad_fn=<" + fn + ">");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace ember
