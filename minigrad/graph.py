"""Walking the recorded graph: one walk serves realize, backward and drawing.

Node ids grow as nodes are made, and a node's inputs are always made before it, so
visiting nodes from the newest id to the oldest is a valid order for backward (every
node receives all its gradients before it runs) and the oldest-first order is one for
realize. Walks use an explicit stack, so a 100,000-node chain needs no recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from typing import Any

_by_id = attrgetter("id")


def walk(roots: Iterable[Any], parents: Callable[[Any], Iterable[Any]]) -> list:
    """Every node reachable from ``roots`` through ``parents``, oldest first."""
    seen = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(p for p in parents(node) if p is not None and p not in seen)
    return sorted(seen, key=_by_id)


def grad_parents(node: Any) -> Iterator[Any]:
    """The nodes that made ``node``'s inputs (the edges gradients travel along)."""
    return (parent for parent, _ in node.next_functions if parent is not None)


def lazy_parents(node: Any) -> Iterator[Any]:
    """The not-yet-computed nodes that ``node``'s inputs wait for (lazy mode)."""
    return (t._lazy_node for t in node.inputs if t._lazy_node is not None)


def backward_order(*roots: Any) -> list:
    """The nodes a backward from the nodes ``roots`` runs, newest first: ``walk(roots,
    grad_parents)`` reversed, written out because backward runs it every time."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for parent, _ in stack.pop().next_functions:
            if parent is not None and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen, key=_by_id, reverse=True)
