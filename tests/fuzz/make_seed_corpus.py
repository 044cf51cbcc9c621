#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/<reader>/.

  python3 tests/fuzz/make_seed_corpus.py build/fuzz/tests/fuzz/fuzz_seed_writer

File names say what a reader must do with them, and tests/test_fuzz_corpus.cpp
checks it in every `make test`:
  ok_*   valid: read without error
  bad_*  malformed in a way the reader must reject with an ember::Error
  any_*  mutated at random: either outcome, never a crash
The output is deterministic (fixed seeds), so regenerating changes nothing
unless this script or the seed writer changed.
"""
import gzip
import json
import random
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"


def put(reader, name, data):
    path = CORPUS / reader / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def truncations(reader, stem, data, count=12):
    for i in range(count):
        cut = (len(data) * i) // count
        put(reader, f"bad_{stem}_truncated_{cut}", data[:cut])


def byte_mutants(reader, stem, data, count, rng):
    for i in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(b))
            b[pos] = rng.choice([0, 0xFF, 0x7F, 0x80, ord('-'), ord('9'), rng.randrange(256)])
        put(reader, f"any_{stem}_mutant_{i}", bytes(b))


# ---- safetensors ----

def safetensors_bytes(header, data=b"", length=None):
    if isinstance(header, bytes):
        raw = header
    else:
        text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
        raw = text.encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def parse_safetensors(blob):
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    return header, blob[8 + n:]


def safetensors_corpus():
    ok = lambda dtype="F32", shape=(2,), offsets=(0, 8): {"t": {"dtype": dtype, "shape": list(shape),
                                                                "data_offsets": list(offsets)}}
    data8 = bytes(range(8))
    bad = {
        "empty": b"",
        "seven_bytes": b"\x01" * 7,
        "length_beyond_file": safetensors_bytes(ok(), data8, length=1000),
        "length_2_63": safetensors_bytes(ok(), data8, length=1 << 63),
        "length_zero": safetensors_bytes("", data8),
        "not_json": safetensors_bytes("{abc", data8),
        "json_array": safetensors_bytes("[]", data8),
        "leading_space": safetensors_bytes(" " + json.dumps(ok()), data8),
        "unknown_dtype": safetensors_bytes(ok(dtype="F8"), data8),
        "dtype_number": safetensors_bytes({"t": {"dtype": 3, "shape": [2], "data_offsets": [0, 8]}}, data8),
        "negative_shape": safetensors_bytes(ok(shape=(-1,)), data8),
        "huge_shape": safetensors_bytes(ok(shape=(1 << 62, 1 << 62)), data8),
        "overflowing_shape": safetensors_bytes(ok(shape=(1 << 32, 1 << 32, 1 << 32), offsets=(0, 0))),
        "shape_not_list": safetensors_bytes({"t": {"dtype": "F32", "shape": 2, "data_offsets": [0, 8]}}, data8),
        "shape_float": safetensors_bytes({"t": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}}, data8),
        "shape_string": safetensors_bytes({"t": {"dtype": "F32", "shape": ["2"], "data_offsets": [0, 8]}}, data8),
        "offsets_reversed": safetensors_bytes(ok(offsets=(8, 0)), data8),
        "offsets_beyond_data": safetensors_bytes(ok(offsets=(0, 16)), data8),
        "offsets_size_mismatch": safetensors_bytes(ok(shape=(3,)), data8),
        "offsets_three": safetensors_bytes(ok(offsets=(0, 4, 8)), data8),
        "offsets_negative": safetensors_bytes(ok(offsets=(-8, 0)), data8),
        "offsets_huge": safetensors_bytes({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 1e30]}}, data8),
        "overlapping": safetensors_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, data8),
        "gap": safetensors_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, data8),
        "uncovered_tail": safetensors_bytes(ok(), data8 + b"\0" * 8),
        "extra_key": safetensors_bytes({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}}, data8),
        "missing_dtype": safetensors_bytes({"t": {"shape": [2], "data_offsets": [0, 8]}}, data8),
        "missing_shape": safetensors_bytes({"t": {"dtype": "F32", "data_offsets": [0, 8]}}, data8),
        "missing_offsets": safetensors_bytes({"t": {"dtype": "F32", "shape": [2]}}, data8),
        "duplicate_key": safetensors_bytes('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                           '"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', data8),
        "metadata_not_object": safetensors_bytes({"__metadata__": [1], **ok()}, data8),
        "metadata_value_number": safetensors_bytes({"__metadata__": {"a": 1}, **ok()}, data8),
        "entry_not_object": safetensors_bytes({"t": [1, 2]}),
        "invalid_utf8_name": safetensors_bytes(b'{"\xff\xfe":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
                                               data8),
        "deep_nesting": safetensors_bytes('{"__metadata__":{"a":' + "[" * 100000 + "]" * 100000 + "}}"),
        "junk_after_json": safetensors_bytes(json.dumps(ok()) + "xyz", data8),
        "nul_in_header": safetensors_bytes(json.dumps(ok()) + "\0\0", data8),
        "truncated_data": safetensors_bytes(ok(), data8[:5]),
        "bool_shape": safetensors_bytes({"t": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}},
                                        data8[:4]),
        "null_entry": safetensors_bytes({"t": None}),
    }
    for name, blob in bad.items():
        put("safetensors", "bad_" + name, blob)
    put("safetensors", "ok_hand_written", safetensors_bytes(ok(), data8))
    put("safetensors", "ok_empty_header", safetensors_bytes("{}"))
    rng = random.Random(1)
    for seed in sorted((CORPUS / "safetensors").glob("ok_*.safetensors")):
        blob = seed.read_bytes()
        truncations("safetensors", seed.stem, blob, 6)
        byte_mutants("safetensors", seed.stem, blob, 6, rng)


# ---- training checkpoints ----

DTYPE_SIZE = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1}


def checkpoint_checksum(tensors, metadata):
    """As serialize/training_checkpoint.cpp: CRC-32 over metadata then tensors, in key order."""
    crc = 0
    for key in sorted(metadata):
        if key != "checksum":
            crc = zlib.crc32(key.encode() + b"\0" + metadata[key].encode() + b"\0", crc)
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        crc = zlib.crc32(name.encode() + b"\0" + dtype.encode(), crc)
        for s in shape:
            crc = zlib.crc32(struct.pack("<q", s), crc)
        crc = zlib.crc32(raw, crc)
    return f"{crc:08x}"


def read_checkpoint(blob):
    header, data = parse_safetensors(blob)
    metadata = header.pop("__metadata__", {})
    tensors = {name: (e["dtype"], e["shape"], data[e["data_offsets"][0]:e["data_offsets"][1]])
               for name, e in header.items()}
    return tensors, metadata


def write_checkpoint(tensors, metadata, fix_checksum=True):
    metadata = dict(metadata)
    if fix_checksum:
        metadata["checksum"] = checkpoint_checksum(tensors, metadata)
    header, data = {"__metadata__": metadata}, b""
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return safetensors_bytes(header, data)


def checkpoint_corpus():
    seed = CORPUS / "checkpoint" / "ok_adam_cosine.ckpt"
    blob = seed.read_bytes()
    tensors, metadata = read_checkpoint(blob)
    put("checkpoint", "ok_rewritten", write_checkpoint(tensors, metadata))

    def with_meta(**changes):
        m = dict(metadata)
        for k, v in changes.items():
            if v is None:
                m.pop(k, None)
            else:
                m[k] = v
        return write_checkpoint(tensors, m)

    def with_tensor(name, dtype=None, shape=None, raw=None, drop=False):
        t = dict(tensors)
        if drop:
            del t[name]
        else:
            d, s, r = t[name]
            t[name] = (dtype or d, s if shape is None else shape, r if raw is None else raw)
        return write_checkpoint(t, metadata)

    def first(prefix):
        return next(n for n in sorted(tensors) if n.startswith(prefix))

    weight = "model/0.weight"
    bad = {
        "wrong_checksum": write_checkpoint(tensors, {**metadata, "checksum": "00000000"}, fix_checksum=False),
        "no_checksum": write_checkpoint(tensors, {k: v for k, v in metadata.items() if k != "checksum"},
                                        fix_checksum=False),
        "no_format": with_meta(format=None),
        "foreign_format": with_meta(format="something.else.v9"),
        "epoch_text": with_meta(epoch="abc"),
        "epoch_float": with_meta(epoch="1e3"),
        "epoch_empty": with_meta(epoch=""),
        "epoch_overflow": with_meta(epoch="99999999999999999999999"),
        "no_step": with_meta(step=None),
        "rng_seed_negative": with_meta(rng_seed="-1"),
        "rng_offset_text": with_meta(rng_offset="0x10"),
        "part_missing_for_tensor": with_meta(parts="model,optimizer,scheduler"),
        "weight_wrong_shape": with_tensor(weight, shape=[4, 3]),
        "weight_wrong_numel": with_tensor(weight, shape=[2, 2], raw=tensors[weight][2][:16]),
        "weight_missing": with_tensor(weight, drop=True),
        "extra_model_key": write_checkpoint({**tensors, "model/9.weight": ("F32", [1], b"\0" * 4)}, metadata),
        "optimizer_state_wrong_shape": with_tensor(first("optimizer/state.0.exp_avg"), shape=[1],
                                                   raw=b"\0" * 4),
        "scheduler_ff_bytes": write_checkpoint(
            {n: (d, s, b"\xff" * len(r)) if n.startswith("scheduler/") else (d, s, r)
             for n, (d, s, r) in tensors.items()}, metadata),
        "scheduler_missing_key": with_tensor(first("scheduler/"), drop=True),
        "train_data_ff_bytes": write_checkpoint(
            {n: (d, s, b"\xff" * len(r)) if n.startswith("train_data/") else (d, s, r)
             for n, (d, s, r) in tensors.items()}, metadata),
        "train_data_wrong_dtype": with_tensor(first("train_data/"), dtype="F64",
                                              raw=b"\0" * (8 * max(1, len(tensors[first("train_data/")][2]) // 8))),
        "optimizer_nan_step": write_checkpoint(
            {n: (d, s, b"\xff" * len(r)) if n.startswith("optimizer/") and "step" in n else (d, s, r)
             for n, (d, s, r) in tensors.items()}, metadata),
    }
    for name, data in bad.items():
        put("checkpoint", "bad_" + name, data)
    for name, value in {"epoch_negative": "-5", "step_huge": str((1 << 63) - 1)}.items():
        put("checkpoint", "any_" + name, with_meta(**{name.split("_")[0]: value}))
    truncations("checkpoint", "adam_cosine", blob, 12)
    byte_mutants("checkpoint", "adam_cosine", blob, 16, random.Random(2))


# ---- IDX ----

def idx_bytes(code, dims, payload, magic=b"\0\0"):
    return magic + bytes([code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def idx_corpus():
    images = idx_bytes(0x08, [3, 4, 4], bytes(range(48)))
    ok = {
        "uint8_images": images,
        "int32_labels": idx_bytes(0x0C, [5], b"".join(struct.pack(">i", v) for v in [0, -1, 7, 2**31 - 1, 3])),
        "float32": idx_bytes(0x0D, [2, 2], struct.pack(">4f", 1.5, -2.0, 0.0, 1e30)),
        "float64": idx_bytes(0x0E, [3], struct.pack(">3d", 1.0, float("nan"), -0.0)),
        "gzip_images": gzip.compress(images, mtime=0),
        "empty_dim": idx_bytes(0x08, [0, 28, 28], b""),
    }
    for name, data in ok.items():
        put("idx", "ok_" + name, data)
    bad = {
        "empty": b"",
        "three_bytes": b"\0\0\x08",
        "magic_nonzero": idx_bytes(0x08, [4], bytes(4), magic=b"\x01\0"),
        "int8_code": idx_bytes(0x09, [4], bytes(4)),
        "int16_code": idx_bytes(0x0B, [2], bytes(4)),
        "unknown_code": idx_bytes(0x07, [4], bytes(4)),
        "dims_beyond_file": b"\0\0\x08\xff" + bytes(8),
        "huge_dims": idx_bytes(0x08, [0xFFFFFFFF] * 3, bytes(16)),
        "overflowing_dims": idx_bytes(0x0E, [0xFFFFFFFF] * 8, bytes(16)),
        "data_short": idx_bytes(0x08, [3, 4, 4], bytes(47)),
        "data_long": idx_bytes(0x08, [3, 4, 4], bytes(49)),
        "float_data_short": idx_bytes(0x0D, [2], bytes(7)),
        "gzip_garbage": b"\x1f\x8b" + bytes(range(40)),
        "gzip_truncated": gzip.compress(images, mtime=0)[:30],
        "gzip_of_bad_idx": gzip.compress(idx_bytes(0x08, [100], bytes(10)), mtime=0),
        "gzip_inflates_far_beyond_dims": gzip.compress(idx_bytes(0x08, [16], bytes(1 << 20)), mtime=0),
        "gzip_bad_crc": gzip.compress(images, mtime=0)[:-8] + b"\0" * 8,
        "gzip_two_members": gzip.compress(images, mtime=0) + gzip.compress(images, mtime=0),
        "gzip_empty_member": gzip.compress(b"", mtime=0),
    }
    for name, data in bad.items():
        put("idx", "bad_" + name, data)
    for name, data in ok.items():
        truncations("idx", name, data, 6)
    byte_mutants("idx", "uint8_images", images, 10, random.Random(3))
    byte_mutants("idx", "gzip_images", ok["gzip_images"], 10, random.Random(4))


# ---- CSV (the first byte picks the options, see read_csv) ----

HEADER, SEMICOLON, TARGET_INDEX, TARGET_NAME, F64, INT_TARGET = 1, 2, 4, 8, 16, 32


def csv_corpus():
    def opts(flags, index=0):
        return bytes([flags, index & 0xFF])

    table = b"a,b,label\n1,2.5,0\n-3,1e3,1\n nan , inf ,2\n\n4,5,1\n"
    ok = {
        "header_no_target": opts(HEADER) + table,
        "header_target_name": opts(HEADER | TARGET_NAME | INT_TARGET) + table,
        "target_last": opts(HEADER | TARGET_INDEX | F64, -1) + table,
        "no_header": opts(0) + b"1,2\n3,4\n",
        "semicolon": opts(HEADER | SEMICOLON) + b"x;y\n1;2\n",
        "quoted": opts(HEADER) + b"a,b\n\"1\",2\n",
    }
    for name, data in ok.items():
        put("csv", "ok_" + name, data)
    h = opts(HEADER)
    bad = {
        "word_field": h + b"a,b\n1,two\n",
        "ragged_short": h + b"a,b\n1\n",
        "ragged_long": h + b"a,b\n1,2,3\n",
        "empty_field": h + b"a,b\n1,\n",
        "target_name_missing": opts(HEADER | TARGET_NAME) + b"a,b\n1,2\n",
        "target_name_without_header": opts(TARGET_NAME) + b"1,2\n",
        "target_name_and_index": opts(HEADER | TARGET_NAME | TARGET_INDEX, 0) + b"a,label\n1,2\n",
        "target_index_out_of_range": opts(HEADER | TARGET_INDEX, 5) + b"a,b\n1,2\n",
        "target_index_too_negative": opts(HEADER | TARGET_INDEX, -3) + b"a,b\n1,2\n",
        "int_target_fraction": opts(HEADER | TARGET_NAME | INT_TARGET) + b"x,label\n1,1.5\n",
        "int_target_nan": opts(HEADER | TARGET_NAME | INT_TARGET) + b"x,label\n1,nan\n",
        "int_target_huge": opts(HEADER | TARGET_NAME | INT_TARGET) + b"x,label\n1,1e30\n",
        "nul_byte": h + b"a,b\n1,\x002\n",
        "hex_number": h + b"a,b\n0x10,2\n",
        "overflowing_number": h + b"a,b\n1e400,2\n",
        "header_only": h + b"a,b\n",
        "empty": h,
        "only_newlines": h + b"\n\n\n",
        "wrong_delimiter": opts(HEADER | SEMICOLON) + b"a,b\n1,2\n",
        "trailing_delimiter": h + b"a,b\n1,2,\n",
        "long_line": h + b"a\n" + b"1" * 100000 + b"x\n",
        "duplicate_header_target": opts(HEADER | TARGET_NAME) + b"label,label\n1,2\n",
        "binary": h + bytes(range(256)),
    }
    for name, data in bad.items():
        put("csv", "bad_" + name, data)
    rng = random.Random(5)
    for name, data in ok.items():
        byte_mutants("csv", name, data, 6, rng)
        for i in range(1, 4):
            put("csv", f"any_{name}_cut_{i}", data[: (len(data) * i) // 4])


# ---- YAML training configs ----

def train_config_corpus():
    root = Path(__file__).resolve().parents[2] / "config"
    seeds = {p.stem: p.read_text() for p in sorted(root.glob("*.yaml"))}
    for name, text in seeds.items():
        put("train_config", "ok_" + name, text)
    mlp = seeds["fashion_mnist_mlp"]

    def replace(old, new):
        assert old in mlp, old
        return mlp.replace(old, new)

    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8))
    bad = {
        "empty": "",
        "not_a_map": "- 1\n- 2\n",
        "scalar": "42\n",
        "duplicate_key": mlp + "epochs: 3\n",
        "unknown_key": mlp + "epoks: 3\n",
        "unknown_section_key": replace("  lr: 0.001", "  lr: 0.001\n  momentum_typo: 0.9"),
        "threads_huge": replace("threads: 2", "threads: 100000"),
        "threads_wraps": replace("threads: 2", "threads: 4294967298"),
        "threads_negative": replace("threads: 2", "threads: -1"),
        "threads_text": replace("threads: 2", "threads: many"),
        "epochs_negative": replace("epochs: 8", "epochs: -1"),
        "epochs_float": replace("epochs: 8", "epochs: 2.5"),
        "lr_negative": replace("lr: 0.001", "lr: -1"),
        "lr_nan": replace("lr: 0.001", "lr: .nan"),
        "lr_inf": replace("lr: 0.001", "lr: .inf"),
        "eps_negative": replace("lr: 0.001", "lr: 0.001\n  eps: -1"),
        "batch_size_zero": replace("batch_size: 64", "batch_size: 0"),
        "num_workers_huge": replace("num_workers: 1", "num_workers: 100000"),
        "hidden_text": replace("hidden: [256, 128]", "hidden: abc"),
        "hidden_negative": replace("hidden: [256, 128]", "hidden: [-5]"),
        "hidden_zero": replace("hidden: [256, 128]", "hidden: [0]"),
        "model_unknown": replace("name: mlp", "name: resnet9000"),
        "model_scalar": replace("model:\n  name: mlp\n  hidden: [256, 128]", "model: 5"),
        "optimizer_unknown": replace("name: adam", "name: lion"),
        "schedule_unknown": replace("name: cosine", "name: zigzag"),
        "step_gamma_negative": replace("  name: cosine", "  name: step\n  step_size: 1\n  gamma: -5"),
        "onecycle_max_lr_negative": replace("  name: cosine", "  name: onecycle\n  max_lr: -1"),
        "complex_key": "? [a, b]\n: 1\n" + mlp,
        "billion_laughs": laughs,
        "deep_flow_nesting": "model: " + "[" * 20000 + "]" * 20000 + "\n",
        "deep_block_nesting": "".join("  " * i + f"k{i}:\n" for i in range(3000)),
        "tab_indent": mlp.replace("  name: mlp", "\tname: mlp"),
        "unclosed_flow": replace("hidden: [256, 128]", "hidden: [256, 128"),
        "unclosed_quote": replace("name: mlp", "name: \"mlp"),
        "binary": "\0\1\2\3\xff\xfe",
        "anchor_undefined": replace("lr: 0.001", "lr: *nothing"),
        "seed_negative": replace("seed: 0", "seed: -3"),
        "seed_huge": replace("seed: 0", "seed: 123456789012345678901234567890"),
        "amp_unknown": mlp + "amp: fp4\n",
        "output_empty": replace("output: runs/fashion_mnist_mlp", "output: ''"),
        "output_too_long": replace("output: runs/fashion_mnist_mlp", "output: " + "x" * 5000),
        "clip_negative": mlp + "clip_grad_norm: -1\n",
        "accumulate_zero": mlp + "accumulate_grad_batches: 0\n",
        "data_unknown": replace("name: fashion_mnist", "name: imagenet"),
        "long_string_key": mlp + "k" * 100000 + ": 1\n",
        "merge_key_loop": "base: &b {x: 1}\nother:\n  <<: *b\n  <<: *b\n" + mlp,
        "alias_containing_itself": "base: &b\n  inner: *b\n" + mlp,
    }
    for name, text in bad.items():
        put("train_config", "bad_" + name, text.encode("utf-8", "surrogateescape"))
    rng = random.Random(6)
    for name, text in seeds.items():
        byte_mutants("train_config", name, text.encode(), 8, rng)


# ---- graph archives (a safetensors file whose metadata holds the graph) ----

def read_archive(blob):
    tensors, metadata = read_checkpoint(blob)
    return tensors, metadata, json.loads(metadata["graph"])


def write_archive(tensors, metadata, graph, graph_text=None):
    metadata = dict(metadata)
    metadata["graph"] = graph_text if graph_text is not None else json.dumps(graph, separators=(",", ":"))
    return write_checkpoint(tensors, metadata, fix_checksum=False)


def graph_archive_corpus():
    blob = (CORPUS / "graph_archive" / "ok_mlp.emb").read_bytes()
    tensors, metadata, graph = read_archive(blob)
    put("graph_archive", "ok_rewritten", write_archive(tensors, metadata, graph))
    first_node = graph["nodes"][0]
    first_input = graph["inputs"][0]
    param = next(i for i in graph["inputs"] if i["role"] == "parameter")
    ids = [i["id"] for i in graph["inputs"]] + [o["id"] for n in graph["nodes"] for o in n["outputs"]]
    last_out = graph["nodes"][-1]["outputs"][0]["id"]

    def edited(edit, meta=None, tens=None):
        g = json.loads(json.dumps(graph))
        m = dict(metadata)
        t = dict(tensors)
        if edit:
            edit(g)
        if meta:
            meta(m)
        if tens:
            tens(t)
        return write_archive(t, m, g)

    def set_in(path, value):
        def edit(g):
            obj = g
            for key in path[:-1]:
                obj = obj[key]
            obj[path[-1]] = value
        return edit

    def first_value_arg(g):
        return next(a for a in g["nodes"][0]["args"] if "value" in a)

    def dangling(g):
        first_value_arg(g)["value"] = 999999

    def self_cycle(g):
        first_value_arg(g)["value"] = g["nodes"][0]["outputs"][0]["id"]

    def forward_ref(g):
        first_value_arg(g)["value"] = last_out

    def drop_args(g):
        g["nodes"][0]["args"] = g["nodes"][0]["args"][:1]

    def extra_args(g):
        g["nodes"][0]["args"] = g["nodes"][0]["args"] + [{"int": 1}] * 8

    def unknown_arg_kind(g):
        g["nodes"][0]["args"][0] = {"code": "rm -rf /"}

    def arg_wrong_type(g):
        g["nodes"][0]["args"][0] = {"str": "x"}

    def duplicate_output_id(g):
        g["nodes"][0]["outputs"][0]["id"] = first_input["id"]

    def many_dims(g):
        g["inputs"][0]["shape"] = [[0, 1]] * 65

    bad = {
        "format": edited(None, meta=lambda m: m.__setitem__("format", "ember.grap")),
        "version_2": edited(None, meta=lambda m: m.__setitem__("format_version", "2")),
        "version_text": edited(None, meta=lambda m: m.__setitem__("format_version", "one")),
        "no_graph": write_checkpoint(tensors, {k: v for k, v in metadata.items() if k != "graph"}, fix_checksum=False),
        "graph_not_json": write_archive(tensors, metadata, None, graph_text="{\"nodes\": ["),
        "graph_array": write_archive(tensors, metadata, None, graph_text="[]"),
        "graph_deep_nesting": write_archive(tensors, metadata, None, graph_text="[" * 100000 + "]" * 100000),
        "no_nodes": edited(lambda g: g.pop("nodes")),
        "nodes_object": edited(set_in(["nodes"], {"a": 1})),
        "inputs_string": edited(set_in(["inputs"], "x")),
        "outputs_unknown_id": edited(set_in(["outputs"], [123456])),
        "outputs_string_id": edited(set_in(["outputs"], ["%7"])),
        "training_string": edited(set_in(["training"], "yes")),
        "input_dtype": edited(set_in(["inputs", 0, "dtype"], "float99")),
        "input_device": edited(set_in(["inputs", 0, "device"], "tpu:0")),
        "input_device_index": edited(set_in(["inputs", 0, "device"], "cuda:99999999999")),
        "input_role": edited(set_in(["inputs", 0, "role"], "owner")),
        "input_shape_string": edited(set_in(["inputs", 0, "shape"], "2x6")),
        "input_shape_triple": edited(set_in(["inputs", 0, "shape"], [[1, 0, 0], [0, 6]])),
        "input_shape_negative": edited(set_in(["inputs", 0, "shape"], [[1, 0], [0, -6]])),
        "input_shape_huge": edited(set_in(["inputs", 0, "shape"], [[1 << 62, 0], [0, 1 << 62]])),
        "input_many_dims": edited(many_dims),
        "input_duplicate_id": edited(lambda g: g["inputs"].append(dict(g["inputs"][1]))),
        "input_id_negative": edited(set_in(["inputs", 0, "id"], -1)),
        "input_id_float": edited(set_in(["inputs", 0, "id"], 1.5)),
        "param_shape_mismatch": edited(set_in(["inputs", graph["inputs"].index(param), "shape"], [[0, 2], [0, 2]])),
        "op_unknown": edited(set_in(["nodes", 0, "op"], "system")),
        "op_number": edited(set_in(["nodes", 0, "op"], 7)),
        "op_empty": edited(set_in(["nodes", 0, "op"], "")),
        "args_missing": edited(lambda g: g["nodes"][0].pop("args")),
        "args_too_few": edited(drop_args),
        "args_too_many": edited(extra_args),
        "arg_unknown_kind": edited(unknown_arg_kind),
        "arg_wrong_type": edited(arg_wrong_type),
        "arg_dangling": edited(dangling),
        "arg_cycle": edited(self_cycle),
        "arg_forward_reference": edited(forward_ref),
        "outputs_missing": edited(lambda g: g["nodes"][0].pop("outputs")),
        "output_reuses_input_id": edited(duplicate_output_id),
        "output_dtype": edited(set_in(["nodes", 0, "outputs", 0, "dtype"], "int3")),
        "random_blocks_negative": edited(set_in(["nodes", 0, "random_blocks"], [-1, -1])),
        "list_output_number": edited(set_in(["nodes", 0, "list_output"], 2)),
        "tensor_missing": edited(None, tens=lambda t: t.pop("input/" + param["name"])),
        "tensor_extra": edited(None, tens=lambda t: t.__setitem__("input/ghost", ("F32", [1], b"\0" * 4))),
        "tensor_wrong_dtype": edited(None, tens=lambda t: t.__setitem__(
            "input/" + param["name"], ("F64", t["input/" + param["name"]][1], t["input/" + param["name"]][2] * 2))),
        "tensor_wrong_shape": edited(None, tens=lambda t: t.__setitem__(
            "input/" + param["name"], ("F32", [len(t["input/" + param["name"]][2]) // 4], t["input/" + param["name"]][2]))),
        "not_safetensors": b"ember.graph\n" + json.dumps(graph).encode(),
    }
    assert len(ids) == len(set(ids)), "the seed archive's ids are unique"
    for name, data in bad.items():
        put("graph_archive", "bad_" + name, data)
    truncations("graph_archive", "mlp", blob)
    rng = random.Random(7)
    for seed in sorted((CORPUS / "graph_archive").glob("ok_*.emb")):
        byte_mutants("graph_archive", seed.stem, seed.read_bytes(), 6, rng)
    # Mutations inside the graph JSON: numbers changed, keys dropped.
    text = json.dumps(graph, separators=(",", ":"))
    for i in range(12):
        t = list(text)
        for _ in range(rng.randint(1, 3)):
            digits = [k for k, c in enumerate(t) if c.isdigit()]
            t[rng.choice(digits)] = rng.choice("0123456789-")
        put("graph_archive", f"any_mlp_json_mutant_{i}", write_archive(tensors, metadata, None, "".join(t)))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shutil.rmtree(CORPUS, ignore_errors=True)
    subprocess.run([sys.argv[1], str(CORPUS)], check=True)
    safetensors_corpus()
    checkpoint_corpus()
    idx_corpus()
    csv_corpus()
    train_config_corpus()
    graph_archive_corpus()
    for reader in sorted(CORPUS.iterdir()):
        names = [p.name for p in reader.iterdir()]
        print(f"{reader.name}: {sum(n.startswith('ok_') for n in names)} ok, "
              f"{sum(not n.startswith('ok_') for n in names)} malformed")


if __name__ == "__main__":
    main()
