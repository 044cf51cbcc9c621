// libtorch's mode constants (torch::kBilinear, torch::kMean, ...), spelled as
// the strings ember's options take: `.mode(ember::kBilinear)` is
// `.mode("bilinear")`. libtorch makes each a type of its own (a variant
// member), so a constant of the wrong kind does not compile there; here it
// is a runtime ember::Error naming the option, as any other wrong string.
#pragma once

namespace ember {

// interpolate modes
inline constexpr const char* kNearest = "nearest";
inline constexpr const char* kBilinear = "bilinear";
// pad modes, and Conv's padding_mode
inline constexpr const char* kConstant = "constant";
inline constexpr const char* kReflect = "reflect";
inline constexpr const char* kReplicate = "replicate";
inline constexpr const char* kCircular = "circular";
inline constexpr const char* kZeros = "zeros";
// grid_sample's padding_mode (also kZeros)
inline constexpr const char* kBorder = "border";
inline constexpr const char* kReflection = "reflection";
// Conv padding
inline constexpr const char* kSame = "same";
inline constexpr const char* kValid = "valid";
// loss reductions
inline constexpr const char* kNone = "none";
inline constexpr const char* kMean = "mean";
inline constexpr const char* kSum = "sum";
inline constexpr const char* kBatchMean = "batchmean";
// GELU's approximation; RNN's nonlinearity (also kReLU)
inline constexpr const char* kTanh = "tanh";
inline constexpr const char* kReLU = "relu";

}  // namespace ember
