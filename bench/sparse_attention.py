"""Sparse flash attention for one decode step, written with pypto: FP16 activations, an INT8 KV cache
with per-token scales, and the top-k blocks of the cache selected per step.

    kernel = sparse_attention.kernel()          # pypto.jit
    inputs = sparse_attention.make_inputs()     # torch tensors, out last
    kernel(*inputs); sparse_attention.torch_reference(*inputs[:-1])

The cache holds NUM_BLOCKS blocks of BLOCK tokens; each block has a representative key (the mean of
its keys, FP16, kept when the block is written, as block-sparse attention methods keep one). A step:

  1. block scores: q @ block_keys^T ([heads, blocks], FP32), the best over the heads per block;
  2. pypto.topk picks the TOP_K best blocks (one selection shared by the heads);
  3. pypto.index_select gathers those blocks' INT8 keys and values and their scales;
  4. flash attention over the selected blocks, one block at a time with the online softmax (a
     running row max, a running sum and a rescaled accumulator): the scores of block j are
     (q @ k_j^T) * k_scale_j * 1/sqrt(D) (the keys' dequantization folded into the scores), and
     p_j * v_scale_j @ v_j is added to the accumulator (the values' likewise);
  5. out = accumulator / sum, rounded to FP16.

torch_reference computes the same with torch ops (torch.topk, fancy indexing, one softmax over the
selected tokens), so the two are compared in the same run.
"""

import math

import torch

import pypto

HEADS, DIM = 16, 128
NUM_BLOCKS, BLOCK = 128, 64  # an 8192-token cache
TOP_K = 8                    # 512 tokens attended
SCALE = 1.0 / math.sqrt(DIM)

FP32, FP16, INT8 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_INT8


def _t(dt):
    return pypto.Tensor([], dt)


def kernel():
    def sparse_flash_attention(q: _t(FP16), block_keys: _t(FP16), k_cache: _t(INT8),
                               v_cache: _t(INT8), k_scale: _t(FP32), v_scale: _t(FP32),
                               out: _t(FP16)):
        pypto.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
        pypto.set_vec_tile_shapes(16, 128)
        qf = pypto.cast(q, FP32)                                              # [H, D]
        scores = pypto.matmul(qf, pypto.cast(block_keys, FP32), FP32, b_trans=True)  # [H, NB]
        best = pypto.amax(scores, 0, keepdim=True)                            # [1, NB]
        _, chosen = pypto.topk(best, TOP_K, -1)                               # [1, K] int64
        chosen = pypto.reshape(chosen, [TOP_K])
        keys = pypto.index_select(k_cache, 0, chosen)                         # [K, BLOCK * D]
        values = pypto.index_select(v_cache, 0, chosen)
        k_scales = pypto.index_select(k_scale, 0, chosen)                     # [K, BLOCK]
        v_scales = pypto.index_select(v_scale, 0, chosen)
        row_max = row_sum = acc = None
        for j in range(TOP_K):
            k_j = pypto.cast(pypto.reshape(keys[j:j + 1, :], [BLOCK, DIM]), FP32)
            v_j = pypto.cast(pypto.reshape(values[j:j + 1, :], [BLOCK, DIM]), FP32)
            s = pypto.matmul(qf, k_j, FP32, b_trans=True) * (k_scales[j:j + 1, :] * SCALE)
            block_max = pypto.amax(s, -1, keepdim=True)                       # [H, 1]
            new_max = block_max if row_max is None else pypto.maximum(row_max, block_max)
            p = pypto.exp(s - new_max)                                        # [H, BLOCK]
            pv = pypto.matmul(p * v_scales[j:j + 1, :], v_j, FP32)            # [H, D]
            if row_max is None:
                row_sum, acc = pypto.sum(p, -1, keepdim=True), pv
            else:
                alpha = pypto.exp(row_max - new_max)
                row_sum = row_sum * alpha + pypto.sum(p, -1, keepdim=True)
                acc = acc * alpha + pv
            row_max = new_max
        out[:] = pypto.cast(acc / row_sum, FP16)
    return pypto.jit(sparse_flash_attention)


def make_inputs(seed=0):
    """(q, block_keys, k_cache, v_cache, k_scale, v_scale, out) as torch tensors."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(HEADS, DIM, generator=g).half()
    keys = torch.randn(NUM_BLOCKS, BLOCK, DIM, generator=g)
    keys += 2.0 * torch.randn(NUM_BLOCKS, 1, DIM, generator=g)  # blocks differ in direction
    values = torch.randn(NUM_BLOCKS, BLOCK, DIM, generator=g)

    def quantize(x):  # symmetric INT8 per token
        scale = x.abs().amax(-1) / 127.0
        return torch.round(x / scale[..., None]).clamp(-127, 127).to(torch.int8), scale

    k_int, k_scale = quantize(keys)
    v_int, v_scale = quantize(values)
    block_keys = (k_int.float() * k_scale[..., None]).mean(1).half()
    out = torch.empty(HEADS, DIM, dtype=torch.float16)
    return (q, block_keys, k_int.reshape(NUM_BLOCKS, BLOCK * DIM), v_int.reshape(NUM_BLOCKS, BLOCK * DIM),
            k_scale.float().contiguous(), v_scale.float().contiguous(), out)


def torch_reference(q, block_keys, k_cache, v_cache, k_scale, v_scale, out=None, dtype=torch.float32):
    """The same step with torch ops in `dtype`; returns FP16 (written to `out` when given)."""
    qf = q.to(dtype)
    chosen = (qf @ block_keys.to(dtype).T).amax(0).topk(TOP_K).indices
    keys = k_cache[chosen].reshape(TOP_K * BLOCK, DIM).to(dtype)
    values = v_cache[chosen].reshape(TOP_K * BLOCK, DIM).to(dtype)
    s = (qf @ keys.T) * (k_scale[chosen].reshape(1, -1).to(dtype) * SCALE)
    p = torch.softmax(s, -1) * v_scale[chosen].reshape(1, -1).to(dtype)
    result = (p @ values).half()
    if out is not None:
        out.copy_(result)
    return result

