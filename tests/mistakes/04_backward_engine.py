"""Chapter 4's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "pre-order-walk": ("topological-order", '''
def topological_order(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        order.append(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)

    visit(root)
    return order
''', "A node must wait for ALL its consumers"),
    "order-not-reversed": ("topological-order", '''
def topological_order(root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        for parent, _ in node.next_functions:
            if parent is not None and parent not in visited:
                visit(parent)
        order.append(node)

    visit(root)
    return order
''', "the order is reversed"),
    "grad-overwritten": ("accumulate-grad", '''
def accumulate_grad(leaf, grad):
    leaf.grad = mg.tensor(grad)
''', "REPLACED the one already in .grad"),
    "grad-added-twice": ("accumulate-grad", '''
def accumulate_grad(leaf, grad):
    if leaf.grad is None:
        leaf.grad = mg.tensor(grad)
    leaf.grad = leaf.grad + grad
''', "the new gradient was added twice"),
    "loop-added-in-place": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
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
                pending[(parent, index)] += grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "was changed in place later"),
    "loop-not-seeded": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
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


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "your loop ran no node. Seed the root's gradient"),
    "loop-seeded-with-loss": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = loss.numpy()
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


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "seeded with the loss's value"),
    "loop-paths-not-summed": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
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
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "the SUM of what each sends"),
    "loop-leaf-as-node": ("backward-loop", '''
def my_backward_steps(loss):
    root = loss.grad_fn
    pending = {}
    pending[(root, 0)] = np.ones(loss.shape, dtype=loss.dtype)
    for node in topological_order(root):
        grad_outputs = [pending.pop((node, i), None) for i in range(len(node.output_meta))]
        if all(grad is None for grad in grad_outputs):
            continue
        grad_inputs = run_backward(node, grad_outputs)
        for (parent, index), arg, grad in zip(node.next_functions, node.args, grad_inputs):
            if grad is None:
                continue
            if (parent, index) in pending:
                pending[(parent, index)] = pending[(parent, index)] + grad
            else:
                pending[(parent, index)] = grad
        yield node, grad_outputs, grad_inputs


def my_backward(loss):
    for _ in my_backward_steps(loss):
        pass
''', "no gradient reached any leaf"),
}
