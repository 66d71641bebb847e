"""``nn.utils.rnn``: batches of sequences of different lengths.

``pad_sequence`` pads them to one length (differentiable: a concatenation with padding).
PyTorch's packed sequences, a GPU-oriented layout that RNNs can skip padding with, are left
out; asking for them says so (pad, and mask or pick the outputs at each length instead).
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, stack

PACKED = ("packed sequences are not supported by minigrad: pad the batch with "
          "pad_sequence, run the RNN on it, and pick each sequence's output at its length")


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Tensors of shape (L_i, *) -> (L_max, B, *) (or (B, L_max, *) with batch_first),
    padded with ``padding_value`` on ``padding_side``."""
    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: got no sequences")
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'right' or 'left', got "
                         f"{padding_side!r}")
    scalars = [i for i, s in enumerate(sequences) if s.ndim == 0]
    if scalars:
        raise ValueError(f"pad_sequence: each sequence needs a first (length) dim, but "
                         f"sequence {scalars[0]} is 0-d; give 1-D tensors (L_i,) or more")
    rest = {tuple(s.shape[1:]) for s in sequences}
    if len(rest) > 1:
        raise ValueError(f"pad_sequence: the sequences must agree in all but their first "
                         f"dim, got shapes {[tuple(s.shape) for s in sequences]}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        pairs = [(0, extra) if padding_side == "right" else (extra, 0)] + \
            [(0, 0)] * (s.ndim - 1)
        padded.append(s.pad(pairs, value=padding_value) if extra else s)
    return stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The inverse of ``pad_sequence`` (right padding): each sequence of the batch cut back
    to its length, ``lengths[i]`` (a list or a 1-D tensor)."""
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lengths = [int(n) for n in (lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
    if len(lengths) != batch.shape[0]:
        raise ValueError(f"unpad_sequence: {len(lengths)} lengths for a batch of "
                         f"{batch.shape[0]} sequences (padded shape "
                         f"{tuple(padded_sequences.shape)}, batch_first={batch_first})")
    return [batch[i, :n] for i, n in enumerate(lengths)]


def _packed(name: str):
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"torch.nn.utils.rnn.{name} is not supported by minigrad: "
                                  f"{PACKED}")

    refused.__name__ = refused.__qualname__ = name
    return refused


pack_padded_sequence = _packed("pack_padded_sequence")
pad_packed_sequence = _packed("pad_packed_sequence")
pack_sequence = _packed("pack_sequence")
unpack_sequence = _packed("unpack_sequence")
PackedSequence = _packed("PackedSequence")
