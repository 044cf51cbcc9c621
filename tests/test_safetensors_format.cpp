// The safetensors format layer: what it writes, what it accepts, and that no
// input makes it do anything but return a header or throw ember::Error.
#include "serialize/safetensors_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ember/error.h"
#include "test_util.h"

namespace ember::serialize {
namespace {

constexpr std::string_view kWhat = "test.safetensors";

// 8-byte little-endian length, then the header text, then the data.
std::vector<uint8_t> make_file(std::string_view header, const std::vector<uint8_t>& data = {}) {
  std::vector<uint8_t> out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string entry(std::string_view name, std::string_view dtype, std::string_view shape,
                  std::string_view offsets) {
  return "\"" + std::string(name) + "\":{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":" +
         std::string(shape) + ",\"data_offsets\":" + std::string(offsets) + "}";
}

// Parses; returns the ember::Error message, or "" when the input was accepted.
// Any other exception type fails the test.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    parse_safetensors(bytes.data(), bytes.size(), kWhat);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-ember exception: " << e.what();
    return "(non-ember exception)";
  }
  return "";
}

void expect_rejected(const std::vector<uint8_t>& bytes, std::initializer_list<std::string_view> words) {
  std::string msg = parse_error(bytes);
  ASSERT_FALSE(msg.empty()) << "accepted a malformed file";
  EXPECT_NE(msg.find("load_safetensors(test.safetensors)"), std::string::npos) << msg;
  for (auto w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
}

std::vector<uint8_t> bytes_of(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  return {b, b + n};
}

// ---------------------------------------------------------------------------
// A file written by the real Python library: safetensors 0.8.0 with torch,
//
//   from safetensors.torch import save
//   save({"weight": torch.tensor([[1.0, -2.0], [0.5, 3.25]]),
//         "bias": torch.tensor([0.25, -1.5]),
//         "step": torch.tensor(7),                                  # int64, 0-d
//         "mask": torch.tensor([True, False, True]),
//         "half": torch.tensor([1.0, -2.0], dtype=torch.float16),
//         "bf": torch.tensor([1.5], dtype=torch.bfloat16),
//         "ids": torch.tensor([-1, 2], dtype=torch.int32),
//         "bytes": torch.tensor([0, 127, 255], dtype=torch.uint8),
//         "d": torch.tensor([0.1], dtype=torch.float64),
//         "empty": torch.zeros(0)},
//        metadata={"format": "pt"})
//
// gave exactly these bytes: the length 616 (0x268), this header (tensors
// ordered widest dtype first, then by name; 7 spaces of padding so the data
// starts at 8 + 616 = 624, a multiple of 8), then 60 bytes of data.
constexpr std::string_view kReferenceHeader =
    R"({"__metadata__":{"format":"pt"},)"
    R"("step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
    R"("d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},)"
    R"("bias":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
    R"("empty":{"dtype":"F32","shape":[0],"data_offsets":[24,24]},)"
    R"("weight":{"dtype":"F32","shape":[2,2],"data_offsets":[24,40]},)"
    R"("ids":{"dtype":"I32","shape":[2],"data_offsets":[40,48]},)"
    R"("bf":{"dtype":"BF16","shape":[1],"data_offsets":[48,50]},)"
    R"("half":{"dtype":"F16","shape":[2],"data_offsets":[50,54]},)"
    R"("bytes":{"dtype":"U8","shape":[3],"data_offsets":[54,57]},)"
    R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[57,60]}})"
    "       ";
const std::vector<uint8_t> kReferenceData = {
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // step  = 7 (i64)
    0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f,  // d     = 0.1 (f64)
    0x00, 0x00, 0x80, 0x3e, 0x00, 0x00, 0xc0, 0xbf,  // bias  = 0.25, -1.5
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0,  // weight= 1, -2,
    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x50, 0x40,  //         0.5, 3.25
    0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00,  // ids   = -1, 2
    0xc0, 0x3f,                                      // bf    = 1.5 (bf16)
    0x00, 0x3c, 0x00, 0xc0,                          // half  = 1, -2 (f16)
    0x00, 0x7f, 0xff,                                // bytes = 0, 127, 255
    0x01, 0x00, 0x01,                                // mask  = T, F, T
};

std::vector<uint8_t> reference_file() { return make_file(kReferenceHeader, kReferenceData); }

TEST(SafetensorsFormat, ReferenceFileHasTheDocumentedLayout) {
  auto file = reference_file();
  ASSERT_EQ(kReferenceHeader.size(), 616u);
  ASSERT_EQ(file.size(), 684u);
  EXPECT_EQ(file[0], 0x68);
  EXPECT_EQ(file[1], 0x02);
}

TEST(SafetensorsFormat, WriterIsByteIdenticalToTheReference) {
  const float weight[] = {1.0f, -2.0f, 0.5f, 3.25f};
  const float bias[] = {0.25f, -1.5f};
  const int64_t step = 7;
  const bool mask[] = {true, false, true};
  const uint16_t half[] = {0x3c00, 0xc000};
  const uint16_t bf[] = {0x3fc0};
  const int32_t ids[] = {-1, 2};
  const uint8_t bytes[] = {0, 127, 255};
  const double d = 0.1;
  // Given in another order than the file's: the writer sorts.
  std::vector<TensorView> views = {
      {"weight", DType::Float32, {2, 2}, weight, sizeof weight},
      {"bias", DType::Float32, {2}, bias, sizeof bias},
      {"step", DType::Int64, {}, &step, sizeof step},
      {"mask", DType::Bool, {3}, mask, sizeof mask},
      {"half", DType::Float16, {2}, half, sizeof half},
      {"bf", DType::BFloat16, {1}, bf, sizeof bf},
      {"ids", DType::Int32, {2}, ids, sizeof ids},
      {"bytes", DType::UInt8, {3}, bytes, sizeof bytes},
      {"d", DType::Float64, {1}, &d, sizeof d},
      {"empty", DType::Float32, {0}, nullptr, 0},
  };
  auto out = write_safetensors(views, {{"format", "pt"}});
  EXPECT_EQ(out, reference_file());
}

TEST(SafetensorsFormat, ParsesTheReferenceFile) {
  auto file = reference_file();
  auto h = parse_safetensors(file.data(), file.size(), kWhat);
  EXPECT_EQ(h.data_start, 624u);
  EXPECT_EQ(h.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  struct Want {
    const char* name;
    DType dtype;
    std::vector<int64_t> shape;
    size_t begin, end;
  };
  // In data order; "empty" (24, 24) sorts before "weight" (24, 40).
  std::vector<Want> want = {
      {"step", DType::Int64, {}, 0, 8},        {"d", DType::Float64, {1}, 8, 16},
      {"bias", DType::Float32, {2}, 16, 24},   {"empty", DType::Float32, {0}, 24, 24},
      {"weight", DType::Float32, {2, 2}, 24, 40}, {"ids", DType::Int32, {2}, 40, 48},
      {"bf", DType::BFloat16, {1}, 48, 50},    {"half", DType::Float16, {2}, 50, 54},
      {"bytes", DType::UInt8, {3}, 54, 57},    {"mask", DType::Bool, {3}, 57, 60},
  };
  ASSERT_EQ(h.tensors.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(h.tensors[i].name, want[i].name);
    EXPECT_EQ(h.tensors[i].dtype, want[i].dtype);
    EXPECT_EQ(h.tensors[i].shape, want[i].shape);
    EXPECT_EQ(h.tensors[i].offset_begin, want[i].begin);
    EXPECT_EQ(h.tensors[i].offset_end, want[i].end);
  }
  float w[4];
  std::memcpy(w, file.data() + h.data_start + 24, sizeof w);
  EXPECT_EQ(w[3], 3.25f);
}

// ---------------------------------------------------------------------------
// Round trips

TEST(SafetensorsFormat, RoundTripsEveryDTypeZeroDimEmptyAndMetadata) {
  const float f32[] = {1.5f, -0.0f, 3e38f, -7.25f, 0.1f, 2.0f};
  const double f64[] = {0.1, -1e308, 4.9e-324};
  const uint16_t f16[] = {0x3c00, 0x7c00, 0xfc00, 0x7e00};  // 1, inf, -inf, nan
  const uint16_t bf16[] = {0x3f80, 0xc000};
  const int32_t i32[] = {-2147483647 - 1, 2147483647};
  const int64_t i64 = -1234567890123456789;  // 0-d
  const uint8_t u8[] = {0, 1, 254, 255};
  const bool b[] = {true, false};
  std::vector<TensorView> views = {
      {"layer.0.weight", DType::Float32, {2, 3}, f32, sizeof f32},
      {"f64", DType::Float64, {3}, f64, sizeof f64},
      {"f16", DType::Float16, {2, 1, 2}, f16, sizeof f16},
      {"bf16", DType::BFloat16, {2}, bf16, sizeof bf16},
      {"i32", DType::Int32, {1, 2}, i32, sizeof i32},
      {"scalar", DType::Int64, {}, &i64, sizeof i64},
      {"u8", DType::UInt8, {4}, u8, sizeof u8},
      {"bool", DType::Bool, {2}, b, sizeof b},
      {"empty_f32", DType::Float32, {0, 3}, nullptr, 0},
      {"empty_bool", DType::Bool, {4, 0}, nullptr, 0},
      {"name with \"quotes\", \\ and \xc3\xa9", DType::UInt8, {1}, u8, 1},
  };
  std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"note", "line\nbreak \"q\" \xe2\x82\xac"}, {"", "empty key"}};
  auto file = write_safetensors(views, metadata);
  auto h = parse_safetensors(file.data(), file.size(), kWhat);
  EXPECT_EQ(h.data_start % 8, 0u);
  EXPECT_EQ(h.metadata, metadata);
  ASSERT_EQ(h.tensors.size(), views.size());
  for (const auto& v : views) {
    SCOPED_TRACE(v.name);
    auto it = std::find_if(h.tensors.begin(), h.tensors.end(),
                           [&](const TensorRecord& r) { return r.name == v.name; });
    ASSERT_NE(it, h.tensors.end());
    EXPECT_EQ(it->dtype, v.dtype);
    EXPECT_EQ(it->shape, v.shape);
    ASSERT_EQ(it->offset_end - it->offset_begin, v.nbytes);
    EXPECT_EQ(bytes_of(file.data() + h.data_start + it->offset_begin, v.nbytes),
              bytes_of(v.data, v.nbytes));
  }
}

TEST(SafetensorsFormat, RoundTripsAFileWithNoTensors) {
  auto file = write_safetensors({}, {});
  EXPECT_EQ(file, make_file("{}      "));  // as the reference writes save({})
  auto h = parse_safetensors(file.data(), file.size(), kWhat);
  EXPECT_TRUE(h.tensors.empty());
  EXPECT_TRUE(h.metadata.empty());
  EXPECT_EQ(h.data_start, 16u);
}

// The header parse is linear in the number of tensors: 100,000 entries
// parse in well under a second (a quadratic parse took minutes, so this test
// would time out rather than pass).
TEST(SafetensorsFormat, ParsesAHeaderOf100000Tensors) {
  constexpr int kCount = 100000;
  std::string header = "{";
  for (int i = 0; i < kCount; ++i) {
    header += (i ? "," : "") + entry("t" + std::to_string(i), "U8", "[1]",
                                     "[" + std::to_string(i) + "," + std::to_string(i + 1) + "]");
  }
  header += "}";
  const auto h = parse_safetensors(make_file(header, std::vector<uint8_t>(kCount, 7)).data(),
                                   8 + header.size() + kCount, kWhat);
  ASSERT_EQ(h.tensors.size(), static_cast<size_t>(kCount));
  std::set<std::string> names;
  for (const auto& r : h.tensors) names.insert(r.name);
  EXPECT_EQ(names.size(), static_cast<size_t>(kCount));
  EXPECT_TRUE(names.count("t99999"));
}

TEST(SafetensorsFormat, AcceptsUnpaddedHeaderAndTrailingWhitespace) {
  std::vector<uint8_t> data(4, 0);
  EXPECT_EQ(parse_error(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "}", data)), "");
  EXPECT_EQ(parse_error(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "}  \n", data)), "");
  EXPECT_EQ(parse_error(make_file("{ \"a\" : { \"shape\" : [ 1 ] , \"data_offsets\" : [0, 4],"
                                  " \"dtype\": \"F32\" } }",
                                  data)),
            "");
}

// ---------------------------------------------------------------------------
// Writer errors

TEST(SafetensorsFormat, WriterRejectsInconsistentViews) {
  const float f[2] = {1, 2};
  auto write_error = [](std::vector<TensorView> views) -> std::string {
    try {
      write_safetensors(views, {});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(write_error({{"a", DType::Float32, {3}, f, sizeof f}}).find("needs 12 bytes, got 8"),
            std::string::npos);
  EXPECT_NE(write_error({{"a", DType::Float32, {2}, f, 8}, {"a", DType::Float32, {2}, f, 8}})
                .find("duplicate tensor name 'a'"),
            std::string::npos);
  EXPECT_NE(write_error({{"__metadata__", DType::Float32, {2}, f, 8}}).find("__metadata__"),
            std::string::npos);
  EXPECT_NE(write_error({{"a", DType::Float32, {-1, 2}, f, 8}}).find("negative dimension"),
            std::string::npos);
  EXPECT_NE(write_error({{"bad\xff", DType::Float32, {2}, f, 8}}).find("not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(write_error({{"a", DType::Float32, {2}, nullptr, 8}}).find("null data"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Malformed files: each is rejected with a message naming the file, the
// tensor and the expectation.

TEST(SafetensorsMalformed, FileShorterThanTheLengthField) {
  for (size_t n = 0; n < 8; ++n) {
    std::vector<uint8_t> bytes(n, 0);
    expect_rejected(bytes, {"shorter than the 8-byte header length"});
  }
  EXPECT_THROW(parse_safetensors(nullptr, 0, kWhat), Error);
}

TEST(SafetensorsMalformed, HeaderLengthLargerThanFileOrAbsurd) {
  auto file = reference_file();
  file[0] = 0x69;  // 617: one byte more than the header, still inside the file
  expect_rejected(file, {"not valid JSON"});
  auto too_long = make_file("{}");
  too_long[0] = 3;
  expect_rejected(too_long, {"header length 3", "larger than the file"});
  auto absurd = make_file("{}");
  absurd[4] = 1;  // 2^32 + 2
  expect_rejected(absurd, {"header length 4294967298", "limit"});
  std::vector<uint8_t> all_ff(16, 0xff);
  expect_rejected(all_ff, {"header length 18446744073709551615", "limit"});
  // Exactly at the limit but larger than the file.
  auto at_limit = make_file("{}");
  uint64_t lim = kMaxSafetensorsHeader + 1;
  for (int i = 0; i < 8; ++i) at_limit[i] = static_cast<uint8_t>(lim >> (8 * i));
  expect_rejected(at_limit, {"limit"});
}

TEST(SafetensorsMalformed, HeaderNotAJsonObject) {
  expect_rejected(make_file(""), {"starting with '{'", "empty"});
  expect_rejected(make_file("[1,2]   "), {"starting with '{'"});
  expect_rejected(make_file("  {}"), {"starting with '{'"});
  expect_rejected(make_file("{\"a\":"), {"not valid JSON"});
  expect_rejected(make_file("{}x"), {"not valid JSON"});
  expect_rejected(make_file(std::string("{}\0\0\0\0\0\0", 8)), {"not valid JSON", "NUL byte at header offset 2"});
  expect_rejected(make_file(std::string("{}\0junk!", 8)), {"not valid JSON", "NUL"});
  expect_rejected(make_file("{\"a\xff\":1}"), {"not valid JSON"});  // bad UTF-8
  expect_rejected(make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}",
                            std::vector<uint8_t>(4)),
                  {"nested too deeply"});
  expect_rejected(make_file("{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}"),
                  {"nested too deeply"});
  expect_rejected(make_file(R"({"a":{"b":{"c":{}}}})"), {"nested too deeply"});
  expect_rejected(make_file(std::string(1000, '{')), {"not valid JSON"});
}

TEST(SafetensorsMalformed, EntryMissingFieldsOrWrongTypes) {
  std::vector<uint8_t> d4(4);
  auto f = [&](std::string_view body) { return make_file("{\"t\":" + std::string(body) + "}", d4); };
  expect_rejected(f("[1]"), {"tensor 't'", "must be an object", "array"});
  expect_rejected(f("\"F32\""), {"tensor 't'", "must be an object"});
  expect_rejected(f(R"({"shape":[1],"data_offsets":[0,4]})"), {"tensor 't'", "missing dtype"});
  expect_rejected(f(R"({"dtype":"F32","data_offsets":[0,4]})"), {"tensor 't'", "missing shape"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1]})"), {"tensor 't'", "missing data_offsets"});
  expect_rejected(f(R"({"dtype":32,"shape":[1],"data_offsets":[0,4]})"),
                  {"tensor 't'", "dtype must be a string", "number"});
  expect_rejected(f(R"({"dtype":"F32","shape":1,"data_offsets":[0,4]})"),
                  {"tensor 't'", "shape must be an array"});
  expect_rejected(f(R"({"dtype":"F32","shape":["1"],"data_offsets":[0,4]})"),
                  {"tensor 't'", "shape must be an array of integers", "string"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1.0],"data_offsets":[0,4]})"),
                  {"tensor 't'", "shape must be an array of integers"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":"0,4"})"),
                  {"tensor 't'", "data_offsets must be an array of two"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,4]})"),
                  {"tensor 't'", "data_offsets must be an array of two"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"),
                  {"tensor 't'", "data_offsets must be an array of two"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})"),
                  {"tensor 't'", "non-negative"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4.0]})"),
                  {"tensor 't'", "data_offsets must be an array of two"});
  expect_rejected(f(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1})"),
                  {"tensor 't'", "unexpected key 'extra'"});
}

TEST(SafetensorsMalformed, UnsupportedDTypesNameTheTensor) {
  for (std::string_view dt : {"I8", "I16", "U16", "U32", "U64", "F8_E5M2", "F8_E4M3"}) {
    SCOPED_TRACE(dt);
    expect_rejected(make_file("{" + entry("w8", dt, "[4]", "[0,4]") + "}", std::vector<uint8_t>(4)),
                    {"tensor 'w8'", "unsupported dtype", dt});
  }
  expect_rejected(make_file("{" + entry("w", "float32", "[1]", "[0,4]") + "}", std::vector<uint8_t>(4)),
                  {"tensor 'w'", "unsupported dtype 'float32'", "not a safetensors dtype"});
}

TEST(SafetensorsMalformed, BadShapes) {
  expect_rejected(make_file("{" + entry("t", "F32", "[-1,2]", "[0,0]") + "}"),
                  {"tensor 't'", "negative dimension -1"});
  expect_rejected(make_file("{" + entry("t", "F32", "[9223372036854775808]", "[0,0]") + "}"),
                  {"tensor 't'", "too large"});
  expect_rejected(make_file("{" + entry("t", "F32", "[4294967296,4294967296]", "[0,0]") + "}"),
                  {"tensor 't'", "overflows", "int64"});
  // Fits int64 elements, not int64 bytes.
  expect_rejected(make_file("{" + entry("t", "F64", "[4611686018427387904]", "[0,0]") + "}"),
                  {"tensor 't'", "overflows"});
  // A zero dim does not excuse overflowing strides.
  expect_rejected(
      make_file("{" + entry("t", "F32", "[0,4294967296,4294967296]", "[0,0]") + "}"),
      {"tensor 't'", "overflows"});
  // Huge numbers that are not integers of any JSON kind.
  expect_rejected(make_file("{" + entry("t", "F32", "[1e400]", "[0,0]") + "}"), {"not valid JSON", "1e400"});
  expect_rejected(make_file("{" + entry("t", "F32", "[99999999999999999999999]", "[0,0]") + "}"),
                  {"tensor 't'"});
}

TEST(SafetensorsMalformed, BadOffsets) {
  std::vector<uint8_t> d8(8);
  expect_rejected(make_file("{" + entry("t", "F32", "[1]", "[4,0]") + "}", d8),
                  {"tensor 't'", "data_offsets [4, 0]", "reversed"});
  expect_rejected(make_file("{" + entry("t", "F32", "[4]", "[0,16]") + "}", d8),
                  {"tensor 't'", "past the end of the data section (8 bytes)"});
  expect_rejected(make_file("{" + entry("t", "F32", "[1]", "[0,18446744073709551615]") + "}", d8),
                  {"tensor 't'", "past the end"});
  expect_rejected(make_file("{" + entry("t", "F32", "[3]", "[0,8]") + "}", d8),
                  {"tensor 't'", "hold 8 bytes", "shape [3] of F32 needs 3 x 4 = 12 bytes"});
  expect_rejected(make_file("{" + entry("t", "F16", "[2,3]", "[0,8]") + "}", d8),
                  {"tensor 't'", "needs 6 x 2 = 12 bytes"});
}

TEST(SafetensorsMalformed, OverlapsHolesAndTrailingBytes) {
  std::vector<uint8_t> d8(8), d12(12);
  expect_rejected(make_file("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                            entry("b", "F32", "[1]", "[4,8]") + "}", d8),
                  {"'a'", "'b'", "overlap"});
  // Same range twice.
  expect_rejected(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "," +
                            entry("b", "F32", "[1]", "[0,4]") + "," +
                            entry("c", "F32", "[1]", "[4,8]") + "}", d8),
                  {"'a'", "'b'", "overlap"});
  // An empty tensor inside another one's bytes.
  expect_rejected(make_file("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                            entry("e", "F32", "[0]", "[4,4]") + "}", d8),
                  {"'e'", "overlap"});
  expect_rejected(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "," +
                            entry("b", "F32", "[1]", "[8,12]") + "}", d12),
                  {"hole", "bytes [4, 8)", "'b'", "fully covered"});
  expect_rejected(make_file("{" + entry("a", "F32", "[1]", "[4,8]") + "}", d8),
                  {"hole", "bytes [0, 4)"});
  expect_rejected(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "}", d8),
                  {"8 bytes", "cover only 4", "trailing"});
  expect_rejected(make_file("{}", d8), {"8 bytes", "cover only 0"});
}

TEST(SafetensorsMalformed, DuplicateNamesAndKeys) {
  std::vector<uint8_t> d4(4);
  expect_rejected(make_file("{" + entry("a", "F32", "[1]", "[0,4]") + "," +
                            entry("a", "F32", "[1]", "[0,4]") + "}", d4),
                  {"duplicate key 'a'", "tensor names must be unique"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}})",
                            d4),
                  {"duplicate key 'dtype'"});
  expect_rejected(make_file(R"({"__metadata__":{"k":"1"},"__metadata__":{"k":"2"}})"),
                  {"duplicate key '__metadata__'"});
  expect_rejected(make_file(R"({"__metadata__":{"k":"1","k":"2"}})"), {"duplicate key 'k'"});
}

TEST(SafetensorsMalformed, MetadataMustMapStringsToStrings) {
  expect_rejected(make_file(R"({"__metadata__":["a"]})"), {"__metadata__ must be an object", "array"});
  expect_rejected(make_file(R"({"__metadata__":"a"})"), {"__metadata__ must be an object"});
  expect_rejected(make_file(R"({"__metadata__":{"k":1}})"),
                  {"__metadata__ value of key 'k' must be a string", "number"});
  expect_rejected(make_file(R"({"__metadata__":{"k":null}})"), {"key 'k'", "must be a string", "null"});
  expect_rejected(make_file(R"({"__metadata__":{"k":{"x":"y"}}})"), {"key 'k'", "must be a string"});
  EXPECT_EQ(parse_error(make_file(R"({"__metadata__":{}})")), "");
}

TEST(SafetensorsMalformed, LongNamesAreShortenedInMessages) {
  std::string name(5000, 'n');
  std::string msg = parse_error(make_file("{" + entry(name, "I8", "[1]", "[0,1]") + "}", {0}));
  EXPECT_NE(msg.find("(5000 bytes)"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u);
}

// ---------------------------------------------------------------------------
// Fuzz: random damage to a valid file only ever yields a valid header or an
// ember::Error. Each mutated input sits in a buffer of exactly its size, so a
// sanitizer build catches any read past it.

void check_accepted_invariants(const std::vector<uint8_t>& bytes, const SafetensorsHeader& h) {
  ASSERT_LE(h.data_start, bytes.size());
  size_t covered = 0;
  for (const auto& r : h.tensors) {
    ASSERT_EQ(r.offset_begin, covered);
    ASSERT_LE(r.offset_begin, r.offset_end);
    covered = r.offset_end;
  }
  ASSERT_EQ(h.data_start + covered, bytes.size());
}

TEST(SafetensorsFuzz, RandomDamageOnlyThrowsEmberError) {
  const std::vector<uint8_t> base = reference_file();
  const size_t header_end = 8 + kReferenceHeader.size();
  std::mt19937_64 rng(20240611);
  auto uniform = [&](size_t lo, size_t hi) {  // inclusive
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  const std::string_view json_chars = "{}[]\",:-0123456789e. \\u";
  int accepted = 0, rejected = 0;
  constexpr int kIterations = 5000;
  for (int it = 0; it < kIterations; ++it) {
    std::vector<uint8_t> v = base;
    int mutations = static_cast<int>(uniform(1, 3));
    for (int m = 0; m < mutations && !v.empty(); ++m) {
      switch (uniform(0, 6)) {
        case 0:  // flip a bit anywhere
          v[uniform(0, v.size() - 1)] ^= static_cast<uint8_t>(1u << uniform(0, 7));
          break;
        case 1:  // truncate
          v.resize(uniform(0, v.size() - 1));
          break;
        case 2:  // a JSON-significant character inside the header
          if (v.size() > 8) v[uniform(8, std::min(v.size(), header_end) - 1)] = json_chars[uniform(0, json_chars.size() - 1)];
          break;
        case 3:  // change a digit in the header (hits shapes and offsets)
          for (int tries = 0; tries < 50 && v.size() > 8; ++tries) {
            size_t p = uniform(8, std::min(v.size(), header_end) - 1);
            if (v[p] >= '0' && v[p] <= '9') {
              v[p] = static_cast<uint8_t>('0' + uniform(0, 9));
              break;
            }
          }
          break;
        case 4:  // damage the length field
          v[uniform(0, std::min<size_t>(v.size(), 8) - 1)] = static_cast<uint8_t>(uniform(0, 255));
          break;
        case 5:  // insert a byte into the header
          v.insert(v.begin() + static_cast<long>(uniform(std::min<size_t>(8, v.size()), std::min(v.size(), header_end))),
                   static_cast<uint8_t>(uniform(0, 255)));
          break;
        case 6:  // append bytes
          v.insert(v.end(), uniform(1, 16), static_cast<uint8_t>(uniform(0, 255)));
          break;
      }
    }
    auto exact = std::make_unique<uint8_t[]>(v.size() + (v.empty() ? 1 : 0));
    if (!v.empty()) std::memcpy(exact.get(), v.data(), v.size());
    try {
      auto h = parse_safetensors(exact.get(), v.size(), kWhat);
      ++accepted;
      check_accepted_invariants(v, h);
    } catch (const Error& e) {
      ++rejected;
      ASSERT_NE(std::string(e.what()).find("load_safetensors(test.safetensors)"), std::string::npos);
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": non-ember exception " << e.what();
    }
  }
  EXPECT_EQ(accepted + rejected, kIterations);
  EXPECT_GT(accepted, 0);  // damage to data bytes is undetectable by design
  EXPECT_GT(rejected, kIterations / 2);
}

}  // namespace
}  // namespace ember::serialize
