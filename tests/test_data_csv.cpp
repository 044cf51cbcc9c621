// The numeric CSV reader: values, target columns, and errors that name the
// file, the line and the column.
#include <gtest/gtest.h>

#include <vector>

#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

using ember::testing::ScratchDir;
using ember::testing::values;
using ember::testing::write_text;

TEST(DataCsv, ReadsFeaturesAndANamedTarget) {
  ScratchDir dir;
  write_text(dir.path("iris.csv"),
             "sepal, petal ,\"class\"\n"
             "5.1, 1.4, 0\r\n"
             "\n"
             "-6.5e0,+2,2\n"
             "7,nan,1");  // no newline at the end
  CsvTable t = load_csv(dir.path("iris.csv"), {.target_name = "class", .target_dtype = kInt64});
  EXPECT_EQ(t.features.sizes(), IntArrayRef({3, 2}));
  EXPECT_EQ(t.features.dtype(), kFloat32);
  const std::vector<double> f = values(t.features);
  EXPECT_EQ(f[0], static_cast<double>(5.1f));
  EXPECT_EQ(f[2], -6.5);
  EXPECT_EQ(f[3], 2.0);
  EXPECT_TRUE(std::isnan(f[5]));
  EXPECT_EQ(t.targets.dtype(), kInt64);
  EXPECT_EQ(values(t.targets), (std::vector<double>{0, 2, 1}));
  EXPECT_EQ(t.feature_names, (std::vector<std::string>{"sepal", "petal"}));
  EXPECT_EQ(t.target_name, "class");
}

TEST(DataCsv, ReadsWithoutHeaderAndATargetCountedFromTheEnd) {
  ScratchDir dir;
  write_text(dir.path("d.csv"), "1;2;3\n4;5;6\n");
  CsvTable t = load_csv(dir.path("d.csv"),
                        {.header = false, .delimiter = ';', .target_index = -1, .dtype = kFloat64});
  EXPECT_EQ(t.features.dtype(), kFloat64);
  EXPECT_EQ(values(t.features), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(t.targets.dtype(), kFloat64);
  EXPECT_EQ(values(t.targets), (std::vector<double>{3, 6}));
  EXPECT_TRUE(t.feature_names.empty());
}

TEST(DataCsv, WithoutATargetEveryColumnIsAFeature) {
  ScratchDir dir;
  write_text(dir.path("d.csv"), "a,b\n1,2\n");
  CsvTable t = load_csv(dir.path("d.csv"));
  EXPECT_EQ(t.features.sizes(), IntArrayRef({1, 2}));
  EXPECT_FALSE(t.targets.defined());
}

TEST(DataCsv, ErrorsNameTheFileLineAndColumn) {
  ScratchDir dir;
  const std::string bad_number = dir.path("bad_number.csv");
  write_text(bad_number, "x,y\n1,2\n3,abc\n");
  EXPECT_EMBER_ERROR(load_csv(bad_number), "load_csv", "bad_number.csv", "line 3, column 2 ('y')",
                     "'abc' is not a number");
  const std::string ragged = dir.path("ragged.csv");
  write_text(ragged, "1,2,3\n4,5\n");
  EXPECT_EMBER_ERROR(load_csv(ragged, {.header = false}), "ragged.csv", "line 2 has 2 columns, expected 3");
  const std::string empty_field = dir.path("empty_field.csv");
  write_text(empty_field, "1,,3\n");
  EXPECT_EMBER_ERROR(load_csv(empty_field, {.header = false}), "line 1, column 2", "empty field");
  const std::string fractional = dir.path("fractional.csv");
  write_text(fractional, "a,label\n1,0.5\n");
  EXPECT_EMBER_ERROR(load_csv(fractional, {.target_name = "label", .target_dtype = kInt64}), "fractional.csv",
                     "line 2, column 2 ('label')", "not an integer");
}

TEST(DataCsv, RejectsBadOptions) {
  ScratchDir dir;
  const std::string path = dir.path("d.csv");
  write_text(path, "a,b\n1,2\n");
  EXPECT_EMBER_ERROR(load_csv(path, {.target_name = "c"}), "no column named 'c'");
  EXPECT_EMBER_ERROR(load_csv(path, {.target_index = 2}), "target_index 2 is out of range for 2 columns");
  EXPECT_EMBER_ERROR(load_csv(path, {.target_index = 0, .target_name = "a"}), "not both");
  EXPECT_EMBER_ERROR(load_csv(path, {.header = false, .target_name = "a"}), "needs a header");
  EXPECT_EMBER_ERROR(load_csv(path, {.dtype = kInt32}), "float32 or float64");
  EXPECT_EMBER_ERROR(load_csv(dir.path("missing.csv")), "missing.csv", "cannot open");
}

}  // namespace
}  // namespace ember::data
