// ember::nn::functional unfold and fold (include/ember/nn/functional/fold.h):
// what torch.nn.functional does before its op, making every int-list
// argument two values, then the dispatched im2col / col2im
// (core/op_decls_conv.h), which check the rest.
#include <string>
#include <vector>

#include "core/op_decls_conv.h"
#include "ember/nn/functional/fold.h"
#include "ember/nn/modules/int_list.h"

namespace ember::nn::functional {

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const std::string op = "unfold";
  return op::im2col.call(input, detail::per_dim(op, "kernel_size", kernel_size, 2),
                         detail::per_dim(op, "dilation", dilation, 2), detail::per_dim(op, "padding", padding, 2),
                         detail::per_dim(op, "stride", stride, 2));
}

Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
            IntArrayRef padding, IntArrayRef stride) {
  const std::string op = "fold";
  return op::col2im.call(input, detail::per_dim(op, "output_size", output_size, 2),
                         detail::per_dim(op, "kernel_size", kernel_size, 2),
                         detail::per_dim(op, "dilation", dilation, 2), detail::per_dim(op, "padding", padding, 2),
                         detail::per_dim(op, "stride", stride, 2));
}

}  // namespace ember::nn::functional
