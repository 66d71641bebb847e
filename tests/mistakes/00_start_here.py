"""Chapter 0's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

MISTAKES = {
    "hand-gradient-without-the-2": ("start_neuron_grad", '''
grad_w = (2 * 3 + 1 - 4) * 3
grad_b = 2 * 3 + 1 - 4
''', "the factor 2 of the square is missing"),
    "hand-gradient-without-the-inner-derivative": ("start_neuron_grad", '''
grad_w = 2 * (2 * 3 + 1 - 4)
grad_b = 2 * (2 * 3 + 1 - 4)
''', "the inner derivative is missing for w"),
    "predicted-one-backward-only": ("start_grad_piles_up", '''
predicted_grad = [3.0, 1.0, 2.0]
''', "backward() ADDS to .grad"),
    "predicted-two-backward-calls": ("start_grad_piles_up", '''
predicted_grad = [6.0, 2.0, 4.0]
''', "2 backward() calls' worth"),
    "train-step-without-return": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
''', "returned None, expected the loss"),
    "train-step-returns-the-number": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
''', "not loss.item()"),
    "train-step-without-zero-grad": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
''', "zero_grad was forgotten"),
    "train-step-steps-before-backward": ("start_train_step", '''
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    optimizer.step()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss
''', "the parameters did not move"),
    "epoch-total-of-loss-tensors": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y))
    return total / len(batches)
''', "take the number out with .item()"),
    "epoch-sum-not-mean": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total
''', "not divided by the number of batches"),
    "epoch-total-overwritten": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total = train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total / len(batches)
''', "only the last batch"),
    "epoch-divided-by-the-batch-size": ("start_train_epoch", '''
def train_epoch(model, optimizer, batches):
    total = 0.0
    for x, y in batches:
        total += train_step(model, optimizer, mg.tensor(x), mg.tensor(y)).item()
    return total / len(x)
''', "divided by the batch size"),
}
