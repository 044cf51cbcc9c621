// The numeric CSV reader (<ember/data/csv.h>).
#include "ember/data/csv.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "ember/error.h"
#include "ember/ops.h"
#include "serialize/safetensors_format.h"

namespace ember::data {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string_view> split(std::string_view line, char delimiter) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t end = line.find(delimiter, start);
    fields.push_back(trim(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

class CsvParser {
 public:
  CsvParser(const std::string& path, const CsvOptions& options) : path_(path), options_(options) {
    EMBER_CHECK(options.dtype == kFloat32 || options.dtype == kFloat64, "load_csv(", path,
                "): dtype must be float32 or float64, got ", options.dtype);
    const DType target_dtype = options.target_dtype.value_or(options.dtype);
    EMBER_CHECK(target_dtype == kFloat32 || target_dtype == kFloat64 || target_dtype == kInt64, "load_csv(", path,
                "): target_dtype must be float32, float64 or int64, got ", target_dtype);
    EMBER_CHECK(!(options.target_index && options.target_name), "load_csv(", path,
                "): give target_index or target_name, not both");
    EMBER_CHECK(!options.target_name || options.header, "load_csv(", path, "): target_name '",
                *options.target_name, "' needs a header line (header = true)");
  }

  CsvTable parse() {
    const std::vector<uint8_t> bytes = serialize::read_file_bytes(path_);
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    size_t line_no = 0;
    bool header_pending = options_.header;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (trim(line).empty()) continue;
      std::vector<std::string_view> fields = split(line, options_.delimiter);
      if (header_pending) {
        header_pending = false;
        for (std::string_view f : fields) names_.emplace_back(f);
        set_columns(fields.size(), line_no);
        continue;
      }
      if (columns_ == 0) set_columns(fields.size(), line_no);
      EMBER_CHECK(fields.size() == columns_, "load_csv(", path_, "): line ", line_no, " has ", fields.size(),
                  " columns, expected ", columns_, " (as line ", columns_line_, ")");
      for (size_t c = 0; c < fields.size(); ++c) {
        const double v = parse_number(fields[c], line_no, c);
        if (static_cast<int64_t>(c) == target_) targets_.push_back(check_target(v, fields[c], line_no, c));
        else features_.push_back(v);
      }
      ++rows_;
    }
    EMBER_CHECK(rows_ > 0, "load_csv(", path_, "): no data rows", options_.header ? " after the header" : "");
    return build();
  }

 private:
  void set_columns(size_t columns, size_t line_no) {
    columns_ = columns;
    columns_line_ = line_no;
    if (options_.target_name) {
      for (size_t c = 0; c < names_.size(); ++c) {
        if (names_[c] != *options_.target_name) continue;
        EMBER_CHECK(target_ < 0, "load_csv(", path_, "): the header (line ", line_no, ") names two columns '",
                    *options_.target_name, "': which is the target is ambiguous");
        target_ = static_cast<int64_t>(c);
      }
      EMBER_CHECK(target_ >= 0, "load_csv(", path_, "): no column named '", *options_.target_name,
                  "' in the header (line ", line_no, ")");
    } else if (options_.target_index) {
      const auto n = static_cast<int64_t>(columns_);
      const int64_t t = *options_.target_index < 0 ? *options_.target_index + n : *options_.target_index;
      EMBER_CHECK(t >= 0 && t < n, "load_csv(", path_, "): target_index ", *options_.target_index,
                  " is out of range for ", n, " columns");
      target_ = t;
    }
  }

  std::string where(size_t line_no, size_t column) const {
    std::string s = "line " + std::to_string(line_no) + ", column " + std::to_string(column + 1);
    if (column < names_.size()) s += " ('" + names_[column] + "')";
    return s;
  }

  double parse_number(std::string_view field, size_t line_no, size_t column) const {
    EMBER_CHECK(!field.empty(), "load_csv(", path_, "): ", where(line_no, column), ": empty field");
    std::string_view digits = field;
    if (digits.front() == '+') digits.remove_prefix(1);  // from_chars takes no '+'
    double v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    EMBER_CHECK(ec == std::errc() && end == digits.data() + digits.size(), "load_csv(", path_, "): ",
                where(line_no, column), ": '", field, "' is not a number");
    return v;
  }

  double check_target(double v, std::string_view field, size_t line_no, size_t column) const {
    if (options_.target_dtype == kInt64)
      EMBER_CHECK(std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 0x1p63, "load_csv(", path_, "): ",
                  where(line_no, column), ": target '", field, "' is not an integer (target_dtype is int64)");
    return v;
  }

  CsvTable build() {
    CsvTable table;
    const auto rows = static_cast<int64_t>(rows_);
    const int64_t feature_columns = static_cast<int64_t>(columns_) - (target_ >= 0 ? 1 : 0);
    table.features = from_blob(features_.data(), {rows, feature_columns}, kFloat64).to(options_.dtype).clone();
    if (target_ >= 0) {
      table.targets = from_blob(targets_.data(), {rows}, kFloat64).to(options_.target_dtype.value_or(options_.dtype))
                          .clone();
    }
    for (size_t c = 0; c < names_.size(); ++c) {
      if (static_cast<int64_t>(c) == target_) table.target_name = names_[c];
      else table.feature_names.push_back(names_[c]);
    }
    return table;
  }

  const std::string& path_;
  const CsvOptions& options_;
  std::vector<std::string> names_;
  size_t columns_ = 0, columns_line_ = 0, rows_ = 0;
  int64_t target_ = -1;
  std::vector<double> features_, targets_;
};

}  // namespace

CsvTable load_csv(const std::string& path, const CsvOptions& options) { return CsvParser(path, options).parse(); }

}  // namespace ember::data
