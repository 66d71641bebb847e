"""CosineSimilarity: the module form of ``F.cosine_similarity``."""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


class CosineSimilarity(Module):
    """sum(x1 * x2) / (||x1|| ||x2||) along ``dim`` (norms at least ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, eps={self.eps}"
