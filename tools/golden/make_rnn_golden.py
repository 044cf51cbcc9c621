#!/usr/bin/python3
"""Golden values for ember's recurrent layers and cells, from seeded PyTorch modules.

Writes tests/golden/modules/rnn.safetensors, read by tests/golden_nn_rnn.cpp.

    /usr/bin/python3 tools/golden/make_rnn_golden.py [--out tests/golden/modules]

The format is make_layers_golden.py's (NAME.state.KEY, NAME.in.ARG, NAME.out.K,
NAME.cot.K, NAME.grad_in.ARG, NAME.grad_param.KEY; metadata {"module", "options",
...}). The inputs are "input" and, when a case passes initial states, "h0" (and
"c0" for LSTM and LSTMCell). The results are flattened: RNN and GRU give
out.0 = output, out.1 = h_n; LSTM out.0 = output, out.1 = h_n, out.2 = c_n;
RNNCell and GRUCell out.0 = h'; LSTMCell out.0 = h', out.1 = c'.
Cases cover stacked, bidirectional, batch_first, unbatched and bias-free
layers, both RNN nonlinearities and all three cells.
"""

import argparse
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import randn, write_safetensors  # noqa: E402  (also sets threads/determinism)
from make_layers_golden import LayersFile  # noqa: E402


def flat(outs):
    """(output, h_n) or (output, (h_n, c_n)) -> a flat list."""
    result = []
    for o in outs if isinstance(outs, tuple) else (outs,):
        result.extend(flat(o) if isinstance(o, tuple) else [o])
    return result


def call(m, input, h0=None, c0=None):
    if h0 is None:
        return flat(m(input))
    return flat(m(input, (h0, c0)) if c0 is not None else m(input, h0))


TORCH_CLASSES = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU,
                 "RNNCell": nn.RNNCell, "LSTMCell": nn.LSTMCell, "GRUCell": nn.GRUCell}


def build():
    g = LayersFile()

    def case(name, module, options, input_shape, state_shape=None, lstm=False):
        inputs = {"input": randn(f"{name}.x", input_shape)}
        if state_shape is not None:
            inputs["h0"] = randn(f"{name}.h0", state_shape, scale=0.5)
            if lstm:
                inputs["c0"] = randn(f"{name}.c0", state_shape, scale=0.5)
        cls = TORCH_CLASSES[module]
        g.case(name, module, options, lambda: cls(**options), inputs, call=call)

    case("lstm_stacked_bidirectional", "LSTM",
         {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True}, [5, 2, 3], [4, 2, 4], True)
    case("lstm_batch_first", "LSTM", {"input_size": 3, "hidden_size": 5, "batch_first": True}, [2, 4, 3])
    case("lstm_unbatched_no_bias", "LSTM", {"input_size": 3, "hidden_size": 4, "bias": False}, [4, 3], [1, 4], True)
    case("lstm_stacked_batch_first", "LSTM",
         {"input_size": 6, "hidden_size": 8, "num_layers": 3, "batch_first": True}, [3, 7, 6])
    case("gru_stacked_bidirectional_batch_first", "GRU",
         {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True, "batch_first": True},
         [2, 5, 3], [4, 2, 4])
    case("gru_unbatched", "GRU", {"input_size": 3, "hidden_size": 4}, [6, 3], [1, 4])
    case("rnn_tanh_stacked", "RNN", {"input_size": 3, "hidden_size": 4, "num_layers": 2}, [5, 2, 3], [2, 2, 4])
    case("rnn_relu_bidirectional", "RNN",
         {"input_size": 3, "hidden_size": 4, "nonlinearity": "relu", "bidirectional": True}, [4, 3, 3])
    case("lstm_cell", "LSTMCell", {"input_size": 3, "hidden_size": 4}, [2, 3], [2, 4], True)
    case("gru_cell", "GRUCell", {"input_size": 3, "hidden_size": 4}, [2, 3], [2, 4])
    case("rnn_cell_relu_unbatched", "RNNCell", {"input_size": 3, "hidden_size": 4, "nonlinearity": "relu"}, [3])
    return g


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "golden", "modules"))
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    g = build()
    path = os.path.join(opts.out, "rnn.safetensors")
    write_safetensors(path, g.tensors, g.metadata)
    print(f"{os.path.relpath(path)}: {len(g.metadata)} cases, {len(g.tensors)} tensors, "
          f"{os.path.getsize(path)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
