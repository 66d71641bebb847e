"""Chapter 13 (attention and a tiny transformer): the chapter's reference answers against
PyTorch (F.scaled_dot_product_attention with and without is_causal, nn.MultiheadAttention
and a pre-norm nn.TransformerEncoderLayer with the same weights), what its prose claims,
and the checks of its exercises, each of which must name its classic mistakes
(minigrad/exercises/attention.py)."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.exercises import check_module
from minigrad.exercises.attention import (BLOCK_MISTAKES, CAUSAL_MASK_ADDITIVE,
                                          CAUSAL_MASK_MISTAKES, CAUSAL_MASK_NOT_BOOL,
                                          GRAD_K_NOT_TRANSPOSED, MULTIHEAD_MISTAKES,
                                          PreNormBlock, SelfAttention, attention_cases,
                                          attention_gradients, attention_mistakes,
                                          causal_mask_reference,
                                          check_attention, check_causal_mask)
from minigrad.function import Context

CHAPTER = (pathlib.Path(__file__).resolve().parents[1] / "notebooks"
           / "13_attention_and_transformer.ipynb")


def _answers() -> dict:
    """The chapter's solution cells, run: MyAttentionFunction, causal_mask,
    MyMultiheadAttention, MyTransformerBlock."""
    namespace = {"mg": mg, "np": np, "nn": nn, "F": F, "math": math}
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)
    return namespace


ANSWERS = _answers()


def _words(error: pytest.ExceptionInfo) -> str:
    return " ".join(str(error.value).split())


# --- the reference answers, against PyTorch -------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_the_attention_answer_has_pytorch_s_values_and_gradients(torch, causal):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 6, 4)) for _ in range(3))
    g = rng.standard_normal((2, 3, 6, 4))
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    out.backward(torch.tensor(g))
    mask = ANSWERS["causal_mask"](6) if causal else None
    mine = [mg.tensor(a, requires_grad=True) for a in (q, k, v)]
    result = ANSWERS["MyAttentionFunction"].apply(*mine, mask)
    (result * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(result.detach().numpy(), out.detach().numpy(), rtol=1e-10)
    for tensor, theirs in zip(mine, (tq, tk, tv)):
        np.testing.assert_allclose(tensor.grad.numpy(), theirs.grad.numpy(), rtol=1e-9,
                                   atol=1e-12)
    right = attention_gradients(q, k, v, mask, g)
    for tensor, gradient in zip(mine, right):
        np.testing.assert_allclose(gradient, tensor.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_the_causal_mask_is_pytorch_s_is_causal(torch):
    for size in (1, 4, 7):
        expected = torch.ones(size, size, dtype=torch.bool).tril().numpy()
        np.testing.assert_array_equal(ANSWERS["causal_mask"](size), expected)
        np.testing.assert_array_equal(causal_mask_reference(size), expected)
        # nn.Transformer's square subsequent mask is the same, as a float: -inf above
        square = torch.nn.Transformer.generate_square_subsequent_mask(size).numpy()
        np.testing.assert_array_equal(np.isneginf(square), ~expected)


def _torch_mha(torch, state: dict, embed_dim: int, num_heads: int):
    layer = torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
    layer.load_state_dict({k: torch.tensor(np.asarray(v.numpy())) for k, v in state.items()})
    return layer


@pytest.mark.parametrize("causal", [False, True])
def test_the_multihead_answer_equals_pytorch_s_with_the_same_weights(torch, causal):
    mine = ANSWERS["MyMultiheadAttention"](8, 2)
    reference = SelfAttention(8, 2)  # parameters moved: biases not zero
    mine.load_state_dict(reference.state_dict())
    theirs = _torch_mha(torch, mine.state_dict(), 8, 2)
    x = np.random.default_rng(1).standard_normal((3, 5, 8)).astype(np.float32)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(1) if causal else None
    expected = theirs(*[torch.tensor(x)] * 3, attn_mask=mask, need_weights=False)[0]
    got = mine(mg.tensor(x), causal).detach().numpy()
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(reference(mg.tensor(x), causal).detach().numpy(),
                               expected.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_pytorch_s_state_dict_keys_are_the_chapter_s(torch):
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    assert list(ANSWERS["MyMultiheadAttention"](8, 2).state_dict()) \
        == list(theirs.state_dict())
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)
    assert set(ANSWERS["MyTransformerBlock"](8, 2, 16).state_dict()) \
        == set(layer.state_dict())


@pytest.mark.parametrize("causal", [False, True])
def test_the_block_answer_equals_pytorch_s_pre_norm_encoder_layer(torch, causal):
    mine = ANSWERS["MyTransformerBlock"](8, 2, 16)
    mine.load_state_dict(PreNormBlock(8, 2, 16).state_dict())
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                              norm_first=True)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
    theirs.eval()
    x = np.random.default_rng(2).standard_normal((2, 6, 8)).astype(np.float32)
    mask = torch.ones(6, 6, dtype=torch.bool).triu(1) if causal else None
    expected = theirs(torch.tensor(x), src_mask=mask, is_causal=causal).detach().numpy()
    np.testing.assert_allclose(mine(mg.tensor(x), causal).detach().numpy(), expected,
                               rtol=1e-4, atol=1e-5)


def test_post_norm_is_pytorch_s_default_and_differs_from_pre_norm(torch):
    x = np.random.default_rng(3).standard_normal((2, 4, 8)).astype(np.float32)
    pre = PreNormBlock(8, 2, 16)
    post = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    assert post.norm_first is False
    post.load_state_dict({k: torch.tensor(v.numpy()) for k, v in pre.state_dict().items()})
    post.eval()
    wrong = BLOCK_MISTAKES[next(s for s in BLOCK_MISTAKES if "post-norm" in s)](8, 2, 16)
    wrong.load_state_dict(pre.state_dict())
    np.testing.assert_allclose(wrong(mg.tensor(x)).detach().numpy(),
                               post(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert not np.allclose(pre(mg.tensor(x)).detach().numpy(),
                           post(torch.tensor(x)).detach().numpy(), atol=1e-3)


def test_the_scale_claims_of_section_1():
    """Raw scores spread like sqrt(d); divided by sqrt(d) their spread is about 1."""
    rng = np.random.default_rng(4)
    for d in (4, 64, 1024):
        scores = rng.standard_normal((2000, d)) @ rng.standard_normal((16, d)).T
        assert 0.8 * math.sqrt(d) < scores.std() < 1.25 * math.sqrt(d)
        assert 0.8 < (scores / math.sqrt(d)).std() < 1.25


def test_masking_after_the_softmax_breaks_the_row_sums():
    scores = np.random.default_rng(5).standard_normal((4, 4))
    mask = causal_mask_reference(4)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    assert (weights * mask).sum(-1)[:3].max() < 1 - 1e-3
    masked = np.where(mask, scores, -np.inf)
    np.testing.assert_allclose((np.exp(masked) / np.exp(masked).sum(-1, keepdims=True))
                               .sum(-1), 1)


# --- the checks name each mistake ------------------------------------------------------------

CASES = attention_cases()
_check_attention = check_attention


def _wrong_attention(output=None, gradients=None, mask_only=False):
    """A Function with the given (wrong) output or gradients, the rest right
    (``mask_only``: the output is wrong only where there is a mask)."""
    right = ANSWERS["MyAttentionFunction"]

    class WrongAttention(mg.Function):
        @staticmethod
        def forward(ctx, q, k, v, mask):
            ctx.save_for_backward(q, k, v)
            ctx.mask = mask
            if output is not None and (mask is not None or not mask_only):
                return output(q, k, v, mask)
            return right.forward(Context(), q, k, v, mask)

        @staticmethod
        def backward(ctx, grad_output):
            q, k, v = ctx.saved_tensors
            make = gradients or (lambda *a: attention_gradients(*a))
            return make(q, k, v, ctx.mask, grad_output)

    return WrongAttention


def test_the_attention_check_passes_the_answer_and_fails_a_blank_stub():
    _check_attention(ANSWERS["MyAttentionFunction"])
    _check_attention(_wrong_attention())

    def blank(*arrays):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        _check_attention(_wrong_attention(output=blank))


@pytest.mark.parametrize("mistake", list(attention_mistakes(np.ones((1, 1), bool))))
def test_the_attention_check_names_each_mistake(mistake):
    made = attention_mistakes(np.ones((1, 1), bool))[mistake]
    mask_only = mistake not in attention_mistakes()
    wrong = _wrong_attention(output=made.make, mask_only=mask_only) \
        if hasattr(made, "make") else _wrong_attention(gradients=made)
    with pytest.raises(AssertionError) as error:
        _check_attention(wrong)
    # a missing transpose raises on the first case (L != S); the check then runs the
    # Function on square shapes, where it is named
    assert mistake[:50] in _words(error)


def _student_attention(forward_line: str, backward_line: str = "", mask_line: str = ""):
    """A student's Function (its source in a file, so that the check can quote its
    line), right but for the lines given."""
    source = f'''
class StudentAttention(mg.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask):
        s = {forward_line or "q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])"}
        if mask is not None:
            {mask_line or "s = np.where(mask, s, -np.inf)"}
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        a = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(q, k, v, a)
        return a @ v

    @staticmethod
    def backward(ctx, g):
        q, k, v, a = ctx.saved_tensors
        ds = a * ((g @ np.swapaxes(v, -1, -2))
                  - ((g @ np.swapaxes(v, -1, -2)) * a).sum(axis=-1, keepdims=True))
        dk = {backward_line or "np.swapaxes(ds, -1, -2) @ q / math.sqrt(q.shape[-1])"}
        return ds @ k / math.sqrt(q.shape[-1]), dk, np.swapaxes(a, -1, -2) @ g, None
'''
    import linecache
    name = f"<student attention {abs(hash(source))}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"mg": mg, "np": np, "math": math}
    exec(compile(source, name, "exec"), namespace)
    return namespace["StudentAttention"]


def test_a_missing_transpose_is_explained_with_the_sizes_and_named():
    """L != S: the product raises; the message gives the sizes, each gradient's shape,
    the student's line, and the mistake found on square shapes."""
    with pytest.raises(AssertionError) as error:
        _check_attention(_student_attention("", backward_line="ds @ q / math.sqrt(q.shape[-1])"))
    words = _words(error)
    assert "backward raised ValueError" in words and "dk = ds @ q" in words
    assert "L = 3 queries, S = 5 keys, d = 4, d_v = 6" in words
    assert "dk (..., 5, 4)" in words
    assert GRAD_K_NOT_TRANSPOSED[:50] in words
    assert "The order matters" not in words  # the named mistake replaces the general rule


def test_k_dot_T_on_a_batch_is_named():
    with pytest.raises(AssertionError) as error:
        _check_attention(_student_attention("q @ k.T / math.sqrt(q.shape[-1])"))
    words = _words(error)
    assert "forward raised ValueError" in words and "reverses ALL its axes" in words
    assert "grad_output @ b.T" not in words  # no backward's rule for a forward


def test_a_mask_used_as_a_boolean_index_is_explained():
    with pytest.raises(AssertionError) as error:
        _check_attention(_student_attention("", mask_line="s[~mask] = -np.inf"))
    assert "a boolean index does not broadcast" in _words(error)


@pytest.mark.parametrize("mask, sentence", [
    (lambda size: np.tril(np.ones((size, size))), CAUSAL_MASK_NOT_BOOL),
    (lambda size: np.tri(size, dtype=int), CAUSAL_MASK_NOT_BOOL),
    (lambda size: np.triu(np.full((size, size), -np.inf), k=1), CAUSAL_MASK_ADDITIVE),
])
def test_the_causal_mask_check_wants_a_bool_mask(mask, sentence):
    """A float 0/1 mask has the right values, but F.scaled_dot_product_attention (as
    PyTorch's) adds a float mask to the scores: it would mask nothing."""
    q = mg.randn(4, 3)
    assert not np.allclose(F.scaled_dot_product_attention(q, q, q, attn_mask=np.tri(4)).numpy(),
                           F.scaled_dot_product_attention(q, q, q, is_causal=True).numpy())
    with pytest.raises(AssertionError) as error:
        check_causal_mask(mask)
    assert sentence[:50] in _words(error)


@pytest.mark.parametrize("mistake", list(CAUSAL_MASK_MISTAKES))
def test_the_causal_mask_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        check_causal_mask(CAUSAL_MASK_MISTAKES[mistake])
    assert mistake[:50] in _words(error)
    check_causal_mask(ANSWERS["causal_mask"])


def test_the_module_checks_pass_the_answers():
    check_module(ANSWERS["MyMultiheadAttention"], SelfAttention, args=(8, 2),
                 inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=MULTIHEAD_MISTAKES)
    check_module(ANSWERS["MyTransformerBlock"], PreNormBlock, args=(8, 2, 16),
                 inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=BLOCK_MISTAKES)


@pytest.mark.parametrize("mistake", list(MULTIHEAD_MISTAKES))
def test_the_multihead_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        check_module(MULTIHEAD_MISTAKES[mistake], SelfAttention, args=(8, 2),
                     inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=MULTIHEAD_MISTAKES)
    assert mistake[:50] in _words(error)


@pytest.mark.parametrize("mistake", list(BLOCK_MISTAKES))
def test_the_block_check_names_each_mistake(mistake):
    with pytest.raises(AssertionError) as error:
        check_module(BLOCK_MISTAKES[mistake], PreNormBlock, args=(8, 2, 16),
                     inputs=[[(2, 5, 8)], [(2, 5, 8), True]], mistakes=BLOCK_MISTAKES)
    assert mistake[:50] in _words(error)


def test_the_wrong_modules_are_right_but_for_their_mistake():
    """Each wrong layer, given the reference's state, differs from it (else its sentence
    could name a right answer)."""
    x = mg.tensor(np.random.default_rng(6).standard_normal((2, 5, 8)).astype(np.float32))
    for mistakes, reference, args in ((MULTIHEAD_MISTAKES, SelfAttention(8, 2), (8, 2)),
                                      (BLOCK_MISTAKES, PreNormBlock(8, 2, 16), (8, 2, 16))):
        right = [reference(x, c).detach().numpy() for c in (False, True)]
        for sentence, make in mistakes.items():
            wrong = make(*args)
            wrong.load_state_dict(reference.state_dict())
            got = [wrong(x, c).detach().numpy() for c in (False, True)]
            assert not all(np.allclose(a, b, atol=1e-5) for a, b in zip(got, right)), sentence


# --- each exercise judged on its own; large scores (issue 31) ------------------------------


def test_an_unstable_softmax_is_named_on_scores_in_the_thousands():
    class Unstable(mg.Function):
        @staticmethod
        def forward(ctx, q, k, v, mask):
            scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            e = np.exp(scores)
            weights = e / e.sum(axis=-1, keepdims=True)
            ctx.save_for_backward(q, k, v)
            ctx.mask = mask
            return weights @ v

        @staticmethod
        def backward(ctx, grad_output):
            q, k, v = ctx.saved_tensors
            return attention_gradients(q, k, v, ctx.mask, grad_output)

    message = " ".join(str(pytest.raises(AssertionError, _check_attention, Unstable)
                           .value).split())
    assert "scores in the thousands" in message
    assert "the softmax overflows on large scores" in message


def test_the_reference_answers_pass_their_own_checks():
    from minigrad.exercises.attention import (ReferenceAttentionFunction,
                                              ReferenceMultiheadAttention)

    _check_attention(ReferenceAttentionFunction)
    check_module(ReferenceMultiheadAttention, SelfAttention, args=(8, 2),
                 inputs=[[(2, 5, 8)], [(2, 5, 8), True]])


def _namespace_with(multihead: type) -> dict:
    namespace = {"mg": mg, "np": np, "nn": nn, "F": F, "math": math,
                 "MyMultiheadAttention": multihead}
    block = next("".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))
                 ["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
                 == "my_transformer_block")
    exec(block, namespace)
    return namespace


def test_interleaved_q_k_v_is_named_and_a_right_block_on_it_is_told_to_fix_exercise_3(
        capsys):
    from minigrad.exercises.attention import _multihead
    from minigrad.exercises import check_module as checked

    interleaved = _multihead(packed="interleaved")
    with pytest.raises(AssertionError) as error:
        check_module(interleaved, SelfAttention, args=(8, 2), inputs=[[(2, 5, 8)]],
                     mistakes=MULTIHEAD_MISTAKES)
    assert "q, k and v were taken interleaved" in _words(error)
    block = _namespace_with(interleaved)["MyTransformerBlock"]
    with pytest.raises(AssertionError, match="80 of 80"):
        check_module(block, PreNormBlock, args=(8, 2, 16), inputs=[[(2, 5, 8)]],
                     mistakes=BLOCK_MISTAKES)
    capsys.readouterr()
    checked(block, PreNormBlock, args=(8, 2, 16), inputs=[[(2, 5, 8)], [(2, 5, 8), True]],
            mistakes=BLOCK_MISTAKES,
            uses={"MyMultiheadAttention":
                  "minigrad.exercises.attention:ReferenceMultiheadAttention"})
    assert "fix exercise 3 (`my_multihead_attention`) first" in capsys.readouterr().out
