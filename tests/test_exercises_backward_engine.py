"""Chapter 04's checkers (minigrad/exercises/backward_engine.py) pass right answers and
name each classic mistake of the backward engine: written out as wrong implementations,
each must fail with a message that names it."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

import minigrad as mg
from minigrad import autograd, graph
from minigrad.autograd import sum_to_shape
from minigrad.exercises.backward_engine import (check_accumulate_grad, check_backward_loop,
                                                check_topological_order, diamond,
                                                reference_steps, small_network,
                                                two_outputs, used_three_times)


def fails(check, *args) -> str:
    with pytest.raises(AssertionError) as failure:
        check(*args)
    return " ".join(str(failure.value).split())


# --- exercise 1: topological_order ---------------------------------------------------------


def post_order_reversed(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)
        order.append(node)

    visit(root)
    return order[::-1]


def pre_order(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        order.append(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)

    visit(root)
    return order


def stack_pre_order(root):  # right on one diamond by luck, wrong on its mirror image
    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(parent for parent, _ in node.next_functions if parent is not None)
    return order


def breadth_first(root):
    order, seen, queue = [], {root}, deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return order


def without_visited_set(root):
    order = []

    def visit(node):
        for parent, _ in node.next_functions:
            if parent is not None:
                visit(parent)
        order.append(node)

    visit(root)
    return order[::-1]


def with_none(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        if node is not None:
            for parent, _ in node.next_functions:
                if parent not in visited:
                    visit(parent)
        order.append(node)

    visit(root)
    return order[::-1]


def first_input_only(root):
    order = [root]
    while order[-1].next_functions and order[-1].next_functions[0][0] is not None:
        order.append(order[-1].next_functions[0][0])
    return order


def test_a_reversed_post_order_passes(capsys):
    check_topological_order(post_order_reversed)
    assert "topological_order: right" in capsys.readouterr().out


def test_another_topological_order_newest_first_passes_too():
    def newest_first(root):  # minigrad's own order, written by the student
        seen, stack = {root}, [root]
        while stack:
            for parent, _ in stack.pop().next_functions:
                if parent is not None and parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return sorted(seen, key=lambda node: node.id, reverse=True)

    check_topological_order(newest_first)


@pytest.mark.parametrize("walk", [pre_order, stack_pre_order, breadth_first])
def test_a_walk_that_lists_a_node_before_all_its_consumers_is_named(walk):
    message = fails(check_topological_order, walk)
    assert "A node must wait for ALL its consumers" in message
    assert "comes before" in message


@pytest.mark.parametrize("walk, words", [
    (without_visited_set, "is listed twice"),
    (lambda root: post_order_reversed(root)[::-1], "the order is reversed"),
    (with_none, "the order contains None"),
    (first_input_only, "node(s) are missing"),
    (lambda root: None, "not a list of nodes"),
    (lambda root: reversed(post_order_reversed(root)[::-1]), "can be read only once"),
    (lambda root: iter(post_order_reversed(root)), "can be read only once"),
])
def test_other_wrong_orders_are_named(walk, words):
    assert words in fails(check_topological_order, walk)


def test_calling_minigrad_s_own_order_is_refused_and_the_engine_is_restored():
    original = autograd.backward_order
    message = fails(check_topological_order, lambda root: mg.autograd.backward_order(root))
    assert "called minigrad's own backward_order" in message
    assert autograd.backward_order is original and graph.backward_order is original


def test_a_blank_topological_order_says_where_to_write():
    def blank(root):
        raise NotImplementedError()

    assert "Write your solution" in fails(check_topological_order, blank)


# --- exercise 2: accumulate_grad ---------------------------------------------------------------


def accumulate_grad(leaf, grad):
    if leaf.grad is None:
        leaf.grad = mg.tensor(grad)
    else:
        leaf.grad = leaf.grad + grad


def test_a_right_accumulate_grad_passes(capsys):
    check_accumulate_grad(accumulate_grad)
    assert "accumulate_grad: right" in capsys.readouterr().out


def test_an_in_place_add_into_a_copy_passes():
    def in_place(leaf, grad):
        if leaf.grad is None:
            leaf.grad = mg.tensor(grad)
        else:
            leaf.grad += grad

    check_accumulate_grad(in_place)


def test_overwriting_the_gradient_is_named():
    def overwrite(leaf, grad):
        leaf.grad = mg.tensor(grad)

    assert "REPLACED the one already in .grad" in fails(check_accumulate_grad, overwrite)


def test_a_grad_that_is_an_array_not_a_tensor_is_named():
    def as_array(leaf, grad):
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad

    # the engine refuses it at the assignment (issue 30), naming what it got
    assert "assigned grad expected to be a Tensor or None, but got ndarray" in fails(
        check_accumulate_grad, as_array)


def test_keeping_the_given_array_and_adding_in_place_is_named():
    def aliased(leaf, grad):
        if leaf.grad is None:
            leaf.grad = mg.Tensor._make(grad)
        else:
            leaf.grad._data += grad

    assert "changed y.grad too" in fails(check_accumulate_grad, aliased)


def test_a_gradient_of_another_dtype_is_named():
    def as_list(leaf, grad):  # a list becomes float32: the float64 leaf loses digits
        leaf.grad = mg.tensor(grad.tolist()) if leaf.grad is None else leaf.grad + grad

    # the engine refuses it at the assignment (issue 30), naming both dtypes
    assert "assigned grad has data of a different type: float32 for the tensor" in fails(
        check_accumulate_grad, as_list)


def test_the_first_gradient_added_twice_is_named():
    def no_else(leaf, grad):
        if leaf.grad is None:
            leaf.grad = mg.tensor(grad)
        leaf.grad = leaf.grad + grad

    assert "added twice" in fails(check_accumulate_grad, no_else)


def test_a_blank_accumulate_grad_fails():
    assert "x.grad is still None" in fails(check_accumulate_grad, lambda leaf, grad: None)


# --- exercise 3: the loop -------------------------------------------------------------------------


def run_backward(node, grad_outputs):
    grad_outputs = [np.zeros(shape, dtype) if grad is None else grad
                    for grad, (shape, dtype) in zip(grad_outputs, node.output_meta)]
    grads = node.function.backward(node, *grad_outputs)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return tuple(None if grad is None or not node.needs_input_grad[i]
                 else sum_to_shape(np.asarray(grad), node.input_shape_dtype(i)[0])
                 .astype(node.input_shape_dtype(i)[1]) for i, grad in enumerate(grads))


def make_loop(seed="ones", order=post_order_reversed, sum_paths=True, to_leaf="accumulate",
              skip_none=True, output_index=True, key="index", in_place=False):
    """The exercise's loop, right (the defaults) or with one mistake."""

    def my_backward_steps(loss):
        root = loss.grad_fn
        pending = {}
        if seed == "ones":
            pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
        elif seed == "value":
            pending[(root, 0)] = loss.numpy()
        for node in order(root):
            count = len(node.output_meta)
            grad_outputs = [pending.pop((node, i if output_index else 0), None)
                            for i in range(count)]
            if all(grad is None for grad in grad_outputs):
                continue
            grad_inputs = run_backward(node, grad_outputs)
            for position, ((parent, index), arg, grad) in enumerate(
                    zip(node.next_functions, node.args, grad_inputs)):
                if grad is None and skip_none:
                    continue
                index = {"index": index, "position": position, "zero": 0}[key]
                if parent is None and to_leaf == "accumulate":
                    accumulate_grad(arg, grad)
                elif parent is None and to_leaf == "overwrite":
                    arg.grad = mg.tensor(grad)
                elif parent is None and to_leaf == "backward":
                    arg.backward(mg.tensor(grad))
                elif (parent, index) in pending and sum_paths and in_place:
                    pending[(parent, index)] += grad
                elif (parent, index) in pending and sum_paths:
                    pending[(parent, index)] = pending[(parent, index)] + grad
                else:
                    pending[(parent, index)] = grad
            yield node, grad_outputs, grad_inputs

    return my_backward_steps


def test_a_right_loop_passes(capsys):
    check_backward_loop(make_loop())
    assert "my_backward_steps: right" in capsys.readouterr().out


@pytest.mark.parametrize("mistake, words", [
    ({"seed": None}, "your loop ran no node. Seed the root's gradient"),
    ({"seed": "value"}, "seeded with the loss's value"),
    ({"sum_paths": False}, "the SUM of what each sends"),
    ({"to_leaf": "pending"}, "no gradient reached any leaf"),
    ({"to_leaf": "overwrite"}, "a leaf used several times kept only its last gradient"),
    ({"to_leaf": "backward"}, "called minigrad's own backward"),
    ({"skip_none": False}, "Skip those"),
    ({"output_index": False}, "no gradient arrived at Halves for its output 1"),
    ({"order": pre_order}, "did not run in a topological order"),
    ({"in_place": True}, "was changed in place later"),
    ({"key": "position"}, "a node that should have run never ran: Sin"),
    ({"key": "zero"}, "the sum of the gradients for all 2 outputs of Halves"),
])
def test_each_classic_mistake_of_the_loop_is_named(mistake, words):
    assert words in fails(check_backward_loop, make_loop(**mistake))


def test_the_engine_s_steps_keep_what_they_handed_out():
    """The checker compares the student's grad_inputs with the engine's after the whole
    pass: the engine must not change an array after handing it out (a non-leaf used twice
    by one node, as in the checker's small network, is where it could)."""
    for build in (diamond, small_network, two_outputs, used_three_times):
        g = build()
        steps, copies = [], []
        for step in mg.backward_steps(g.loss):
            steps.append(step)
            copies.append([None if grad is None else grad.copy() for grad in step.grad_inputs])
        for step, then in zip(steps, copies):
            for grad, was in zip(step.grad_inputs, then):
                assert (grad is None) == (was is None)
                if grad is not None:
                    np.testing.assert_array_equal(grad, was)


def test_a_loop_that_calls_loss_backward_is_refused_and_the_engine_is_restored():
    original = autograd._backward

    def engine(loss):
        loss.backward()
        return []

    assert "called minigrad's own backward" in fails(check_backward_loop, engine)
    assert autograd._backward is original


def test_a_blank_loop_says_where_to_write():
    def blank(loss):
        raise NotImplementedError()
        yield

    assert "Write your solution" in fails(check_backward_loop, blank)


# --- the checker's own graphs and reference ------------------------------------------------------


@pytest.mark.parametrize("build", [diamond, lambda: diamond(mirrored=True), used_three_times,
                                   small_network, two_outputs])
def test_the_checker_s_reference_loop_gives_the_engine_s_gradients(build):
    mine, engine = build(), build()
    reference_steps(mine.loss)
    engine.loss.backward()
    for name, leaf in engine.leaves.items():
        if leaf.grad is None:
            assert mine.leaves[name].grad is None
        else:
            np.testing.assert_allclose(mine.leaves[name].grad.numpy(), leaf.grad.numpy())


@pytest.mark.parametrize("build", [diamond, used_three_times])
def test_the_graphs_gradients_are_pytorch_s(torch, build):
    g = build()
    g.loss.backward()
    x = torch.tensor(g.leaves["x"].numpy(), requires_grad=True)
    if build is diamond:
        v = torch.tensor(g.leaves["v"].numpy())
        a = x.exp()
        loss = (a * a.sin() * v).sum()
    else:
        w = torch.tensor(g.leaves["w"].numpy(), requires_grad=True)
        c1, c2 = (torch.tensor(g.leaves[k].numpy()) for k in ("c1", "c2"))
        loss = ((x @ w) * c1).sum() + (x * x * c2).sum()
    loss.backward()
    np.testing.assert_allclose(g.leaves["x"].grad.numpy(), x.grad.numpy(), rtol=1e-10)


def test_the_mistakes_give_different_gradients_on_the_graphs():
    """Each mistake of the reference loop changes some leaf's gradient: otherwise the
    checker could not tell it from the right loop."""
    for options in ({"sum_paths": False}, {"sum_uses": False}, {"seed": "value"}):
        differs = False
        for build in (diamond, used_three_times, small_network):
            right, wrong = build(), build()
            reference_steps(right.loss)
            reference_steps(wrong.loss, **options)
            differs |= any(not np.allclose(right.leaves[k].grad.numpy(),
                                           wrong.leaves[k].grad.numpy())
                           for k in right.leaves if right.leaves[k].grad is not None)
        assert differs, options


# --- each exercise on its own, and the graphs grading adds ---------------------------------

USES = {"topological_order": "minigrad.exercises.backward_engine:reference_topological_order",
        "accumulate_grad": "minigrad.exercises.backward_engine:reference_accumulate_grad"}
LOOP = '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {(root, 0): np.ones(loss.shape, dtype=loss.dtype)}
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if parent is None:
                accumulate_grad(arg, grad)
            elif (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs
'''


def notebook_loop(order, accumulate) -> dict:
    """The loop as a notebook holds it: it reads the earlier exercises' names from its
    globals."""
    namespace = {"__name__": "__main__", "np": np, "topological_order": order,
                 "accumulate_grad": accumulate, "run_backward": run_backward}
    exec(LOOP, namespace)  # noqa: S102 - the test's own code
    return namespace


def not_reversed(root):
    return post_order_reversed(root)[::-1]


def test_an_unreversed_order_is_not_blamed_on_the_loop(capsys):
    namespace = notebook_loop(not_reversed, accumulate_grad)
    assert "pending" in fails(check_backward_loop, namespace["my_backward_steps"])
    capsys.readouterr()
    check_backward_loop(namespace["my_backward_steps"], uses=USES)
    out = " ".join(capsys.readouterr().out.split())
    assert "my_backward_steps: right" in out
    assert ("your my_backward_steps is right with the reference topological_order; fix "
            "exercise 1 (`topological-order`) first") in out
    assert namespace["topological_order"] is not_reversed


def test_a_wrong_accumulate_grad_is_named_and_not_blamed_on_the_loop(capsys):
    def overwrites(leaf, grad):
        leaf.grad = mg.tensor(grad)

    check_backward_loop(notebook_loop(post_order_reversed, overwrites)["my_backward_steps"],
                        uses=USES)
    out = " ".join(capsys.readouterr().out.split())
    assert "with the reference accumulate_grad; fix exercise 2 (`accumulate-grad`)" in out


def test_the_loop_s_own_mistake_is_still_named_with_the_references():
    namespace = notebook_loop(not_reversed, accumulate_grad)
    exec(LOOP.replace("np.ones(", "np.zeros("), namespace)  # noqa: S102
    assert "The root's gradient is the seed: ones" in fails(
        lambda f: check_backward_loop(f, uses=USES), namespace["my_backward_steps"])


def test_the_references_pass_the_checks_on_every_graph():
    from minigrad.exercises.backward_engine import (MORE_GRAPHS, reference_accumulate_grad,
                                                    reference_topological_order)

    for graphs in (None, MORE_GRAPHS):
        more = () if graphs is None else (graphs,)
        check_topological_order(reference_topological_order, *more)
        check_backward_loop(notebook_loop(reference_topological_order,
                                          reference_accumulate_grad)["my_backward_steps"],
                            *more)
    check_accumulate_grad(reference_accumulate_grad, shape=(4,), seed=49, dtype=np.float32)
