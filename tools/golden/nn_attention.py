"""Golden cases of the attention family: scaled_dot_product_attention
(forward and gradients). Runners: tests/golden_nn_attention.cpp.

Made with PyTorch's own F.scaled_dot_product_attention, which torch 1.13
lacks: run this family with torch >= 2.5 (see tools/golden/README.md), whose
semantics ember follows (bool mask: True attends; float mask: added;
is_causal: ones(L, S).tril(), aligned top-left; a query whose keys are all
masked gives zeros and zero gradients)."""

import torch
import torch.nn.functional as F

from make_golden import randint, randn
from nn_golden import NnGoldenFile, require_torch

F32, F64, BF16 = torch.float32, torch.float64, torch.bfloat16
SUFFIX = {F32: "f32", F64: "f64", BF16: "bf16"}


def bool_mask(name, shape, empty_row=None):
    """True with probability ~3/4; key 0 always attended unless the row is `empty_row`."""
    m = randint(name, shape, 0, 4) > 0
    m[..., 0] = True
    if empty_row is not None:
        m[..., empty_row, :] = False
    return m


def build():
    require_torch((2, 5), "attention")
    g = NnGoldenFile("attention")

    def case(name, q, k, v, mask=None, causal=False, scale=None, transpose_q=False, grads=True, **tol):
        inputs = [q, k, v] + ([mask] if mask is not None else [])
        args = {"mask": mask is not None, "causal": causal, "scale": scale, "transpose_q": transpose_q}

        def fn(q, k, v, mask=None):
            return F.scaled_dot_product_attention(q.transpose(-2, -1) if transpose_q else q, k, v, attn_mask=mask,
                                                  is_causal=causal, scale=scale)

        want = [0, 1, 2] + ([3] if mask is not None and mask.dtype != torch.bool else [])
        g.nn_case(name, "scaled_dot_product_attention", fn, inputs, args, grads=want if grads else (), **tol)

    for dt in (F32, F64, BF16):
        s = SUFFIX[dt]
        case(f"basic_{s}", randn(f"q_basic_{s}", [2, 3, 5, 8], dt), randn(f"k_basic_{s}", [2, 3, 7, 8], dt),
             randn(f"v_basic_{s}", [2, 3, 7, 6], dt))
        case(f"causal_{s}", randn(f"q_causal_{s}", [1, 2, 9, 8], dt), randn(f"k_causal_{s}", [1, 2, 9, 8], dt),
             randn(f"v_causal_{s}", [1, 2, 9, 4], dt), causal=True)
        case(f"bool_mask_{s}", randn(f"q_bmask_{s}", [2, 2, 4, 8], dt), randn(f"k_bmask_{s}", [2, 2, 6, 8], dt),
             randn(f"v_bmask_{s}", [2, 2, 6, 8], dt), bool_mask(f"m_bmask_{s}", [4, 6]))
    # float32: odd shapes, every argument
    case("batch1_f32", randn("q_b1", [1, 1, 3, 5]), randn("k_b1", [1, 1, 4, 5]), randn("v_b1", [1, 1, 4, 7]))
    case("rank3_f32", randn("q_r3", [3, 4, 6]), randn("k_r3", [3, 5, 6]), randn("v_r3", [3, 5, 2]))
    case("causal_more_queries_f32", randn("q_cmq", [2, 1, 7, 4]), randn("k_cmq", [2, 1, 3, 4]),
         randn("v_cmq", [2, 1, 3, 4]), causal=True)
    case("causal_more_keys_f32", randn("q_cmk", [2, 1, 3, 4]), randn("k_cmk", [2, 1, 8, 4]),
         randn("v_cmk", [2, 1, 8, 4]), causal=True)
    case("float_mask_f32", randn("q_fm", [2, 2, 4, 8]), randn("k_fm", [2, 2, 5, 8]), randn("v_fm", [2, 2, 5, 3]),
         randn("m_fm", [1, 2, 1, 5]))
    case("float_mask_f64", randn("q_fm64", [1, 2, 4, 8], F64), randn("k_fm64", [1, 2, 5, 8], F64),
         randn("v_fm64", [1, 2, 5, 3], F64), randn("m_fm64", [4, 5], F64))
    case("bool_mask_per_head_f32", randn("q_bmh", [2, 3, 4, 8]), randn("k_bmh", [2, 3, 5, 8]),
         randn("v_bmh", [2, 3, 5, 8]), bool_mask("m_bmh", [2, 3, 4, 5]))
    case("scale_f32", randn("q_sc", [1, 2, 4, 6]), randn("k_sc", [1, 2, 5, 6]), randn("v_sc", [1, 2, 5, 6]),
         scale=0.3)
    case("broadcast_kv_heads_f32", randn("q_mq", [2, 4, 5, 8]), randn("k_mq", [2, 1, 6, 8]),
         randn("v_mq", [2, 1, 6, 8]))
    case("transposed_q_f32", randn("q_tr", [2, 2, 8, 5]), randn("k_tr", [2, 2, 6, 8]), randn("v_tr", [2, 2, 6, 4]),
         transpose_q=True)
    case("large_scores_f32", randn("q_big", [1, 1, 6, 8], F32, 40.0), randn("k_big", [1, 1, 7, 8]),
         randn("v_big", [1, 1, 7, 4]), grad_rtol=1e-4, grad_atol=1e-4)
    # several query and key blocks of the fused kernels (128 x 128 forward, 128 x 64 backward tiles)
    case("blocks_causal_f32", randn("q_blk", [1, 1, 160, 16]), randn("k_blk", [1, 1, 160, 16]),
         randn("v_blk", [1, 1, 160, 16]), causal=True, rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-4)
    # a row with every key masked: zeros and zero gradients (torch >= 2.5)
    case("masked_row_f32", randn("q_mr", [1, 1, 3, 4]), randn("k_mr", [1, 1, 4, 4]), randn("v_mr", [1, 1, 4, 4]),
         bool_mask("m_mr", [3, 4], empty_row=1))
    float_row = randn("m_mrf", [3, 4])
    float_row[2] = float("-inf")
    case("masked_row_float_mask_f32", randn("q_mrf", [1, 1, 3, 4]), randn("k_mrf", [1, 1, 4, 4]),
         randn("v_mrf", [1, 1, 4, 4]), float_row, grads=False)
    return g
