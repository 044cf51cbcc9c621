"""Runs an ONNX model with onnxruntime on tensors from a safetensors file.

    python run_onnxruntime.py MODEL.onnx INPUTS.safetensors OUTPUTS.safetensors

Each model input is fed the tensor of the same name; every model output is
written under its own name. The ONNX tests of ember (tests/onnx/) call this
to compare onnxruntime's outputs with ember's. safetensors is read and
written here with numpy alone: an 8-byte little-endian header length, a JSON
header {name: {dtype, shape, data_offsets}}, then the tensor bytes.
"""

import json
import struct
import sys

import numpy as np
import onnxruntime

DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
    "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_,
}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in DTYPES:
            raise SystemExit(f"run_onnxruntime.py: {path}: tensor {name} has dtype {info['dtype']}, "
                             f"which this script does not read")
        begin, end = info["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).copy()
    return tensors


def write_safetensors(path, tensors):
    header, chunks, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.asarray(array, order="C")  # ascontiguousarray would make 0-d arrays 1-d
        raw = array.tobytes()
        header[name] = {"dtype": NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    model, inputs_path, outputs_path = sys.argv[1:]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    inputs = read_safetensors(inputs_path)
    feed = {}
    for arg in session.get_inputs():
        if arg.name not in inputs:
            raise SystemExit(f"run_onnxruntime.py: {inputs_path} has no tensor '{arg.name}' "
                             f"(it has: {', '.join(sorted(inputs))})")
        feed[arg.name] = inputs[arg.name]
    names = [o.name for o in session.get_outputs()]
    results = session.run(names, feed)
    write_safetensors(outputs_path, dict(zip(names, results)))


if __name__ == "__main__":
    main()
