"""Chapter 13's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

_ATTENTION = '''
class MyAttentionFunction(mg.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask):
        scale = SCALE
        scores = q @ np.swapaxes(k, -1, -2) * scale
        if mask is not None and MASK_BEFORE:
            scores = np.where(mask, scores, FILL)
        e = np.exp(scores - scores.max(axis=AXIS, keepdims=True))
        weights = e / e.sum(axis=AXIS, keepdims=True)
        if mask is not None and not MASK_BEFORE:
            weights = weights * mask
        ctx.save_for_backward(q, k, v, weights)
        ctx.scale = scale
        return weights @ v

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, weights = ctx.saved_tensors
        grad_v = np.swapaxes(weights, -1, -2) @ grad_output
        grad_weights = grad_output @ np.swapaxes(v, -1, -2)
        grad_scores = GRAD_SCORES
        grad_q = grad_scores @ k * ctx.scale
        grad_k = GRAD_K @ q * ctx.scale
        return grad_q, grad_k, grad_v, None
'''

_RIGHT_SCORES = ("weights * (grad_weights - (grad_weights * weights).sum(axis=-1, "
                 "keepdims=True))")


def _attention(scale="1 / math.sqrt(q.shape[-1])", axis="-1", mask_before="True",
               grad_scores=_RIGHT_SCORES, fill="-np.inf",
               grad_k="np.swapaxes(grad_scores, -1, -2)"):
    return (_ATTENTION.replace("SCALE", scale).replace("AXIS", axis)
            .replace("MASK_BEFORE", mask_before).replace("GRAD_SCORES", grad_scores)
            .replace("FILL", fill).replace("GRAD_K", grad_k))


_MULTIHEAD = '''
class MyMultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(
            nn.init.xavier_uniform_(mg.empty(3 * embed_dim, embed_dim)))
        self.in_proj_bias = nn.Parameter(mg.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, is_causal=False):
        n, length, e = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)

        def split(t):
            return SPLIT

        q, k, v = split(qkv[..., :e]), split(qkv[..., e:2 * e]), split(qkv[..., 2 * e:])
        heads = ATTEND
        return self.out_proj(heads.transpose(1, 2).reshape(n, length, e))
'''

_RIGHT_SPLIT = "t.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)"


def _multihead(split=_RIGHT_SPLIT, causal="is_causal",
               attend="F.scaled_dot_product_attention(q, k, v, is_causal=CAUSAL)"):
    return _MULTIHEAD.replace("ATTEND", attend).replace("SPLIT", split).replace("CAUSAL",
                                                                                causal)


_BLOCK = '''
class MyTransformerBlock(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        self.self_attn = MyMultiheadAttention(d_model, nhead)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, is_causal=False):
        FORWARD
'''


def _block(forward):
    return _BLOCK.replace("FORWARD", forward)


MISTAKES = {
    "attention-not-scaled": ("my_attention", _attention(scale="1.0"),
                             "the scores are not scaled"),
    "attention-scaled-by-d": ("my_attention", _attention(scale="1 / q.shape[-1]"),
                              "divided by d instead of sqrt(d)"),
    "attention-softmax-over-queries": ("my_attention", _attention(axis="-2"),
                                       "the softmax runs over the wrong axis"),
    "attention-mask-after-softmax": ("my_attention", _attention(mask_before="False"),
                                     "the mask was applied after the softmax"),
    "attention-softmax-backward-one-term": ("my_attention",
                                            _attention(grad_scores="weights * grad_weights"),
                                            "the softmax's backward is missing its second term"),
    "attention-mask-filled-with-zero": ("my_attention", _attention(fill="0.0"),
                                        "the forbidden scores were set to 0"),
    "attention-dk-not-transposed": ("my_attention", _attention(grad_k="grad_scores"),
                                    "dk uses dS instead of its transpose"),
    "causal-mask-float": ("causal_mask", '''
def causal_mask(size):
    return np.tri(size)
''', "the mask must be a bool array"),
    "causal-mask-future": ("causal_mask", '''
def causal_mask(size):
    return np.triu(np.ones((size, size), dtype=bool))
''', "lets each position see the FUTURE"),
    "causal-mask-no-diagonal": ("causal_mask", '''
def causal_mask(size):
    return np.tril(np.ones((size, size), dtype=bool), k=-1)
''', "the diagonal is masked too"),
    "multihead-reshape-without-transpose": (
        "my_multihead_attention",
        _multihead(split="t.reshape(n, self.num_heads, length, self.head_dim)"),
        "the heads were split by a reshape alone"),
    "multihead-causal-forgotten": ("my_multihead_attention", _multihead(causal="False"),
                                   "the causal mask was forgotten"),
    "multihead-mask-the-wrong-way-round": (
        "my_multihead_attention",
        _multihead(attend="F.scaled_dot_product_attention(q, k, v, attn_mask=np.triu(np.ones("
                          "(length, length), dtype=bool), 1) if is_causal else None)"),
        "the causal mask is the wrong way round"),
    "block-post-norm": ("my_transformer_block", _block(
        '''x = self.norm1(x + self.self_attn(x, is_causal))
        return self.norm2(x + self.linear2(F.relu(self.linear1(x))))'''),
        "that is a post-norm block"),
    "block-residual-forgotten": ("my_transformer_block", _block(
        '''x = self.self_attn(self.norm1(x), is_causal)
        return x + self.linear2(F.relu(self.linear1(self.norm2(x))))'''),
        "the residual connection around the attention was forgotten"),
    "block-causal-forgotten": ("my_transformer_block", _block(
        '''x = x + self.self_attn(self.norm1(x))
        return x + self.linear2(F.relu(self.linear1(self.norm2(x))))'''),
        "the causal mask was forgotten"),
    "block-norm1-twice": ("my_transformer_block", _block(
        '''x = x + self.self_attn(self.norm1(x), is_causal)
        return x + self.linear2(F.relu(self.linear1(self.norm1(x))))'''),
        "the feed-forward part was given norm1(x)"),
    "attention-unstable-softmax": ("my_attention", _attention().replace(
        "np.exp(scores - scores.max(axis=-1, keepdims=True))", "np.exp(scores)"),
        "the softmax overflows on large scores"),
    "multihead-interleaved-qkv": ("my_multihead_attention", _multihead().replace(
        "split(qkv[..., :e]), split(qkv[..., e:2 * e]), split(qkv[..., 2 * e:])",
        "split(qkv[..., 0::3]), split(qkv[..., 1::3]), split(qkv[..., 2::3])"),
        "were taken interleaved"),
    # a wrong MyMultiheadAttention under a right MyTransformerBlock: the block's check
    # passes with the reference attention and says to fix exercise 3 first
    "multihead-scaled-twice": ("my_multihead_attention", _multihead(
        attend="F.scaled_dot_product_attention(q / math.sqrt(self.head_dim), k, v, "
               "is_causal=is_causal)"),
        "fix exercise 3 (`my_multihead_attention`) first"),
}
