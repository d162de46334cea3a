"""GGUF files: a zero-copy reader and an atomic writer (pure Python: numpy, mmap, struct).

Layout of a GGUF file (little-endian, versions 2 and 3)::

    magic "GGUF" | version u32 | n_tensors u64 | n_kv u64
    n_kv x       key string | value type u32 | value
    n_tensors x  name string | n_dims u32 | dims u64[n_dims] | ggml type u32 | offset u64
    padding to ``general.alignment`` (default 32), then the tensor data

A string is a u64 byte length followed by UTF-8 bytes; an array value is an element type
u32, a u64 count and the elements.  Tensor ``dims`` are innermost first (ggml's ``ne``); numpy
shapes are the reverse, computed in one place: :func:`numpy_shape`.

Design
------
1. The header is validated completely at open: every count, length and offset is checked
   against the bytes left before it is used, so a hostile file raises :class:`GGUFError`
   (naming the field, its byte offset and the expectation) and never allocates more than
   its own size.
2. Nothing is copied: numeric metadata arrays and tensor data are read-only numpy views of
   the mmap.  String arrays (262,144-token vocabularies) are only walked at open, to find
   their end, and decoded on first access.
3. Sizes come from the format table (``qgemv._formats``) only.  A tensor whose type is in
   the table but has no kernels yet is listed; only using it raises ``NotImplementedError``.
4. The writer emits what ggml's own writer does (tensor data in order, each padded to the
   alignment) and replaces the target file atomically.
"""
from __future__ import annotations

import enum
import math
import mmap
import os
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, NamedTuple

import numpy as np

from qgemv._formats import BY_ID, DEQUANTIZE, Format, lookup

__all__ = [
    "GGUFError", "GGUFFile", "GGUFWriter", "TensorInfo", "Field", "ValueType",
    "load_gguf", "numpy_shape", "ggml_dims",
]

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS
_INT64_MAX = 2**63 - 1

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_HEADER = struct.Struct("<4sIQQ")  # magic, version, n_tensors, n_kv

# smallest possible encodings, used to bound counts by the bytes left before looping
_MIN_KV_BYTES = 8 + 4 + 1  # empty key, value type, one-byte value
_MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8  # empty name, n_dims, one dim, type, offset


class GGUFError(ValueError):
    """A GGUF file is malformed: the message names the field, its byte offset and what was
    expected, e.g. ``"tensor 'w' n_dims at byte 96: expected 1..4, got 7"``."""


class ValueType(enum.IntEnum):
    """GGUF metadata value types (the on-disk ids)."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    @classmethod
    def of(cls, value_type) -> "ValueType":
        """The ValueType for a member, an id or a case-insensitive name (``"uint32"``)."""
        if isinstance(value_type, str):
            try:
                return cls[value_type.upper()]
            except KeyError:
                raise ValueError(f"unknown GGUF value type {value_type!r}; known: "
                                 f"{', '.join(t.name.lower() for t in cls)}") from None
        return cls(value_type)


# fixed-size value types: little-endian numpy dtype (its itemsize is the encoded size)
_DTYPES = {
    ValueType.UINT8: np.dtype("<u1"), ValueType.INT8: np.dtype("<i1"),
    ValueType.UINT16: np.dtype("<u2"), ValueType.INT16: np.dtype("<i2"),
    ValueType.UINT32: np.dtype("<u4"), ValueType.INT32: np.dtype("<i4"),
    ValueType.UINT64: np.dtype("<u8"), ValueType.INT64: np.dtype("<i8"),
    ValueType.FLOAT32: np.dtype("<f4"), ValueType.FLOAT64: np.dtype("<f8"),
    ValueType.BOOL: np.dtype("<u1"),
}
# struct codes spelled out: numpy's dtype.char for uint64 is "L", which struct packs in 4 bytes
_STRUCTS = {t: struct.Struct("<" + c) for t, c in (
    (ValueType.UINT8, "B"), (ValueType.INT8, "b"), (ValueType.UINT16, "H"), (ValueType.INT16, "h"),
    (ValueType.UINT32, "I"), (ValueType.INT32, "i"),
    (ValueType.UINT64, "Q"), (ValueType.INT64, "q"),
    (ValueType.FLOAT32, "f"), (ValueType.FLOAT64, "d"), (ValueType.BOOL, "B"))}


def numpy_shape(ggml_dims) -> tuple[int, ...]:
    """Numpy shape (outermost first) of a tensor with GGUF/ggml ``ne`` dims (innermost first).

    Examples
    --------
    >>> numpy_shape((4096, 14336))
    (14336, 4096)
    """
    return tuple(int(d) for d in reversed(ggml_dims))


def ggml_dims(shape) -> tuple[int, ...]:
    """GGUF/ggml ``ne`` dims (innermost first) of a numpy ``shape``; inverse of numpy_shape."""
    return tuple(int(d) for d in reversed(shape))


class TensorInfo(NamedTuple):
    """One tensor of a GGUF file.

    Attributes
    ----------
    name : str
    dims : tuple of int
        ggml ``ne`` order, innermost first, as stored in the file.
    shape : tuple of int
        numpy order, ``numpy_shape(dims)``; a 2-D weight is ``(rows, cols)``.
    qtype : str
        ggml type name (``"q4_K"``), the same spelling as ``QMatrix.qtype``.
    offset : int
        absolute byte offset of the tensor data in the file.
    nbytes : int
        bytes of tensor data.
    """

    name: str
    dims: tuple
    shape: tuple
    qtype: str
    offset: int
    nbytes: int

    @property
    def format(self) -> Format:
        """The format table row of ``qtype`` (block size, byte size, ops, ...)."""
        return lookup(self.qtype)


class Field(NamedTuple):
    """How one metadata value is stored: what a writer needs to reproduce it exactly.

    ``type`` is the value type; for arrays ``type`` is ``ValueType.ARRAY`` and
    ``element_type`` the type of the elements (None for scalars).  ``count`` is the number of
    array elements (1 for scalars); ``offset`` the byte offset of the key-value pair.
    """

    key: str
    type: ValueType
    element_type: ValueType | None
    count: int
    offset: int


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


# ---------------------------------------------------------------------------------------------
# Reader


class _Cursor:
    """Bounds-checked little-endian reads from a buffer; every read names its field."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf, pos: int, end: int):
        self.buf, self.pos, self.end = buf, pos, end

    def left(self) -> int:
        return self.end - self.pos

    def need(self, n: int, field: str, what: str) -> int:
        """Reserve ``n`` bytes for ``field``; return their start."""
        if n > self.end - self.pos:
            raise GGUFError(f"{field} at byte {self.pos}: expected {what}, got "
                            f"{self.end - self.pos} bytes before the end of the file")
        start = self.pos
        self.pos += n
        return start

    def scalar(self, vtype: ValueType, field: str):
        s = _STRUCTS[vtype]
        start = self.need(s.size, field, f"a {s.size}-byte {vtype.name.lower()}")
        return s.unpack_from(self.buf, start)[0]

    def u32(self, field: str) -> int:
        return self.scalar(ValueType.UINT32, field)

    def u64(self, field: str) -> int:
        return self.scalar(ValueType.UINT64, field)

    def string(self, field: str) -> str:
        length_at = self.pos
        n = self.u64(f"{field} length")
        if n > self.left():
            raise GGUFError(f"{field} length at byte {length_at}: expected at most "
                            f"{self.left()} (the bytes left), got {n}")
        start = self.need(n, field, f"{n} bytes")
        return _decode_utf8(self.buf, start, n, field)


def _decode_utf8(buf, start: int, n: int, field: str) -> str:
    try:
        return buf[start:start + n].decode("utf-8")
    except UnicodeDecodeError as e:
        raise GGUFError(f"{field} at byte {start}: expected UTF-8, got invalid byte "
                        f"{buf[start + e.start]:#04x} at byte {start + e.start}") from None


def _skip_strings(buf, pos: int, end: int, count: int, field: str) -> int:
    """Walk ``count`` length-prefixed strings without decoding them; return the end offset."""
    unpack = _U64.unpack_from
    limit = end - 8
    prev = pos
    # a tight loop: Gemma 3 has 262,144 tokens; this walk is most of its open time
    for i in range(count):
        if pos > limit:
            _raise_string_overrun(buf, prev, pos, end, i, field)
        prev = pos
        pos += 8 + unpack(buf, pos)[0]
    if pos > end:
        _raise_string_overrun(buf, prev, pos, end, count, field)
    return pos


def _raise_string_overrun(buf, prev: int, pos: int, end: int, i: int, field: str):
    if i > 0 and pos > end:  # element i-1 claimed more bytes than are left
        n = _U64.unpack_from(buf, prev)[0]
        raise GGUFError(f"{field}[{i - 1}] length at byte {prev}: expected at most "
                        f"{end - prev - 8} (the bytes left), got {n}")
    raise GGUFError(f"{field}[{i}] length at byte {pos}: expected an 8-byte length, got "
                    f"{max(end - pos, 0)} bytes before the end of the file")


class _ArrayValue:
    """Location of an array value; decoded on first access."""

    __slots__ = ("element_type", "count", "start", "field")

    def __init__(self, element_type: ValueType, count: int, start: int, field: str):
        self.element_type, self.count, self.start, self.field = element_type, count, start, field

    def decode(self, buf, count: int | None = None):
        """The first ``count`` elements (all by default)."""
        count = self.count if count is None else min(count, self.count)
        if self.element_type == ValueType.STRING:
            return self._decode_strings(buf, count)
        arr = np.frombuffer(buf, _DTYPES[self.element_type], count, self.start)
        if self.element_type == ValueType.BOOL:
            arr = arr.view(np.bool_)  # 0/1 checked at open
        arr.flags.writeable = False
        return arr

    def _decode_strings(self, buf, count: int) -> list[str]:
        unpack = _U64.unpack_from
        out = [""] * count
        pos, i, n = self.start, 0, 0
        try:
            for i in range(count):
                n = unpack(buf, pos)[0]
                pos += 8
                out[i] = buf[pos:pos + n].decode("utf-8")
                pos += n
        except UnicodeDecodeError:
            _decode_utf8(buf, pos, n, f"{self.field}[{i}]")
        return out


class Metadata(Mapping):
    """Read-only mapping key -> value over a file's key-value pairs.

    Scalars are Python ``int``, ``float``, ``bool`` or ``str``; numeric arrays are read-only
    numpy arrays viewing the file; string arrays are ``list[str]``, decoded on first access
    (a string that is not UTF-8 raises GGUFError then).
    """

    def __init__(self, buf, values: dict):
        self._buf = buf
        self._values = values  # key -> scalar value or _ArrayValue
        self._decoded: dict[str, Any] = {}  # key -> decoded array

    def __getitem__(self, key: str):
        value = self._values[key]
        if not isinstance(value, _ArrayValue):
            return value
        if key not in self._decoded:
            if self._buf is None:
                raise ValueError("the GGUF file is closed")
            self._decoded[key] = value.decode(self._buf)
        return self._decoded[key]

    def head(self, key: str, n: int):
        """The first ``n`` elements of array ``key`` (the value itself for a scalar), decoding
        no more than those: a summary of a 262,144-token vocabulary costs microseconds."""
        value = self._values[key]
        if not isinstance(value, _ArrayValue):
            return value
        if key in self._decoded:
            return self._decoded[key][:n]
        if self._buf is None:
            raise ValueError("the GGUF file is closed")
        return value.decode(self._buf, n)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<GGUF metadata: {len(self)} keys>"

    def _release(self):
        self._buf = None
        self._decoded.clear()


class _Parser:
    """One pass over the header; produces fields, values, tensor infos and the data offset."""

    def __init__(self, buf, size: int):
        self.buf, self.size = buf, size
        self.cur = _Cursor(buf, 0, size)

    def parse(self):
        version, n_tensors, n_kv = self.header()
        fields, values = self.key_values(n_kv)
        alignment = self.alignment(fields, values)
        infos = self.tensor_infos(n_tensors)
        data_offset = _align(self.cur.pos, alignment)
        tensors = self.place_tensors(infos, data_offset, alignment)
        return version, alignment, data_offset, fields, values, tensors

    # -- header --------------------------------------------------------------------------------
    def header(self):
        cur = self.cur
        magic = bytes(self.buf[0:min(4, self.size)])
        if magic != GGUF_MAGIC:
            raise GGUFError(f"magic at byte 0: expected {GGUF_MAGIC!r}, got {magic!r}")
        cur.pos = 4
        version = cur.u32("version")
        if version not in SUPPORTED_VERSIONS:
            swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
            if swapped in (1, 2, 3):
                raise GGUFError(f"version at byte 4: expected a little-endian GGUF file, got a "
                                f"big-endian (byte-swapped) one (version {swapped}); qgemv reads "
                                f"little-endian files only")
            raise GGUFError(f"version at byte 4: expected one of {SUPPORTED_VERSIONS}, "
                            f"got {version}"
                            + (" (GGUF v1 is obsolete)" if version == 1 else ""))
        n_tensors = self.count("n_tensors", _MIN_TENSOR_INFO_BYTES, "tensor infos")
        n_kv = self.count("n_kv", _MIN_KV_BYTES, "key-value pairs")
        return version, n_tensors, n_kv

    def count(self, field: str, min_bytes: int, what: str) -> int:
        at = self.cur.pos
        n = self.cur.u64(field)
        bound = (self.size - at - 8) // min_bytes
        if n > bound:
            raise GGUFError(f"{field} at byte {at}: expected at most {bound} {what} in the "
                            f"{self.size - at - 8} bytes left, got {n}")
        return n

    # -- metadata ------------------------------------------------------------------------------
    def key_values(self, n_kv: int):
        fields: dict[str, Field] = {}
        values: dict[str, Any] = {}
        cur = self.cur
        for i in range(n_kv):
            at = cur.pos
            key = cur.string(f"metadata key #{i}")
            if key in fields:
                raise GGUFError(f"metadata key {key!r} at byte {at}: expected unique keys, got a "
                                f"duplicate (first at byte {fields[key].offset})")
            name = f"metadata[{key!r}]"
            vtype = self.value_type(f"{name} value type")
            if vtype == ValueType.ARRAY:
                value = self.array(name)
                fields[key] = Field(key, vtype, value.element_type, value.count, at)
            else:
                value = self.scalar(vtype, name)
                fields[key] = Field(key, vtype, None, 1, at)
            values[key] = value
        return fields, values

    def value_type(self, field: str) -> ValueType:
        at = self.cur.pos
        t = self.cur.u32(field)
        if t > max(ValueType):
            raise GGUFError(f"{field} at byte {at}: expected a GGUF value type "
                            f"0..{max(ValueType)}, got {t}")
        return ValueType(t)

    def scalar(self, vtype: ValueType, field: str):
        if vtype == ValueType.STRING:
            return self.cur.string(field)
        at = self.cur.pos
        value = self.cur.scalar(vtype, field)
        if vtype == ValueType.BOOL:
            if value > 1:
                raise GGUFError(f"{field} at byte {at}: expected a bool (0 or 1), got {value}")
            return bool(value)
        return value

    def array(self, field: str) -> _ArrayValue:
        cur = self.cur
        type_at = cur.pos
        etype = self.value_type(f"{field} element type")
        if etype == ValueType.ARRAY:
            raise GGUFError(f"{field} element type at byte {type_at}: expected a scalar or string "
                            f"type, got array (nested arrays are not supported)")
        count_at = cur.pos
        count = cur.u64(f"{field} count")
        item = 8 if etype == ValueType.STRING else _DTYPES[etype].itemsize  # strings: length prefix
        if count > cur.left() // item:
            raise GGUFError(f"{field} count at byte {count_at}: expected at most "
                            f"{cur.left() // item} {etype.name.lower()} elements in the "
                            f"{cur.left()} bytes left, got {count}")
        start = cur.pos
        if etype == ValueType.STRING:
            cur.pos = _skip_strings(self.buf, start, self.size, count, field)
        else:
            cur.pos += count * item
            if etype == ValueType.BOOL:
                self.check_bools(start, count, field)
        return _ArrayValue(etype, count, start, field)

    def check_bools(self, start: int, count: int, field: str):
        raw = np.frombuffer(self.buf, np.uint8, count, start)
        bad = np.flatnonzero(raw > 1)
        if bad.size:
            i = int(bad[0])
            raise GGUFError(f"{field}[{i}] at byte {start + i}: expected a bool (0 or 1), "
                            f"got {raw[i]}")

    def alignment(self, fields: dict, values: dict) -> int:
        field = fields.get("general.alignment")
        if field is None:
            return DEFAULT_ALIGNMENT
        where = f"metadata['general.alignment'] at byte {field.offset}"
        if field.type != ValueType.UINT32:
            raise GGUFError(f"{where}: expected type uint32, got {field.type.name.lower()}")
        value = values["general.alignment"]
        if value == 0 or value & (value - 1):
            raise GGUFError(f"{where}: expected a power of two, got {value}")
        return value

    # -- tensors -------------------------------------------------------------------------------
    def tensor_infos(self, n_tensors: int) -> list:
        """(name, dims, format, relative offset, byte offset of the offset field) per tensor."""
        cur = self.cur
        infos, seen = [], {}
        for i in range(n_tensors):
            at = cur.pos
            name = cur.string(f"tensor #{i} name")
            if name in seen:
                raise GGUFError(f"tensor {name!r} name at byte {at}: expected unique tensor "
                                f"names, got a duplicate (first at byte {seen[name]})")
            seen[name] = at
            dims = self.dims(name)
            fmt = self.tensor_type(name, dims)
            offset_at = cur.pos
            rel_offset = cur.u64(f"tensor {name!r} offset")
            infos.append((name, dims, fmt, rel_offset, offset_at))
        return infos

    def dims(self, name: str) -> tuple:
        cur = self.cur
        at = cur.pos
        n_dims = cur.u32(f"tensor {name!r} n_dims")
        if not 1 <= n_dims <= MAX_DIMS:
            raise GGUFError(f"tensor {name!r} n_dims at byte {at}: expected 1..{MAX_DIMS}, "
                            f"got {n_dims}")
        dims_at = cur.pos
        start = cur.need(8 * n_dims, f"tensor {name!r} dims", f"{n_dims} 8-byte dims")
        dims = struct.unpack_from(f"<{n_dims}Q", self.buf, start)
        for k, d in enumerate(dims):
            if d == 0:
                raise GGUFError(f"tensor {name!r} dims[{k}] at byte {dims_at + 8 * k}: "
                                f"expected >= 1, got 0")
        if math.prod(dims) > _INT64_MAX:
            raise GGUFError(f"tensor {name!r} dims at byte {dims_at}: expected at most "
                            f"{_INT64_MAX} elements, got {' x '.join(map(str, dims))} "
                            f"(overflows int64)")
        return dims

    def tensor_type(self, name: str, dims: tuple) -> Format:
        at = self.cur.pos
        type_id = self.cur.u32(f"tensor {name!r} type")
        fmt = BY_ID.get(type_id)
        if fmt is None:
            raise GGUFError(f"tensor {name!r} type at byte {at}: expected a ggml type id, "
                            f"got {type_id} (unknown or retired)")
        if dims[0] % fmt.block_size:
            raise GGUFError(f"tensor {name!r} dims[0] at byte {at - 8 * len(dims)}: expected a "
                            f"multiple of the {fmt.name} block size {fmt.block_size}, "
                            f"got {dims[0]}")
        return fmt

    def place_tensors(self, infos: list, data_offset: int, alignment: int) -> dict:
        tensors = {}
        for name, dims, fmt, rel, offset_at in infos:
            field = f"tensor {name!r} offset at byte {offset_at}"
            if rel % alignment:
                raise GGUFError(f"{field}: expected a multiple of the alignment {alignment}, "
                                f"got {rel}")
            nbytes = math.prod(dims[1:]) * fmt.row_nbytes(dims[0])
            start = data_offset + rel
            if start + nbytes > self.size:
                raise GGUFError(f"{field}: expected the tensor's {nbytes} bytes to end within the "
                                f"file ({self.size} bytes), got data offset {data_offset} + {rel}, "
                                f"ending at byte {start + nbytes}")
            tensors[name] = TensorInfo(name, tuple(dims), numpy_shape(dims), fmt.name,
                                       start, nbytes)
        self.check_overlaps(tensors)
        return tensors

    @staticmethod
    def check_overlaps(tensors: dict):
        by_offset = sorted(tensors.values(), key=lambda t: t.offset)
        for a, b in zip(by_offset, by_offset[1:]):
            if b.offset < a.offset + a.nbytes:
                raise GGUFError(f"tensor {b.name!r} data at byte {b.offset}: expected no overlap, "
                                f"got an overlap with tensor {a.name!r} (bytes {a.offset}.."
                                f"{a.offset + a.nbytes - 1})")


class GGUFFile:
    """An open GGUF file: validated header, lazily decoded metadata, zero-copy tensors.

    Use :func:`load_gguf` to open one.  Tensor data and numeric metadata arrays are read-only
    numpy views of the file's mmap; ``close()`` (or leaving a ``with`` block) releases the mmap
    as soon as no such view is alive.

    Attributes
    ----------
    path : str or None
        the file's path (None when read from a buffer).
    version : int
        GGUF version (2 or 3).
    alignment : int
        tensor data alignment (``general.alignment``, default 32).
    data_offset : int
        absolute offset of the tensor data section (for a file without tensors it may lie
        past the end of the file, as ggml writes them).
    size : int
        file size in bytes.
    metadata : Mapping[str, object]
        key -> value (see :class:`Metadata`).
    fields : Mapping[str, Field]
        key -> how the value is stored (type, element type, count, offset).
    tensors : Mapping[str, TensorInfo]
        name -> TensorInfo, in file order.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from qgemv import GGUFWriter, load_gguf
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.gguf")
    >>> with GGUFWriter(path) as w:
    ...     w.add_metadata("general.architecture", "llama")
    ...     w.add_metadata("llama.block_count", 2, type="uint32")
    ...     w.add_tensor("output_norm.weight", np.arange(4, dtype=np.float32))
    ...     w.add_tensor("tok_embd.weight", np.zeros((3, 8), dtype=np.float16))
    >>> with load_gguf(path) as f:
    ...     print(f.architecture, f.metadata["llama.block_count"],
    ...           f.fields["llama.block_count"].type.name)
    ...     info = f.tensors["tok_embd.weight"]
    ...     print(info.dims, info.shape, info.qtype, info.nbytes)
    ...     print(f.array("output_norm.weight"))
    llama 2 UINT32
    (8, 3) (3, 8) f16 48
    [0. 1. 2. 3.]
    """

    def __init__(self, buf, size: int, path: str | None = None, owned_map: mmap.mmap | None = None):
        self.path = path
        self.size = size
        self._buf = buf
        self._map = owned_map
        try:
            (self.version, self.alignment, self.data_offset,
             fields, values, tensors) = _Parser(buf, size).parse()
        except BaseException:
            self._buf = None
            _release_map(owned_map)
            raise
        self.fields = MappingProxyType(fields)
        self.metadata = Metadata(buf, values)
        self.tensors = MappingProxyType(tensors)

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Drop this object's hold on the file; the mmap is unmapped once no view is alive."""
        if self._buf is None:
            return
        self._buf = None
        self.metadata._release()
        _release_map(self._map)
        self._map = None

    @property
    def closed(self) -> bool:
        return self._buf is None

    def __enter__(self) -> "GGUFFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed " if self.closed else ""
        return (f"<{state}GGUFFile {self.path or '<buffer>'}: v{self.version}, "
                f"{len(self.metadata)} keys, {len(self.tensors)} tensors>")

    # -- convenience ---------------------------------------------------------------------------
    @property
    def architecture(self) -> str | None:
        """``general.architecture`` (``"llama"``, ``"gemma3"``), or None when absent."""
        return self.metadata.get("general.architecture")

    # -- tensors -------------------------------------------------------------------------------
    def _tensor(self, name: str) -> TensorInfo:
        if self._buf is None:
            raise ValueError("the GGUF file is closed")
        try:
            return self.tensors[name]
        except KeyError:
            where = self.path or "this GGUF buffer"
            raise KeyError(f"no tensor named {name!r} in {where}") from None

    def tensor_data(self, name: str) -> np.ndarray:
        """The raw bytes of tensor ``name``: a read-only uint8 view of the file (no copy).

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from qgemv import GGUFWriter, load_gguf
        >>> path = os.path.join(tempfile.mkdtemp(), "eye.gguf")
        >>> with GGUFWriter(path) as w:
        ...     w.add_tensor("eye", np.eye(2, dtype=np.float16))
        >>> load_gguf(path).tensor_data("eye").tobytes().hex()
        '003c00000000003c'
        """
        info = self._tensor(name)
        return self._view(info.offset, info.nbytes, np.uint8)

    def _view(self, offset: int, count: int, dtype) -> np.ndarray:
        arr = np.frombuffer(self._buf, dtype, count, offset)
        arr.flags.writeable = False
        return arr

    def _computable(self, info: TensorInfo) -> Format:
        fmt = info.format
        if DEQUANTIZE not in fmt.ops:
            raise NotImplementedError(f"tensor {info.name!r} has type {fmt.name}, which qgemv "
                                      f"cannot compute with yet")
        return fmt

    def qmatrix(self, name: str, *more: str):
        """Tensor ``name`` as a :class:`qgemv.QMatrix` over the mmap (zero copy).

        Only 2-D tensors are matrices: ``shape`` is the numpy ``(rows, cols)``.  Raises
        ``ValueError`` for other ranks and ``NotImplementedError`` for a type without kernels.

        With several names, their rows stacked in that order as one QMatrix, still zero copy:
        the tensors must lie back to back in the file (no padding between them) with the same
        type and width, as llama.cpp's converters write q/k/v and gate/up; a ``ValueError``
        says which pair does not.  One product then serves all of them.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from qgemv import GGUFWriter, load_gguf
        >>> path = os.path.join(tempfile.mkdtemp(), "m.gguf")
        >>> with GGUFWriter(path) as w:
        ...     w.add_tensor("ffn_up.weight", np.ones((2, 32), np.float16))
        ...     w.add_tensor("ffn_gate.weight", np.full((2, 32), 2, np.float16))
        >>> f = load_gguf(path)
        >>> m = f.qmatrix("ffn_up.weight")
        >>> m.shape, m.qtype
        ((2, 32), 'f16')
        >>> m @ np.full(32, 0.5, np.float32)
        array([16., 16.], dtype=float32)
        >>> f.qmatrix("ffn_up.weight", "ffn_gate.weight") @ np.full(32, 0.5, np.float32)
        array([16., 16., 32., 32.], dtype=float32)
        """
        infos = [self._tensor(n) for n in (name, *more)]
        for info in infos:
            if len(info.shape) != 2:
                raise ValueError(f"tensor {info.name!r} has shape {info.shape} ({len(info.shape)}-D); "
                                 f"qmatrix() takes 2-D tensors, use array() for other ranks")
            self._computable(info)
        first = infos[0]
        for prev, info in zip(infos, infos[1:]):
            problem = _stack_problem(prev, info)
            if problem:
                raise ValueError(f"tensors {prev.name!r} and {info.name!r} cannot be stacked{problem}")
        from qgemv.qmatrix import QMatrix
        if not more:
            return QMatrix(self.tensor_data(name), first.qtype, first.shape)
        data = self._view(first.offset, sum(t.nbytes for t in infos), np.uint8)
        return QMatrix(data, first.qtype, (sum(t.shape[0] for t in infos), first.shape[1]))

    def stackable(self, first: str, second: str) -> bool:
        """Whether tensor ``second``'s rows can follow ``first``'s in one zero-copy
        :meth:`qmatrix` (same type and width, stored right after it)."""
        return not _stack_problem(self._tensor(first), self._tensor(second))

    def array(self, name: str) -> np.ndarray:
        """Tensor ``name`` as a numpy array of its numpy ``shape``, any rank.

        f32 tensors come back as zero-copy read-only views; f16, bf16 and quantized tensors
        are converted to float32.  f64 and integer tensors keep their own dtype (zero-copy),
        since float32 cannot hold all their values.
        """
        info = self._tensor(name)
        fmt = info.format
        n = math.prod(info.shape)
        if fmt.name in ("f32", "f64") or fmt.kind == "int":
            dtype = np.dtype(_ELEMENT_DTYPES[fmt.name])
            return self._view(info.offset, n, dtype).reshape(info.shape)
        if fmt.name == "f16":
            return self._view(info.offset, n, "<f2").astype(np.float32).reshape(info.shape)
        if fmt.name == "bf16":
            bits = self._view(info.offset, n, "<u2").astype(np.uint32) << 16
            return bits.view(np.float32).reshape(info.shape)
        self._computable(info)
        from qgemv.qmatrix import QMatrix
        cols = info.dims[0]
        m = QMatrix(self.tensor_data(name), info.qtype, (n // cols, cols))
        return m.dequantize().reshape(info.shape)


_ELEMENT_DTYPES = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i8": "<i1", "i16": "<i2",
                   "i32": "<i4", "i64": "<i8"}


def _release_map(m: mmap.mmap | None) -> None:
    if m is None:
        return
    try:
        m.close()
    except BufferError:
        pass  # views are alive; the map is unmapped when the last one is collected


def load_gguf(source) -> GGUFFile:
    """Open a GGUF file (memory-mapped, read-only) and validate its header.

    Parameters
    ----------
    source : str, os.PathLike or bytes-like
        a path, or the file's bytes already in memory (bytes, bytearray, memoryview;
        anything but bytes is copied once).

    Returns
    -------
    GGUFFile
        also a context manager; ``close()`` releases the mmap.

    Raises
    ------
    GGUFError
        the file is not a valid little-endian GGUF v2/v3 file; the message names the field,
        its byte offset and what was expected.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from qgemv import GGUFWriter, load_gguf
    >>> path = os.path.join(tempfile.mkdtemp(), "w.gguf")
    >>> with GGUFWriter(path) as w:
    ...     w.add_metadata("general.architecture", "llama")
    >>> f = load_gguf(path)
    >>> f.version, f.architecture, len(f.tensors)
    (3, 'llama', 0)
    >>> f.close()
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        buf = bytes(source)  # immutable, and slices to bytes like an mmap does
        return GGUFFile(buf, len(buf))
    path = os.fspath(source)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise GGUFError(f"magic at byte 0: expected {GGUF_MAGIC!r}, got an empty file ({path})")
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return GGUFFile(mapped, size, path=path, owned_map=mapped)


# ---------------------------------------------------------------------------------------------
# Writer

_NUMPY_TO_VALUE_TYPE = {
    np.dtype(np.uint8): ValueType.UINT8, np.dtype(np.int8): ValueType.INT8,
    np.dtype(np.uint16): ValueType.UINT16, np.dtype(np.int16): ValueType.INT16,
    np.dtype(np.uint32): ValueType.UINT32, np.dtype(np.int32): ValueType.INT32,
    np.dtype(np.uint64): ValueType.UINT64, np.dtype(np.int64): ValueType.INT64,
    np.dtype(np.float32): ValueType.FLOAT32, np.dtype(np.float64): ValueType.FLOAT64,
    np.dtype(np.bool_): ValueType.BOOL,
}
_NUMPY_TO_QTYPE = {
    np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
}


def _infer_scalar_type(value) -> ValueType:
    """gguf-py's conventions: str -> string, bool -> bool, int -> int32, float -> float32;
    numpy scalars keep their dtype."""
    if isinstance(value, str):
        return ValueType.STRING
    if isinstance(value, np.generic):  # before int/float: np.float64 is a float
        vtype = _NUMPY_TO_VALUE_TYPE.get(value.dtype)
        if vtype is None:
            raise TypeError(f"no GGUF value type for numpy {value.dtype}")
        return vtype
    if isinstance(value, bool):
        return ValueType.BOOL
    if isinstance(value, int):
        if not -2**31 <= value < 2**31:
            raise ValueError(f"{value} does not fit the default int32; pass type= (e.g. 'uint64')")
        return ValueType.INT32
    if isinstance(value, float):
        return ValueType.FLOAT32
    raise TypeError(f"no GGUF value type for {type(value).__name__}; pass type=")


def _infer_element_type(values) -> ValueType:
    if isinstance(values, np.ndarray):
        if values.dtype.kind in "US":
            return ValueType.STRING
        vtype = _NUMPY_TO_VALUE_TYPE.get(values.dtype.newbyteorder("="))
        if vtype is None:
            raise TypeError(f"no GGUF element type for numpy {values.dtype}; pass element_type=")
        return vtype
    if len(values) == 0:
        raise ValueError("cannot infer the element type of an empty array; pass element_type=")
    types = {_infer_scalar_type(v) for v in values}
    if types <= {ValueType.INT32, ValueType.FLOAT32} and ValueType.FLOAT32 in types:
        return ValueType.FLOAT32  # ints mixed into a float list
    if len(types) != 1:
        names = ", ".join(sorted(t.name.lower() for t in types))
        raise TypeError(f"array elements have mixed types ({names}); pass element_type=")
    return types.pop()


def _encode_string(value) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"expected str, got {type(value).__name__}")
    raw = value.encode("utf-8")
    return _U64.pack(len(raw)) + raw


def _encode_scalar(value, vtype: ValueType) -> bytes:
    if vtype == ValueType.STRING:
        return _encode_string(value)
    if vtype == ValueType.BOOL:
        if value not in (0, 1):  # True/False, 0/1, numpy bools
            raise ValueError(f"expected a bool, got {value!r}")
        return bytes([int(value)])
    if vtype in (ValueType.FLOAT32, ValueType.FLOAT64):
        return _STRUCTS[vtype].pack(float(value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"expected an int for {vtype.name.lower()}, got {value!r}")
    info = np.iinfo(_DTYPES[vtype])
    if not info.min <= int(value) <= info.max:
        raise ValueError(f"{value} is out of range for {vtype.name.lower()} "
                         f"[{info.min}, {info.max}]")
    return _STRUCTS[vtype].pack(int(value))


def _encode_array(values, etype: ValueType) -> bytes:
    head = _U32.pack(etype) + _U64.pack(len(values))
    if etype == ValueType.STRING:
        return head + b"".join(_encode_string(v) for v in values)
    return head + _numeric_array(values, etype).tobytes()


def _numeric_array(values, etype: ValueType) -> np.ndarray:
    """``values`` as a little-endian array of ``etype``, refusing lossy conversions."""
    dtype = _DTYPES[etype]
    if etype == ValueType.BOOL:
        arr = np.asarray(values)
        if arr.size and not np.isin(arr, (0, 1)).all():
            raise ValueError("expected bools (0 or 1)")
        return arr.astype(dtype)
    if dtype.kind == "f":
        return np.asarray(values, dtype=np.float64).astype(dtype)
    arr = np.asarray(values) if isinstance(values, np.ndarray) else None
    if arr is None:  # a list: numpy refuses out-of-range Python ints itself
        if not all(isinstance(v, (int, np.integer)) for v in values):
            raise TypeError(f"expected integers for {etype.name.lower()} elements")
        try:
            return np.array(values, dtype=dtype)
        except OverflowError as e:
            raise ValueError(f"elements out of range for {etype.name.lower()}: {e}") from None
    if arr.dtype.kind not in "iub":
        raise TypeError(f"expected integers for {etype.name.lower()} elements, got {arr.dtype}")
    info = np.iinfo(dtype)
    if arr.size and not (info.min <= arr.min() and arr.max() <= info.max):
        raise ValueError(f"elements out of range for {etype.name.lower()} [{info.min}, {info.max}]")
    return arr.astype(dtype)


def _stack_problem(prev: TensorInfo, info: TensorInfo) -> str:
    """Why ``info`` cannot follow ``prev`` in one zero-copy matrix ("" if it can)."""
    if info.qtype != prev.qtype or info.shape[1:] != prev.shape[1:]:
        return (f": {prev.qtype} {prev.shape} and {info.qtype} {info.shape} differ in type or "
                f"width")
    if info.offset != prev.offset + prev.nbytes:
        return (f" without a copy: the second starts at byte {info.offset}, not right after the "
                f"first ({prev.offset + prev.nbytes})")
    return ""


class _PendingTensor(NamedTuple):
    name: str
    dims: tuple
    fmt: Format
    nbytes: int
    data: object  # raw little-endian bytes (memoryview), or a callable yielding them in pieces


class GGUFWriter:
    """Write a GGUF v3 file: metadata of every value type, tensors from QMatrix or numpy.

    Tensors are referenced, not copied, until :meth:`write`, which writes a temporary file
    beside ``path`` and renames it over ``path`` (readers never see a half-written file).
    Used as a context manager, the file is written when the block exits without an error.

    Parameters
    ----------
    path : str or os.PathLike
    alignment : int, default 32
        tensor data alignment, a power of two; other than 32 it is recorded as
        ``general.alignment`` (uint32).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from qgemv import GGUFWriter, load_gguf
    >>> path = os.path.join(tempfile.mkdtemp(), "model.gguf")
    >>> w = GGUFWriter(path, alignment=64)
    >>> w.add_metadata("general.architecture", "llama")
    >>> w.add_metadata("llama.context_length", 2048, type="uint32")
    >>> w.add_metadata("tokenizer.ggml.tokens", ["<s>", "</s>", "a"])
    >>> w.add_metadata("tokenizer.ggml.scores", np.zeros(3, np.float32))
    >>> w.add_tensor("blk.0.attn_norm.weight", np.ones(64, np.float32))
    >>> w.add_tensor("blk.0.ffn_up.weight", np.zeros(2 * 34, np.uint8), qtype="q8_0", shape=(2, 32))
    >>> w.write()
    >>> f = load_gguf(path)
    >>> f.alignment, f.metadata["tokenizer.ggml.tokens"], f.tensors["blk.0.ffn_up.weight"].shape
    (64, ['<s>', '</s>', 'a'], (2, 32))
    >>> f.close()
    """

    def __init__(self, path, *, alignment: int = DEFAULT_ALIGNMENT):
        if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
            raise ValueError(f"alignment must be a power of two, got {alignment!r}")
        self.path = Path(path)
        self.alignment = alignment
        self._kv: dict[str, bytes] = {}  # key -> encoded value type + value
        self._tensors: dict[str, _PendingTensor] = {}

    # -- metadata ------------------------------------------------------------------------------
    def add_metadata(self, key: str, value, type=None, element_type=None) -> None:
        """Add one key-value pair.

        Parameters
        ----------
        key : str
        value : int, float, bool, str, numpy scalar, list/tuple or numpy array
            lists, tuples and numpy arrays are written as GGUF arrays.
        type : ValueType, str or int, optional
            the value type (``"uint32"``, ``ValueType.FLOAT64``, ``"array"``).  When omitted it
            is inferred as gguf-py does: str -> string, bool -> bool, int -> int32,
            float -> float32, numpy scalars and arrays by dtype.
        element_type : ValueType, str or int, optional
            for arrays, the element type; inferred like ``type`` when omitted (a list mixing
            ints and floats is float32; an empty list needs it).

        Examples
        --------
        >>> import os, tempfile
        >>> from qgemv import GGUFWriter, load_gguf
        >>> path = os.path.join(tempfile.mkdtemp(), "kv.gguf")
        >>> with GGUFWriter(path) as w:
        ...     w.add_metadata("general.file_type", 2, type="uint32")
        ...     w.add_metadata("x.ids", [1, 2, 3], type="array", element_type="uint64")
        >>> f = load_gguf(path)
        >>> f.metadata["x.ids"], f.fields["x.ids"].element_type.name
        (array([1, 2, 3], dtype=uint64), 'UINT64')

        To copy a key from an open file exactly::

            fld = f.fields[key]
            w.add_metadata(key, f.metadata[key], fld.type, fld.element_type)
        """
        if not isinstance(key, str):
            raise TypeError(f"metadata key must be str, got {key.__class__.__name__}")
        if key in self._kv:
            raise ValueError(f"duplicate metadata key {key!r}")
        is_array = isinstance(value, (list, tuple, np.ndarray))
        vtype = ValueType.of(type) if type is not None else (
            ValueType.ARRAY if is_array else _infer_scalar_type(value))
        if key == "general.alignment":
            self._check_alignment_key(value, vtype)
        try:
            if vtype == ValueType.ARRAY:
                if not is_array:
                    raise TypeError(f"an array value must be a list, tuple or numpy array, "
                                    f"got {value.__class__.__name__}")
                etype = (ValueType.of(element_type) if element_type is not None
                         else _infer_element_type(value))
                if etype == ValueType.ARRAY:
                    raise ValueError("nested arrays are not supported (ggml cannot read them)")
                encoded = _encode_array(value, etype)
            else:
                if is_array:
                    raise TypeError(f"value is an array but type={vtype.name.lower()}; use "
                                    f"type='array', element_type={vtype.name.lower()!r}")
                encoded = _encode_scalar(value, vtype)
        except (TypeError, ValueError) as e:
            raise e.__class__(f"metadata {key!r}: {e}") from None
        self._kv[key] = _U32.pack(vtype) + encoded

    def _check_alignment_key(self, value, vtype: ValueType) -> None:
        if vtype != ValueType.UINT32 or value != self.alignment:
            raise ValueError(f"general.alignment must be uint32 {self.alignment} (the writer's "
                             f"alignment), got {vtype.name.lower()} {value!r}; "
                             f"set it with GGUFWriter(path, alignment=...)")

    # -- tensors -------------------------------------------------------------------------------
    def add_tensor(self, name: str, tensor, *, qtype=None, shape=None) -> None:
        """Add a tensor; its data is written in the order tensors are added.

        Parameters
        ----------
        name : str
        tensor : QMatrix, numpy array, bytes-like or callable
            a QMatrix (its bytes, qtype and shape); a numpy array of dtype float32, float16,
            float64, int8, int16, int32 or int64 (written as f32, f16, f64, i8..i64); or, with
            ``qtype`` and ``shape``, the raw bytes of a tensor in that format, or a callable
            returning an iterable of such bytes in order: it is called by :meth:`write`, so a
            large tensor is produced piece by piece and never held whole in memory.
        qtype : str or int, optional
            ggml type of raw bytes (``"q4_K"``, ``"bf16"``).
        shape : tuple of int, optional
            numpy shape of raw bytes (``(rows, cols)`` for a matrix).
        """
        if not isinstance(name, str):
            raise TypeError(f"tensor name must be str, got {type(name).__name__}")
        if name in self._tensors:
            raise ValueError(f"duplicate tensor name {name!r}")
        if qtype is not None:
            if shape is None:
                raise ValueError(f"tensor {name!r}: raw bytes with qtype={qtype!r} need shape=")
            fmt, source = lookup(qtype), tensor
            if callable(tensor):
                dims = _checked_dims(name, shape, fmt)
                nbytes = math.prod(dims[1:]) * fmt.row_nbytes(dims[0])
                self._tensors[name] = _PendingTensor(name, dims, fmt, nbytes, tensor)
                return
        elif isinstance(tensor, np.ndarray):
            fmt, source, shape = _array_format(name, tensor), tensor, tensor.shape
        elif all(hasattr(tensor, a) for a in ("qtype", "shape", "data")):  # a QMatrix
            if shape is not None:
                raise ValueError(f"tensor {name!r}: a QMatrix carries its own shape")
            fmt, source, shape = lookup(tensor.qtype), tensor.data, tensor.shape
        else:
            raise TypeError(f"tensor {name!r}: expected a QMatrix or numpy array, or raw bytes "
                            f"with qtype= and shape=; got {type(tensor).__name__}")
        dims = _checked_dims(name, shape, fmt)
        data = _little_endian_bytes(source)
        nbytes = math.prod(dims[1:]) * fmt.row_nbytes(dims[0])
        if data.nbytes != nbytes:
            raise ValueError(f"tensor {name!r}: {fmt.name} {tuple(shape)} takes {nbytes} bytes, "
                             f"got {data.nbytes}")
        self._tensors[name] = _PendingTensor(name, dims, fmt, nbytes, data)

    # -- output --------------------------------------------------------------------------------
    def _header(self) -> bytes:
        kv = dict(self._kv)
        if self.alignment != DEFAULT_ALIGNMENT and "general.alignment" not in kv:
            encoded = _U32.pack(ValueType.UINT32) + _U32.pack(self.alignment)
            kv = {"general.alignment": encoded, **kv}
        parts = [_HEADER.pack(GGUF_MAGIC, 3, len(self._tensors), len(kv))]
        parts += [_encode_string(key) + value for key, value in kv.items()]
        rel = 0
        for t in self._tensors.values():
            parts.append(_encode_string(t.name) + _U32.pack(len(t.dims))
                         + struct.pack(f"<{len(t.dims)}Q", *t.dims)
                         + _U32.pack(t.fmt.id) + _U64.pack(rel))
            rel = _align(rel + t.nbytes, self.alignment)
        header = b"".join(parts)
        return header + bytes(_align(len(header), self.alignment) - len(header))

    def write(self) -> None:
        """Write the file atomically (temporary file in the same directory, then rename)."""
        header = self._header()
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp",
                                   dir=self.path.parent or ".")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(header)
                for t in self._tensors.values():
                    _write_tensor(out, t)
                    out.write(bytes(_align(t.nbytes, self.alignment) - t.nbytes))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __enter__(self) -> "GGUFWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.write()


def _write_tensor(out, t: _PendingTensor) -> None:
    """The bytes of ``t``; a producer's pieces are checked to add up to the declared size."""
    if not callable(t.data):
        out.write(t.data)
        return
    written = 0
    for piece in t.data():
        piece = _little_endian_bytes(piece)
        written += piece.nbytes
        if written > t.nbytes:
            break
        out.write(piece)
    if written != t.nbytes:
        raise ValueError(f"tensor {t.name!r}: {t.fmt.name} {t.dims} takes {t.nbytes} bytes, "
                         f"its producer gave {'more' if written > t.nbytes else written}")


def _array_format(name: str, arr: np.ndarray) -> Format:
    qtype = _NUMPY_TO_QTYPE.get(arr.dtype.newbyteorder("="))
    if qtype is None:
        raise TypeError(f"tensor {name!r}: no ggml type for numpy {arr.dtype}; pass raw bytes "
                        f"with qtype= and shape=")
    return lookup(qtype)


def _little_endian_bytes(data) -> memoryview:
    """The bytes of a buffer; numpy arrays made C-contiguous and little-endian (no copy if so)."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
    return memoryview(data).cast("B")


def _checked_dims(name: str, shape, fmt: Format) -> tuple:
    dims = ggml_dims(shape)
    if not 1 <= len(dims) <= MAX_DIMS:
        raise ValueError(f"tensor {name!r}: expected 1..{MAX_DIMS} dims, got shape {tuple(shape)}")
    if min(dims) < 1:
        raise ValueError(f"tensor {name!r}: dims must be >= 1, got shape {tuple(shape)}")
    if dims[0] % fmt.block_size:
        raise ValueError(f"tensor {name!r}: the last dim {dims[0]} is not a multiple of the "
                         f"{fmt.name} block size {fmt.block_size}")
    return dims
