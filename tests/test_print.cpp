// Printing: ember's text for a tensor is torch 1.13's repr (default print
// options), except that the dtype suffix reads `dtype=int32` where torch
// writes `dtype=torch.int32`.
//
// Every expected string below was printed by torch 1.13 (Debian's
// python3-torch, /usr/bin/python3) with repr() of the tensor built as the
// comment beside it says, then "torch." was removed from the dtype suffix.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "ember/ember.h"

namespace ember {
namespace {

constexpr float kNan = NAN;
constexpr float kInf = INFINITY;

TEST(Print, FloatsThatAreAllIntegersPrintWithATrailingPoint) {
  // torch.tensor([[1., 2.], [3., 4.]])
  EXPECT_EQ(tensor({1.f, 2.f, 3.f, 4.f}).view({2, 2}).to_string(),
            "tensor([[1., 2.],\n"
            "        [3., 4.]])");
  // torch.zeros(2)
  EXPECT_EQ(zeros({2}, kFloat32).to_string(), "tensor([0., 0.])");
}

TEST(Print, FloatsUseFourDecimalsAndOneColumnWidth) {
  // torch.tensor([[1.5, -2.25], [3.125, 4.0]])
  EXPECT_EQ(tensor({1.5f, -2.25f, 3.125f, 4.f}).view({2, 2}).to_string(),
            "tensor([[ 1.5000, -2.2500],\n"
            "        [ 3.1250,  4.0000]])");
}

TEST(Print, ZeroDimTensors) {
  // torch.tensor(3.5), torch.tensor(3.5, dtype=torch.float64), torch.tensor(-12)
  EXPECT_EQ(scalar_tensor(3.5).to_string(), "tensor(3.5000)");
  EXPECT_EQ(scalar_tensor(3.5, kFloat64).to_string(), "tensor(3.5000, dtype=float64)");
  EXPECT_EQ(scalar_tensor(-12).to_string(), "tensor(-12)");
}

TEST(Print, IntegersAndBoolsAlignRight) {
  // torch.tensor([-7, 0, 123], dtype=torch.int32)
  EXPECT_EQ(tensor({-7, 0, 123}, kInt32).to_string(), "tensor([ -7,   0, 123], dtype=int32)");
  // torch.tensor([[1, -20, 3], [400, 5, 6]])
  EXPECT_EQ(tensor({1, -20, 3, 400, 5, 6}).view({2, 3}).to_string(),
            "tensor([[  1, -20,   3],\n"
            "        [400,   5,   6]])");
  // torch.tensor([0, 7, 255], dtype=torch.uint8)
  EXPECT_EQ(tensor({0, 7, 255}, kUInt8).to_string(), "tensor([  0,   7, 255], dtype=uint8)");
  // torch.tensor([[True, False], [False, True]])
  EXPECT_EQ(tensor({true, false, false, true}).view({2, 2}).to_string(),
            "tensor([[ True, False],\n"
            "        [False,  True]])");
}

TEST(Print, ScientificNotationWhenTheRangeIsWide) {
  // torch.tensor([1e-5, 1.0, 100.0]): the smallest magnitude is below 1e-4
  EXPECT_EQ(tensor({1e-5f, 1.f, 100.f}).to_string(), "tensor([1.0000e-05, 1.0000e+00, 1.0000e+02])");
  // torch.tensor([1e9, 1.5]): the largest is above 1e8
  EXPECT_EQ(tensor({1e9f, 1.5f}).to_string(), "tensor([1.0000e+09, 1.5000e+00])");
  // torch.tensor([1., 10000.]): integers, but max/min > 1000
  EXPECT_EQ(tensor({1.f, 10000.f}).to_string(), "tensor([1.0000e+00, 1.0000e+04])");
  // torch.tensor([0.1, -2.5, 65504.0], dtype=torch.float16)
  EXPECT_EQ(tensor({0.1f, -2.5f, 65504.f}, kFloat16).to_string(),
            "tensor([ 9.9976e-02, -2.5000e+00,  6.5504e+04], dtype=float16)");
}

TEST(Print, NanAndInfinityTakeNoPartInTheMode) {
  // torch.tensor([nan, inf, -inf, 1.5, -0.0])
  EXPECT_EQ(tensor({kNan, kInf, -kInf, 1.5f, -0.0f}).to_string(),
            "tensor([   nan,    inf,   -inf, 1.5000, -0.0000])");
  // torch.tensor([nan, inf, -inf])
  EXPECT_EQ(tensor({kNan, kInf, -kInf}).to_string(), "tensor([nan, inf, -inf])");
  // torch.tensor([nan, 1., -3.])
  EXPECT_EQ(tensor({kNan, 1.f, -3.f}).to_string(), "tensor([nan,  1., -3.])");
  // A NaN with the sign bit set prints as nan too (Python never writes -nan).
  EXPECT_EQ(tensor({-kNan, 0.5f}).to_string(), "tensor([   nan, 0.5000])");
}

TEST(Print, EmptyTensorsShowTheirSizeAndDType) {
  // torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64), torch.zeros(0),
  // torch.zeros(2, 0, 1, dtype=torch.float64), torch.zeros(0, dtype=torch.bool)
  EXPECT_EQ(zeros({0, 3}, kFloat32).to_string(), "tensor([], size=(0, 3))");
  EXPECT_EQ(zeros({0}, kInt64).to_string(), "tensor([], dtype=int64)");
  EXPECT_EQ(zeros({0}, kFloat32).to_string(), "tensor([])");
  EXPECT_EQ(zeros({2, 0, 1}, kFloat64).to_string(), "tensor([], size=(2, 0, 1), dtype=float64)");
  EXPECT_EQ(zeros({0}, kBool).to_string(), "tensor([], dtype=bool)");
}

TEST(Print, RowsWrapAtEightyColumns) {
  // torch.arange(30.) / 3
  EXPECT_EQ(arange(30.0).div(3).to_string(),
            "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
            "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
            "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667,\n"
            "        9.0000, 9.3333, 9.6667])");
  // torch.arange(12, dtype=torch.float64) * 1000.5: the suffix moves to its own line
  EXPECT_EQ(arange(12, kFloat64).mul(1000.5).to_string(),
            "tensor([    0.0000,  1000.5000,  2001.0000,  3001.5000,  4002.0000,  5002.5000,\n"
            "         6003.0000,  7003.5000,  8004.0000,  9004.5000, 10005.0000, 11005.5000],\n"
            "       dtype=float64)");
}

TEST(Print, ThreeDimsAreSeparatedByBlankLines) {
  // torch.arange(12.).reshape(2, 2, 3) - 5.5
  EXPECT_EQ(arange(12.0).reshape({2, 2, 3}).sub(5.5).to_string(),
            "tensor([[[-5.5000, -4.5000, -3.5000],\n"
            "         [-2.5000, -1.5000, -0.5000]],\n"
            "\n"
            "        [[ 0.5000,  1.5000,  2.5000],\n"
            "         [ 3.5000,  4.5000,  5.5000]]])");
}

TEST(Print, NonContiguousTensorsPrintTheirLogicalOrder) {
  // torch.arange(6.).reshape(2, 3).t() * 0.5, printed from the transposed view
  // (torch prints the same for the view before the multiplication).
  Tensor t = arange(6.0).mul(0.5).reshape({2, 3}).t();
  ASSERT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_string(),
            "tensor([[0.0000, 1.5000],\n"
            "        [0.5000, 2.0000],\n"
            "        [1.0000, 2.5000]])");
  // torch.tensor([1.5]).expand(2, 3): stride 0
  EXPECT_EQ(tensor({1.5f}).expand({2, 3}).to_string(),
            "tensor([[1.5000, 1.5000, 1.5000],\n"
            "        [1.5000, 1.5000, 1.5000]])");
}

TEST(Print, ReducedPrecisionFloatsPrintTheirValues) {
  // torch.tensor([0.1, 1.0, -3.0], dtype=torch.bfloat16)
  EXPECT_EQ(tensor({0.1f, 1.f, -3.f}, kBFloat16).to_string(), "tensor([ 0.1001,  1.0000, -3.0000], dtype=bfloat16)");
}

TEST(Print, LargeTensorsAreSummarisedWithEdgeItems) {
  // torch.arange(1001)
  EXPECT_EQ(arange(1001).to_string(), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  // (torch.arange(1200.) - 600) * 1e-6: the mode is chosen from the shown values only
  EXPECT_EQ(arange(1200.0).sub(600).mul(1e-6).to_string(),
            "tensor([-0.0006, -0.0006, -0.0006,  ...,  0.0006,  0.0006,  0.0006])");
  // torch.arange(2000.).reshape(40, 50) / 7
  EXPECT_EQ(arange(2000.0).reshape({40, 50}).div(7).to_string(),
            "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 6.7143e+00, 6.8571e+00,\n"
            "         7.0000e+00],\n"
            "        [7.1429e+00, 7.2857e+00, 7.4286e+00,  ..., 1.3857e+01, 1.4000e+01,\n"
            "         1.4143e+01],\n"
            "        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.1000e+01, 2.1143e+01,\n"
            "         2.1286e+01],\n"
            "        ...,\n"
            "        [2.6429e+02, 2.6443e+02, 2.6457e+02,  ..., 2.7100e+02, 2.7114e+02,\n"
            "         2.7129e+02],\n"
            "        [2.7143e+02, 2.7157e+02, 2.7171e+02,  ..., 2.7814e+02, 2.7829e+02,\n"
            "         2.7843e+02],\n"
            "        [2.7857e+02, 2.7871e+02, 2.7886e+02,  ..., 2.8529e+02, 2.8543e+02,\n"
            "         2.8557e+02]])");
}

TEST(Print, SummarisedThreeDimTensor) {
  // torch.arange(1100, dtype=torch.int32).reshape(11, 10, 10)
  const std::string expected =
      "tensor([[[   0,    1,    2,  ...,    7,    8,    9],\n"
      "         [  10,   11,   12,  ...,   17,   18,   19],\n"
      "         [  20,   21,   22,  ...,   27,   28,   29],\n"
      "         ...,\n"
      "         [  70,   71,   72,  ...,   77,   78,   79],\n"
      "         [  80,   81,   82,  ...,   87,   88,   89],\n"
      "         [  90,   91,   92,  ...,   97,   98,   99]],\n"
      "\n"
      "        [[ 100,  101,  102,  ...,  107,  108,  109],\n"
      "         [ 110,  111,  112,  ...,  117,  118,  119],\n"
      "         [ 120,  121,  122,  ...,  127,  128,  129],\n"
      "         ...,\n"
      "         [ 170,  171,  172,  ...,  177,  178,  179],\n"
      "         [ 180,  181,  182,  ...,  187,  188,  189],\n"
      "         [ 190,  191,  192,  ...,  197,  198,  199]],\n"
      "\n"
      "        [[ 200,  201,  202,  ...,  207,  208,  209],\n"
      "         [ 210,  211,  212,  ...,  217,  218,  219],\n"
      "         [ 220,  221,  222,  ...,  227,  228,  229],\n"
      "         ...,\n"
      "         [ 270,  271,  272,  ...,  277,  278,  279],\n"
      "         [ 280,  281,  282,  ...,  287,  288,  289],\n"
      "         [ 290,  291,  292,  ...,  297,  298,  299]],\n"
      "\n"
      "        ...,\n"
      "\n"
      "        [[ 800,  801,  802,  ...,  807,  808,  809],\n"
      "         [ 810,  811,  812,  ...,  817,  818,  819],\n"
      "         [ 820,  821,  822,  ...,  827,  828,  829],\n"
      "         ...,\n"
      "         [ 870,  871,  872,  ...,  877,  878,  879],\n"
      "         [ 880,  881,  882,  ...,  887,  888,  889],\n"
      "         [ 890,  891,  892,  ...,  897,  898,  899]],\n"
      "\n"
      "        [[ 900,  901,  902,  ...,  907,  908,  909],\n"
      "         [ 910,  911,  912,  ...,  917,  918,  919],\n"
      "         [ 920,  921,  922,  ...,  927,  928,  929],\n"
      "         ...,\n"
      "         [ 970,  971,  972,  ...,  977,  978,  979],\n"
      "         [ 980,  981,  982,  ...,  987,  988,  989],\n"
      "         [ 990,  991,  992,  ...,  997,  998,  999]],\n"
      "\n"
      "        [[1000, 1001, 1002,  ..., 1007, 1008, 1009],\n"
      "         [1010, 1011, 1012,  ..., 1017, 1018, 1019],\n"
      "         [1020, 1021, 1022,  ..., 1027, 1028, 1029],\n"
      "         ...,\n"
      "         [1070, 1071, 1072,  ..., 1077, 1078, 1079],\n"
      "         [1080, 1081, 1082,  ..., 1087, 1088, 1089],\n"
      "         [1090, 1091, 1092,  ..., 1097, 1098, 1099]]], dtype=int32)";
  EXPECT_EQ(arange(1100, kInt32).reshape({11, 10, 10}).to_string(), expected);
}

TEST(Print, StreamOperatorWritesTheSameText) {
  Tensor t = tensor({1.5f, -2.f});
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), t.to_string());
  EXPECT_EQ(os.str(), "tensor([ 1.5000, -2.0000])");  // torch.tensor([1.5, -2.])
}

TEST(Print, UndefinedTensor) {
  Tensor t;
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), "[ Tensor (undefined) ]");
  EXPECT_EQ(t.to_string(), "[ Tensor (undefined) ]");
}

}  // namespace
}  // namespace ember
