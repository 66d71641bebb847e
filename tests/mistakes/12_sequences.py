"""Chapter 12's classic mistakes, graded by tests/test_grading.py.

Each entry: a name -> (the grade_id of a solution cell, that cell rewritten with the
mistake, words the feedback must show).
"""

_EMBEDDING = '''
class MyEmbeddingFunction(mg.Function):
    @staticmethod
    def forward(ctx, weight, indices):
        ctx.weight_shape, ctx.indices = weight.shape, indices
        return weight[indices]

    @staticmethod
    def backward(ctx, grad_output):
        grad_weight = np.zeros(ctx.weight_shape)
        GRADIENT
        return grad_weight, None
'''

_RNN = '''
class MyRNN(nn.Module):
    def __init__(self, input_size, hidden_size, batch_first=True):
        super().__init__()
        self.hidden_size = hidden_size
        k = 1 / hidden_size ** 0.5
        self.weight_ih_l0 = nn.Parameter(mg.empty(hidden_size, input_size).uniform_(-k, k))
        self.weight_hh_l0 = nn.Parameter(mg.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.bias_ih_l0 = nn.Parameter(mg.empty(hidden_size).uniform_(-k, k))
        self.bias_hh_l0 = nn.Parameter(mg.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        first = h0[0] if h0 is not None else mg.zeros(x.shape[0], self.hidden_size)
        h, outputs = first, []
        for t in range(x.shape[1]):
            STEP
            outputs.append(h)
        return mg.stack(outputs, dim=1), h.unsqueeze(0)
'''

_LSTM = '''
def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    H = h.shape[-1]
    a = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    BLOCKS
    c_new = f * c + i * g
    h_new = o * c_new.tanh()
    return h_new, c_new
'''

_RIGHT_BLOCKS = ("i = a[:, :H].sigmoid()\n    f = a[:, H:2 * H].sigmoid()\n"
                 "    g = a[:, 2 * H:3 * H].tanh()\n    o = a[:, 3 * H:].sigmoid()")

_GENERATE = '''
def generate(model, tokenizer, prompt, n, temperature=1.0):
    ids = list(tokenizer.encode(prompt))
    with mg.no_grad():
        logits, state = model(mg.tensor([ids]), None)
        for _ in range(n):
            probs = F.softmax(logits[0, -1] / temperature, dim=-1)
            next_id = DRAW
            ids.append(next_id)
            logits, state = model(mg.tensor([[next_id]]), STATE)
    return tokenizer.decode(ids)
'''

MISTAKES = {
    "embedding-assigned": ("my_embedding", _EMBEDDING.replace(
        "GRADIENT", "grad_weight[ctx.indices] = grad_output"),
        "a repeated token kept only one of its gradients"),
    "embedding-added-with-fancy-index": ("my_embedding", _EMBEDDING.replace(
        "GRADIENT", "grad_weight[ctx.indices] += grad_output"),
        "a repeated token kept only one of its gradients"),
    "embedding-averaged": ("my_embedding", _EMBEDDING.replace(
        "GRADIENT", "np.add.at(grad_weight, ctx.indices, grad_output)\n"
        "        counts = np.bincount(ctx.indices.reshape(-1), minlength=len(grad_weight))\n"
        "        grad_weight = grad_weight / np.maximum(counts, 1)[:, None]"),
        "divided by the number of times its token was read"),
    "rnn-state-not-carried": ("my_rnn", _RNN.replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + first @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()"),
        "the hidden state is not carried"),
    "rnn-no-tanh": ("my_rnn", _RNN.replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h @ self.weight_hh_l0.T + self.bias_hh_l0)"),
        "tanh is missing"),
    "rnn-one-bias": ("my_rnn", _RNN.replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h @ self.weight_hh_l0.T).tanh()"),
        "bias_hh_l0 is not added"),
    "rnn-w-hh-not-transposed": ("my_rnn", _RNN.replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h @ self.weight_hh_l0 + self.bias_hh_l0).tanh()"),
        "weight_hh_l0 is not transposed"),
    "rnn-h0-ignored": ("my_rnn", _RNN.replace(
        "first = h0[0] if h0 is not None else", "first =").replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()"),
        "h0 is ignored"),
    "rnn-output-before-the-step": ("my_rnn", _RNN.replace(
        "            STEP\n            outputs.append(h)",
        "            outputs.append(h)\n"
        "            h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
        "                 + h @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()"),
        "output holds each step's state from BEFORE the step"),
    "rnn-state-detached": ("my_rnn", _RNN.replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h.detach() @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()"),
        "the state was detached between the steps"),
    "rnn-h0-with-its-layer-dimension": ("my_rnn", _RNN.replace(
        "first = h0[0] if h0 is not None", "first = h0 if h0 is not None").replace(
        "STEP", "h = (x[:, t] @ self.weight_ih_l0.T + self.bias_ih_l0\n"
                "                 + h @ self.weight_hh_l0.T + self.bias_hh_l0).tanh()").replace(
        "h.unsqueeze(0)", "h.reshape(1, x.shape[0], -1)"),
        "one state per layer; start from h0[0]"),
    "lstm-gate-order-ifog": ("lstm_cell", _LSTM.replace(
        "BLOCKS", "i = a[:, :H].sigmoid()\n    f = a[:, H:2 * H].sigmoid()\n"
                  "    o = a[:, 2 * H:3 * H].sigmoid()\n    g = a[:, 3 * H:].tanh()"),
        "the gates are not in PyTorch's order: you read the four blocks of the "
        "pre-activations as (i, f, o, g)"),
    "lstm-gate-order-figo": ("lstm_cell", _LSTM.replace(
        "BLOCKS", "f = a[:, :H].sigmoid()\n    i = a[:, H:2 * H].sigmoid()\n"
                  "    g = a[:, 2 * H:3 * H].tanh()\n    o = a[:, 3 * H:].sigmoid()"),
        "as (f, i, g, o), PyTorch packs them as (i, f, g, o)"),
    "lstm-sigmoid-candidate": ("lstm_cell", _LSTM.replace(
        "BLOCKS", _RIGHT_BLOCKS.replace("g = a[:, 2 * H:3 * H].tanh()",
                                        "g = a[:, 2 * H:3 * H].sigmoid()")),
        "the cell candidate g went through a sigmoid"),
    "lstm-no-tanh-on-cell": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        "h_new = o * c_new.tanh()", "h_new = o * c_new"),
        "tanh is missing on the cell in h = o * tanh(c)"),
    "lstm-old-cell-in-h": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        "h_new = o * c_new.tanh()", "h_new = o * c.tanh()"), "h_new reads the OLD cell"),
    "lstm-no-output-gate": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        "h_new = o * c_new.tanh()", "h_new = c_new.tanh()"), "the output gate is missing"),
    "lstm-no-input-gate": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        "c_new = f * c + i * g", "c_new = f * c + g"),
        "the input gate is not applied to the candidate"),
    "lstm-interleaved-blocks": ("lstm_cell", _LSTM.replace(
        "BLOCKS", "b = a.reshape(a.shape[0], H, 4)\n    i = b[:, :, 0].sigmoid()\n"
                  "    f = b[:, :, 1].sigmoid()\n    g = b[:, :, 2].tanh()\n"
                  "    o = b[:, :, 3].sigmoid()"),
        "the four blocks were read as interleaved columns"),
    "lstm-outputs-swapped": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        "return h_new, c_new", "return c_new, h_new"), "h_new and c_new are swapped"),
    "lstm-one-bias": ("lstm_cell", _LSTM.replace("BLOCKS", _RIGHT_BLOCKS).replace(
        " + bias_hh\n", "\n"), "bias_hh is not added"),
    "generate-state-not-carried": ("generate", _GENERATE.replace(
        "DRAW", "mg.multinomial(probs, num_samples=1).item()").replace("STATE", "None"),
        "the state is not carried"),
    "generate-greedy": ("generate", _GENERATE.replace(
        "DRAW", "probs.argmax().item()").replace("STATE", "state"),
        "that is greedy decoding, not sampling"),
    "generate-temperature-on-probabilities": ("generate", _GENERATE.replace(
        "logits[0, -1] / temperature, dim=-1)", "logits[0, -1], dim=-1) / temperature").replace(
        "DRAW", "mg.multinomial(probs, num_samples=1).item()").replace("STATE", "state"),
        "the temperature changes nothing"),
    "generate-whole-text-with-state": ("generate", _GENERATE.replace(
        "DRAW", "mg.multinomial(probs, num_samples=1).item()").replace(
        "mg.tensor([[next_id]]), STATE", "mg.tensor([ids]), state"),
        "the whole text was fed again at each step, WITH the state"),
}
