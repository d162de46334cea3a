"""Hostile GGUF input: every malformed file raises GGUFError naming the field, the byte offset
and the expectation; nothing else escapes (no crash, hang, MemoryError or huge allocation).

Files are built here byte by byte with a tiny independent encoder (not qgemv's writer), which
records where every integer field lies so that tests can mutate fields systematically.
"""
from __future__ import annotations

import re
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qgemv import GGUFError, load_gguf
from qgemv._formats import DEQUANTIZE, lookup

# GGUF value type ids
(UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY,
 UINT64, INT64, FLOAT64) = range(13)
F32, Q8_0 = lookup("f32").id, lookup("q8_0").id


class Builder:
    """Little-endian GGUF bytes, remembering each integer field's (name, offset, size)."""

    def __init__(self):
        self.buf = bytearray()
        self.fields: list[tuple[str, int, int]] = []

    def int(self, name: str, value: int, size: int) -> "Builder":
        self.fields.append((name, len(self.buf), size))
        self.buf += value.to_bytes(size, "little", signed=value < 0)
        return self

    def u32(self, name, value):
        return self.int(name, value, 4)

    def u64(self, name, value):
        return self.int(name, value, 8)

    def raw(self, data: bytes) -> "Builder":
        self.buf += data
        return self

    def string(self, name: str, s, length: int | None = None) -> "Builder":
        data = s.encode() if isinstance(s, str) else s
        return self.u64(f"{name} length", len(data) if length is None else length).raw(data)

    def header(self, n_tensors, n_kv, version=3, magic=b"GGUF"):
        return self.raw(magic).u32("version", version).u64("n_tensors", n_tensors).u64("n_kv", n_kv)

    def kv(self, key, vtype, payload: bytes = b"", *, key_length=None):
        self.string(f"key {key!r}", key, key_length)
        return self.u32(f"{key!r} value type", vtype).raw(payload)

    def array_kv(self, key, etype, count, payload: bytes):
        self.kv(key, ARRAY).u32(f"{key!r} element type", etype).u64(f"{key!r} count", count)
        return self.raw(payload)

    def string_array_kv(self, key, strings):
        self.kv(key, ARRAY).u32(f"{key!r} element type", STRING).u64(f"{key!r} count", len(strings))
        for i, s in enumerate(strings):
            self.string(f"{key!r}[{i}]", s)
        return self

    def tensor(self, name, dims, type_id, offset):
        self.string(f"tensor {name!r} name", name).u32(f"{name!r} n_dims", len(dims))
        for k, d in enumerate(dims):
            self.u64(f"{name!r} dims[{k}]", d)
        return self.u32(f"{name!r} type", type_id).u64(f"{name!r} offset", offset)

    def pad(self, alignment=32):
        return self.raw(bytes(-len(self.buf) % alignment))

    def bytes(self) -> bytes:
        return bytes(self.buf)


def valid_file(*, kvs=None, tensors=None, data=None, pad=True) -> Builder:
    """A small valid file: 6 key-value pairs of assorted types, an f32 and a q8_0 tensor; the
    last tensor's data ends exactly at the end of the file (so every prefix is invalid)."""
    b = Builder()
    kvs = kvs if kvs is not None else [
        lambda b: b.kv("general.architecture", STRING, struct.pack("<Q", 5) + b"llama"),
        lambda b: b.kv("llama.block_count", UINT32, struct.pack("<I", 2)),
        lambda b: b.kv("llama.rope.freq_base", FLOAT32, struct.pack("<f", 1e4)),
        lambda b: b.kv("tokenizer.ggml.add_bos_token", BOOL, b"\x01"),
        lambda b: b.string_array_kv("tokenizer.ggml.tokens", ["<s>", "", "▁the"]),
        lambda b: b.array_kv("tokenizer.ggml.token_type", INT32, 3, struct.pack("<3i", 1, 2, 3)),
    ]
    tensors = tensors if tensors is not None else [
        ("norm", (8,), F32, 0),
        ("w", (32, 2), Q8_0, 32),
    ]
    b.header(len(tensors), len(kvs))
    for add in kvs:
        add(b)
    for t in tensors:
        b.tensor(*t)
    if pad:
        b.pad()
    if data is None:
        data = np.arange(8, dtype="<f4").tobytes() + bytes(range(2 * 34))
    return b.raw(data)


VALID = valid_file().bytes()


def open_everything(data) -> None:
    """Open a file and touch every value and tensor; the only error allowed is GGUFError (and
    NotImplementedError for a tensor type without kernels)."""
    f = load_gguf(data)
    for key in f.metadata:
        f.metadata[key]
    for name, info in f.tensors.items():
        assert f.tensor_data(name).nbytes == info.nbytes
        try:
            assert f.array(name).shape == info.shape
        except NotImplementedError:
            assert DEQUANTIZE not in info.format.ops
    f.close()


def assert_refused(data: bytes, field: str):
    """load_gguf raises GGUFError whose message names ``field`` and a byte offset in the file."""
    with pytest.raises(GGUFError, match=field) as e:
        open_everything(data)
    at = re.search(r"at byte (\d+)", str(e.value))
    assert at, f"no byte offset in: {e.value}"
    assert 0 <= int(at.group(1)) <= len(data), str(e.value)
    return str(e.value)


def test_the_base_file_is_valid():
    f = load_gguf(VALID)
    assert f.metadata["tokenizer.ggml.tokens"] == ["<s>", "", "▁the"]
    assert f.tensors["w"].offset + f.tensors["w"].nbytes == len(VALID)
    np.testing.assert_array_equal(f.array("norm"), np.arange(8))


# --------------------------------------------------------------------------------------------
# named cases from the issue: each names the field it must blame


def _kv_file(add):
    """One key-value pair and no tensors; the file ends right after it, as llama.cpp's
    vocabulary files do."""
    return valid_file(kvs=[add], tensors=[], data=b"", pad=False).bytes()


def _tensor_file(tensors, data=bytes(128)):
    return valid_file(kvs=[], tensors=tensors, data=data).bytes()


def _swap_header(data):
    """The header re-encoded big-endian, as a byte-swapped (s390x) GGUF file has it."""
    version, n_t, n_kv = struct.unpack_from("<IQQ", data, 4)
    return data[:4] + struct.pack(">IQQ", version, n_t, n_kv) + data[24:]


HOSTILE = {  # id: (file bytes, regex the message must match: field, byte offset, expectation)
    "empty": (b"", "magic at byte 0"),
    "bad-magic": (b"GGUX" + VALID[4:], "magic at byte 0"),
    "short-magic": (b"GG", "magic at byte 0"),
    "version-0": (VALID[:4] + struct.pack("<I", 0) + VALID[8:], "version at byte 4"),
    "version-1": (VALID[:4] + struct.pack("<I", 1) + VALID[8:], "version at byte 4.*obsolete"),
    "version-4": (VALID[:4] + struct.pack("<I", 4) + VALID[8:], "version at byte 4"),
    "big-endian": (_swap_header(VALID), "version at byte 4.*big-endian"),
    "n_tensors-huge": (VALID[:8] + struct.pack("<Q", 2**63) + VALID[16:], "n_tensors at byte 8"),
    "n_kv-huge": (VALID[:16] + struct.pack("<Q", 2**64 - 1) + VALID[24:], "n_kv at byte 16"),
    "key-past-end": (
        _kv_file(lambda b: b.kv("k", UINT8, b"\0", key_length=1000)),
        "metadata key #0 length at byte 24"),
    "key-length-overflows": (
        _kv_file(lambda b: b.kv("k", UINT8, b"\0", key_length=2**64 - 1)),
        "metadata key #0 length at byte 24"),
    "key-invalid-utf8": (
        _kv_file(lambda b: b.kv(b"k\xff", UINT8, b"\0")),
        "metadata key #0 at byte 32: expected UTF-8"),
    "value-type-13": (
        _kv_file(lambda b: b.kv("k", 13, b"\0")),
        r"metadata\['k'\] value type at byte 33"),
    "value-type-max": (
        _kv_file(lambda b: b.kv("k", 2**32 - 1, b"\0")),
        "value type at byte 33"),
    "nested-array": (
        _kv_file(lambda b: b.array_kv("k", ARRAY, 1, struct.pack("<IQ", UINT8, 0))),
        "element type at byte 37.*nested"),
    "array-element-type-unknown": (
        _kv_file(lambda b: b.array_kv("k", 99, 1, b"\0")),
        "element type at byte 37"),
    "array-past-end": (
        _kv_file(lambda b: b.array_kv("k", UINT32, 1000, bytes(8))),
        "count at byte 41"),
    "array-count-overflows": (
        _kv_file(lambda b: b.array_kv("k", UINT64, 2**62, bytes(8))),
        "count at byte 41"),
    "string-array-count-past-end": (
        _kv_file(lambda b: b.array_kv("k", STRING, 2**40, bytes(16))),
        "count at byte 41"),
    "string-value-past-end": (
        _kv_file(lambda b: b.kv("k", STRING, struct.pack("<Q", 99) + b"ab")),
        r"metadata\['k'\] length at byte 37"),
    "string-value-overflows": (
        _kv_file(lambda b: b.kv("k", STRING, struct.pack("<Q", 2**64 - 1))),
        "length at byte 37"),
    "string-element-past-end": (
        _kv_file(lambda b: b.array_kv(
            "k", STRING, 2, struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 500) + b"xyz")),
        r"metadata\['k'\]\[1\] length at byte 58"),
    "string-element-overflows": (
        _kv_file(lambda b: b.array_kv("k", STRING, 2, struct.pack("<Q", 2**64 - 8) + bytes(8))),
        r"\[0\] length at byte 49"),
    "string-element-truncated-prefix": (
        _kv_file(lambda b: b.array_kv("k", STRING, 2, struct.pack("<Q", 5) + b"abcde" + b"\1\0\0")),
        r"\[1\] length at byte 62"),
    "bool-2": (
        _kv_file(lambda b: b.kv("k", BOOL, b"\x02")),
        "at byte 37: expected a bool"),
    "bool-array-2": (
        _kv_file(lambda b: b.array_kv("k", BOOL, 2, b"\x01\x07")),
        r"\[1\] at byte 50: expected a bool"),
    "duplicate-key": (
        valid_file(kvs=[lambda b: b.kv("k", UINT8, b"\1"), lambda b: b.kv("k", UINT8, b"\2")],
                   tensors=[], data=b"").bytes(),
        "expected unique keys"),
    "alignment-uint64": (
        _kv_file(lambda b: b.kv("general.alignment", UINT64, struct.pack("<Q", 32))),
        "general.alignment.*at byte 24: expected type uint32, got uint64"),
    "alignment-string": (
        _kv_file(lambda b: b.kv("general.alignment", STRING, struct.pack("<Q", 0))),
        "general.alignment.*expected type uint32, got string"),
    "alignment-zero": (
        _kv_file(lambda b: b.kv("general.alignment", UINT32, struct.pack("<I", 0))),
        "general.alignment.*expected a power of two, got 0"),
    "alignment-48": (
        _kv_file(lambda b: b.kv("general.alignment", UINT32, struct.pack("<I", 48))),
        "general.alignment.*expected a power of two, got 48"),
    "tensor-name-past-end": (
        VALID[:8] + struct.pack("<QQ", 1, 0) + struct.pack("<Q", 50) + bytes(32),
        "tensor #0 name length at byte 24"),
    "tensor-name-invalid-utf8": (
        _tensor_file([(b"\xc3(", (8,), F32, 0)]),
        "tensor #0 name at byte 32: expected UTF-8"),
    "duplicate-tensor": (
        _tensor_file([("t", (8,), F32, 0), ("t", (8,), F32, 32)]),
        "tensor 't' name at byte 57: expected unique tensor names"),
    "n_dims-0": (
        _tensor_file([("t", (), F32, 0)]),
        "tensor 't' n_dims at byte 33: expected 1..4, got 0"),
    "n_dims-5": (
        _tensor_file([("t", (1, 1, 1, 1, 1), F32, 0)]),
        "n_dims at byte 33: expected 1..4, got 5"),
    "dim-zero": (
        _tensor_file([("t", (8, 0), F32, 0)]),
        r"dims\[1\] at byte 45: expected >= 1, got 0"),
    "dims-overflow-int64": (
        _tensor_file([("t", (2**32, 2**32), F32, 0)]),
        "dims at byte 37.*overflows int64"),
    "dims-huge": (
        _tensor_file([("t", (2**62, 1), F32, 0)]),
        "offset at byte .*end within the file"),
    "type-unknown": (
        _tensor_file([("t", (8,), 99, 0)]),
        "tensor 't' type at byte 45.*got 99"),
    "type-retired": (
        _tensor_file([("t", (32,), 4, 0)]),
        r"tensor 't' type at byte 45.*got 4 \(unknown or retired\)"),
    "type-max": (
        _tensor_file([("t", (32,), 2**32 - 1, 0)]),
        "type at byte 45"),
    "ne0-not-block-multiple": (
        _tensor_file([("t", (33, 2), Q8_0, 0)]),
        r"dims\[0\] at byte 37: expected a multiple of the q8_0 block size 32, got 33"),
    "data-outside-file": (
        _tensor_file([("t", (8,), F32, 2**20)]),
        "tensor 't' offset at byte 49: expected"),
    "data-offset-overflows": (
        _tensor_file([("t", (8,), F32, 2**64 - 32)]),
        "offset at byte 49"),
    "data-past-end": (
        _tensor_file([("t", (64,), F32, 0)], data=bytes(255)),
        "end within the file"),
    "misaligned": (
        _tensor_file([("t", (8,), F32, 4)]),
        "offset at byte 49: expected a multiple of the alignment 32"),
    "overlap": (
        _tensor_file([("a", (16,), F32, 0), ("b", (8,), F32, 32)]),
        "expected no overlap.*'a'"),
    "overlap-reordered": (
        _tensor_file([("a", (8,), F32, 32), ("b", (16,), F32, 0)]),
        "overlap"),
}


@pytest.mark.parametrize("data,field", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_file_is_refused_naming_the_field(data, field):
    assert_refused(data, field)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc/self/maps")
@pytest.mark.parametrize("name", ["empty", "bad-magic", "big-endian", "bool-array-2", "overlap"])
def test_hostile_file_on_disk_is_refused_and_unmapped(tmp_path, name):
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(HOSTILE[name][0])
    with pytest.raises(GGUFError, match=HOSTILE[name][1]):
        load_gguf(path)
    assert str(path.resolve()) not in Path("/proc/self/maps").read_text()


def test_invalid_utf8_in_a_lazy_string_array_raises_on_access():
    data = _kv_file(lambda b: b.string_array_kv("tokens", ["ok", b"\xe2\x82"]))
    f = load_gguf(data)
    assert f.fields["tokens"].count == 2  # opens: string arrays are only walked
    with pytest.raises(GGUFError, match=r"metadata\['tokens'\]\[1\] at byte 72: expected UTF-8"):
        f.metadata["tokens"]


def test_a_file_without_tensors_may_end_before_its_data_offset():
    data = _kv_file(lambda b: b.kv("k", UINT8, b"\x07"))
    f = load_gguf(data)
    assert f.metadata["k"] == 7 and f.data_offset > len(data) and not f.tensors


# --------------------------------------------------------------------------------------------
# systematic: every prefix, every integer field


@pytest.mark.parametrize("source", ["bytes", "file"])
def test_every_truncation_is_refused(tmp_path, source):
    path = tmp_path / "cut.gguf"
    for cut in range(len(VALID)):
        data = VALID[:cut]
        if source == "file":
            path.write_bytes(data)
        with pytest.raises(GGUFError, match="at byte"):
            open_everything(data if source == "bytes" else path)


HOSTILE_INTS = {4: [0, 1, 5, 13, 0xFF, 2**31, 2**32 - 1],
                8: [0, 1, 2**31, 2**32, 2**62, 2**63, 2**64 - 1]}
BASE = valid_file()


@pytest.mark.parametrize("name,offset,size", BASE.fields, ids=[f[0] for f in BASE.fields])
def test_mutated_integer_field_is_refused_or_read_cleanly(name, offset, size):
    refused = 0
    for value in HOSTILE_INTS[size] + [int.from_bytes(VALID[offset:offset + size], "little") + 1]:
        data = bytearray(VALID)
        data[offset:offset + size] = (value % 2**(8 * size)).to_bytes(size, "little")
        try:
            open_everything(bytes(data))
        except GGUFError as e:
            assert re.search(r"at byte \d+: expected ", str(e)), str(e)
            refused += 1
    assert refused  # at least one hostile value of every field is caught


@pytest.mark.parametrize("data,field", [HOSTILE[k] for k in (
    "n_kv-huge", "array-count-overflows", "string-array-count-past-end", "dims-huge",
    "string-element-overflows")],
    ids=["n_kv", "array-count", "string-count", "dims", "string-length"])
def test_huge_counts_allocate_nothing(data, field):
    tracemalloc.start()
    try:
        with pytest.raises(GGUFError, match=field):
            load_gguf(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, f"peak {peak} bytes for a {len(data)}-byte file"


# --------------------------------------------------------------------------------------------
# property: random mutations


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)),
                          min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, len(VALID))))
def test_random_mutations_give_gguf_error_or_a_clean_read(mutations, cut):
    data = bytearray(VALID)
    for pos, value in mutations:
        data[pos] = value
    try:
        open_everything(bytes(data[:cut]))
    except GGUFError as e:
        assert re.search(r"at byte \d+: expected ", str(e)), str(e)
