"""QMatrix: an immutable 2-D block-quantized matrix over any buffer, without a copy."""
from __future__ import annotations

import functools
import operator
import os

import numpy as np

from . import _dispatch, _formats, _kernels, _threads
from ._formats import DEQUANTIZE, MATMUL, QUANTIZE, Format

_FLOAT_DTYPES = (np.float16, np.float32, np.float64)
_F32 = np.dtype(np.float32)

# a single column times a matrix larger than this streams it from DRAM (about half this machine's
# L3): row after row is then fastest; from cache, the tiles' GEMV paths are (benches/RESULTS.md).
STREAMING_BYTES = 16 << 20
# a dequantize output this large goes out with non-temporal stores where the CPU asks for them
# (_dispatch.dequant_stream).  Intel Xeon (AMX, a KVM guest), q4_K, 1 thread, plain / streamed:
# 17.6 MiB 0.81x, 24 MiB 0.97x, 28 MiB 1.03x, 32 MiB 1.24x, 64 MiB 1.68x
STREAM_STORES_BYTES = 32 << 20

# Formats with an interleaved layout (_formats.py: interleave) multiply from a copy of their rows
# in it, made at a matrix's first product (the same results, faster: src/formats/q32_x8.h,
# q32_pairs.h, superblocks_x16.h, iq1.h and grid_codes.h), and
# those with a repack_as format from a copy in that format (tq1_0 as tq2_0: src/formats/ternary.h).
# The copy is as large as the matrix (iq1_m's trits: 1.36x, the IQ grids' codes: 1.29-1.73x,
# tq1_0's: 1.22x); QGEMV_REPACK=0 or
# set_repack(False) keeps to the GGUF bytes.
_repack = os.environ.get("QGEMV_REPACK", "1") != "0"


def set_repack(enabled: bool) -> None:
    """Whether products prepare the faster layout of the formats that have one: the interleaved
    rows of q4_0, q4_1, q5_0, q5_1, iq4_nl and mxfp4 (a copy as large as the weights), iq1_m's
    and iq1_s's rows as trits (1.36x, 1.64x), the IQ grids' as level codes (iq2_xxs 1.61x, iq2_xs 1.43x, iq2_s
    1.29x, iq3_xxs 1.73x, iq3_s 1.55x) and tq1_0's rows as tq2_0 (1.22x), made once per matrix at its first product (results are identical either way).
    Default: on, unless the environment sets ``QGEMV_REPACK=0``.  Matrices that already have
    the copy keep it."""
    global _repack
    if not isinstance(enabled, bool):
        raise TypeError(f"set_repack takes a bool, not {type(enabled).__name__}")
    _repack = enabled


def get_repack() -> bool:
    """Whether products prepare the faster layouts (``set_repack``)."""
    return _repack


_COMPILED = _kernels.table_info("baseline")
# alignof(block_<name>): where a buffer of that format may start (from the C structs)
_BLOCK_ALIGN = {i: row[4] for i, row in _COMPILED.items()}
# the ops the compiled kernels really have: a table/build mismatch (a stale build) must
# raise, never call a missing kernel
_COMPILED_OPS = {i: {op for op, present in ((DEQUANTIZE, row[0]), (MATMUL, row[1]), (QUANTIZE, row[5]))
                     if present}
                 for i, row in _COMPILED.items()}


@functools.lru_cache(maxsize=None)
def _has_panels(isa: str, qtype: int) -> bool:
    """Whether the variant multiplies the format from its interleaved panels (the table's
    interleave; a variant that does not has no panel_tile for it, src/formats/superblocks_x16.h)."""
    fmt = _formats.BY_ID[qtype]
    return bool(fmt.interleave) and _kernels.panel_rows(isa, qtype) == fmt.interleave


class QMatrix:
    """A ``(rows, cols)`` matrix of ggml blocks, read in place from any buffer.

    Parameters
    ----------
    data : buffer
        bytes, bytearray, memoryview, mmap, or a C-contiguous numpy array; read-only buffers
        work and no copy is made.  Must hold at least ``rows * row_nbytes`` bytes (extra
        bytes after them are ignored).
    qtype : str or int
        A ggml type name (``"q4_0"``, case-insensitive) or type id.
    shape : (int, int)
        ``(rows, cols)``; ``cols`` must be a multiple of the format's block size.

    Examples
    --------
    >>> import numpy as np
    >>> from qgemv import QMatrix
    >>> w = np.arange(8, dtype=np.float32).reshape(2, 4)
    >>> m = QMatrix(w.astype(np.float16).tobytes(), "f16", (2, 4))
    >>> m.shape, m.qtype, m.nbytes
    ((2, 4), 'f16', 16)
    >>> m @ np.ones(4, dtype=np.float32)
    array([ 6., 22.], dtype=float32)
    >>> m.dequantize_rows([1])
    array([[4., 5., 6., 7.]], dtype=float32)
    """

    __slots__ = ("_data", "_fmt", "_shape", "_row_nbytes", "_prepared", "__weakref__")

    def __init__(self, data, qtype, shape):
        fmt = _formats.lookup(qtype)
        rows, cols = _check_shape(shape, fmt)
        row_nbytes = fmt.row_nbytes(cols)
        arr = _as_bytes(data, fmt)
        need = rows * row_nbytes
        if arr.size < need:
            raise ValueError(f"{fmt.name} matrix {rows}x{cols} needs {need} bytes "
                             f"({rows} rows of {row_nbytes}), the buffer holds {arr.size}")
        arr = arr[:need]
        if need and arr.ctypes.data % _BLOCK_ALIGN[fmt.id]:
            raise ValueError(f"{fmt.name} blocks must start at a multiple of {_BLOCK_ALIGN[fmt.id]} "
                             f"bytes; this buffer starts at address {arr.ctypes.data:#x} "
                             f"(copy it, e.g. np.array(buffer), to align it)")
        arr.flags.writeable = False
        self._data = arr
        self._fmt = fmt
        self._shape = (rows, cols)
        self._row_nbytes = row_nbytes
        self._prepared = None

    @classmethod
    def quantize(cls, a, qtype, imatrix=None, n_threads: int | None = None) -> QMatrix:
        """Quantize a float matrix to ``qtype``, byte for byte as ggml does.

        The blocks equal ggml's ``ggml_quantize_chunk`` for the same input and importance
        weights: the reference quantizer without ``imatrix``, ggml's weighted search for the
        best scales with it (formats without one ignore ``imatrix``, as ggml does).

        Parameters
        ----------
        a : array_like of float32 or float16, shape (rows, cols)
            ``cols`` a multiple of the format's block size; every value finite.
        qtype : str or int
            A ggml type name or id among ``qgemv.formats("quantize")``.
        imatrix : array_like of float32, shape (cols,), optional
            Importance of each column (llama.cpp's imatrix: mean squared activation), finite
            and >= 0.  Required for iq1_s, iq2_xxs and iq2_xs, as in ggml.
        n_threads : int, optional
            Threads to use (default: ``qgemv.get_num_threads()``); rows are split among them.

        Returns
        -------
        QMatrix
            Over a fresh uint8 array of ``rows * row_nbytes`` bytes.

        Raises
        ------
        ValueError
            For NaN or Inf in ``a`` (naming the first such row), a bad shape or imatrix.

        Examples
        --------
        >>> import numpy as np
        >>> from qgemv import QMatrix
        >>> w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32)
        >>> m = QMatrix.quantize(w, "q8_0")
        >>> m.shape, m.nbytes
        ((2, 32), 68)
        >>> float(np.abs(m.dequantize() - w).max()) < 1 / 127
        True
        """
        fmt = _formats.lookup(qtype)
        if QUANTIZE not in fmt.ops or QUANTIZE not in _COMPILED_OPS[fmt.id]:
            raise NotImplementedError(f"qgemv cannot quantize to {fmt.name} yet")
        a = np.asarray(a)
        if a.dtype not in (np.float32, np.float16):
            raise TypeError(f"{fmt.name}: a must be float32 or float16, not {a.dtype} "
                            f"(convert it with a.astype(np.float32))")
        if a.ndim != 2:
            raise ValueError(f"{fmt.name}: a must be 2-D (rows, cols), got {a.ndim}-D")
        rows, cols = a.shape
        _check_cols(cols, fmt)
        a = np.ascontiguousarray(a, dtype=np.float32)
        qw = _check_imatrix(imatrix, cols, fmt)
        out = np.empty((rows, fmt.row_nbytes(cols)), dtype=np.uint8)
        if out.size:
            n = _threads.resolve(n_threads, a.nbytes, rows)
            bad = _kernels.quantize(_dispatch.isa, fmt.id, a, qw, out, n)
            if bad >= 0:
                raise ValueError(f"{fmt.name}: row {bad} of a holds NaN or Inf, which ggml "
                                 f"cannot quantize")
        return cls._over_blocks(out, fmt, rows, cols)

    @classmethod
    def _over_blocks(cls, blocks: np.ndarray, fmt: Format, rows: int, cols: int) -> QMatrix:
        """A QMatrix over ``blocks``, a fresh uint8 array of ``(rows, row_nbytes)`` made here: the
        checks of ``__init__`` hold by construction."""
        self = object.__new__(cls)
        self._data = blocks.ravel()
        self._data.setflags(write=False)
        self._fmt = fmt
        self._shape = (rows, cols)
        self._row_nbytes = blocks.shape[1]
        self._prepared = None
        return self

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""
        return self._shape

    @property
    def qtype(self) -> str:
        """The ggml type name, e.g. ``"q4_K"``."""
        return self._fmt.name

    @property
    def format(self) -> Format:
        """The format's row of the table (``qgemv.formats()``)."""
        return self._fmt

    @property
    def nbytes(self) -> int:
        """Bytes of block data: rows * row_nbytes."""
        return self._data.size

    @property
    def row_nbytes(self) -> int:
        """Bytes per row: cols / block_size * bytes per block."""
        return self._row_nbytes

    @property
    def bits_per_weight(self) -> float:
        return self._fmt.bits_per_weight

    @property
    def data(self) -> np.ndarray:
        """The raw blocks as a read-only uint8 array over the original buffer (no copy)."""
        return self._data

    def __repr__(self) -> str:
        return f"QMatrix(shape={self._shape}, qtype={self.qtype!r}, nbytes={self.nbytes})"

    def __len__(self) -> int:
        return self._shape[0]

    # ------------------------------------------------------------------ dequantize
    def dequantize(self, out: np.ndarray | None = None, n_threads: int | None = None) -> np.ndarray:
        """The matrix as float32, bit-identical to ggml's ``to_float``.

        Parameters
        ----------
        out : ndarray, optional
            float32, C-contiguous, shape ``(rows, cols)``; written and returned.
        n_threads : int, optional
            Threads to use (default: ``qgemv.get_num_threads()``).
        """
        self._require(DEQUANTIZE)
        rows, cols = self._shape
        out = _check_out(out, (rows, cols), self.qtype)
        if out.size:
            n = _threads.resolve(n_threads, self.nbytes, rows)
            # an output larger than the cache keeps goes out with non-temporal stores where the
            # CPU's plain stores would read each line first (_dispatch.dequant_stream)
            stream = _dispatch.dequant_stream and out.nbytes >= STREAM_STORES_BYTES
            scratch = np.empty((n, cols), np.float32) if stream else None
            _kernels.dequantize(_dispatch.isa, self._fmt.id, self._data, self._row_nbytes, out, n, scratch)
        return out

    def dequantize_rows(self, ids, out: np.ndarray | None = None, n_threads: int | None = None) -> np.ndarray:
        """Rows ``ids`` as float32 ``(len(ids), cols)``; only those rows are read (embeddings).

        Negative ids count from the end, as in numpy; an id out of range is an IndexError.
        """
        self._require(DEQUANTIZE)
        rows, cols = self._shape
        ids = np.asarray(ids)
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise TypeError(f"ids must be a 1-D sequence of ints, got shape {ids.shape} dtype {ids.dtype}")
        ids = ids.astype(np.int64)
        bad = (ids < -rows) | (ids >= rows)
        if bad.any():
            raise IndexError(f"row id {int(ids[bad][0])} is out of range for {rows} rows")
        ids = np.where(ids < 0, ids + rows, ids)
        out = _check_out(out, (ids.size, cols), self.qtype)
        if out.size:
            n = _threads.resolve(n_threads, ids.size * self._row_nbytes, ids.size)
            _kernels.dequantize_rows(_dispatch.isa, self._fmt.id, self._data, self._row_nbytes,
                                     ids, out, n)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a QMatrix cannot be viewed as a float array without dequantizing (a copy)")
        a = self.dequantize()
        return a if dtype is None else a.astype(dtype, copy=False)

    # ------------------------------------------------------------------ products
    def __matmul__(self, x):
        return self.matmul(x)

    def matmul(self, x, act: str | None = None, n_threads: int | None = None,
               out: np.ndarray | None = None) -> np.ndarray:
        """``self @ x`` with numpy's matmul shapes: x ``(cols,)`` -> ``(rows,)``, ``(cols, n)`` -> ``(rows, n)``.

        Parameters
        ----------
        x : array_like of float16, float32 or float64
            Computed in float32.
        act : str, optional
            The format ``x`` is rounded to before the integer dot products: by default the
            format's own (ggml's ``vec_dot_type``: q8_0, q8_1, q8_K, f16 or bf16), so results
            agree with llama.cpp; ``"f32"`` keeps ``x`` in float32 and equals
            ``dequantize() @ x`` up to float32 rounding, without materialising the matrix.
        n_threads : int, optional
        out : ndarray, optional
            float32, C-contiguous, of the result's shape.
        """
        self._require(MATMUL)
        rows, cols = self._shape
        fmt = self._fmt
        act = fmt.act if act is None else act
        if act not in (fmt.act, "f32"):
            raise ValueError(f"{fmt.name}: act must be {fmt.act!r} (ggml's) or 'f32', not {act!r}")
        xt, vector = _check_x(x, cols, fmt.name)
        batch = xt.shape[0]
        out_shape = (rows,) if vector else (rows, batch)
        out = _check_out(out, out_shape, fmt.name)
        if out.size == 0:
            return out
        if cols == 0:
            out[...] = 0
            return out
        out2 = out.reshape(rows, batch)
        n = _threads.resolve(n_threads, self.nbytes * batch, rows, product=True)
        isa = _dispatch.isa
        if act == "f32" and fmt.act != "f32":
            scratch = np.empty((n, cols), dtype=np.float32)
            qtype, data, row_nbytes, _ = self._product_rows(n, panels=False)
            _kernels.matmul_f32(isa, qtype, data, row_nbytes, np.ascontiguousarray(xt), out2, scratch, n)
        else:
            afmt = _formats.BY_NAME[act.lower()]
            xq = np.empty((batch, afmt.row_nbytes(cols)), dtype=np.uint8)
            if not _kernels.quantize_activations(isa, afmt.id, xt, xq, n):
                raise ValueError(f"{fmt.name}: x holds NaN or Inf, which {act} activations cannot "
                                 f"represent; use act='f32'")
            qtype, data, row_nbytes, panels = self._product_rows(n)
            if panels is not None:
                _kernels.matmul_panels(isa, fmt.id, fmt.interleave, panels, fmt.panel_row_nbytes(cols), self._data,
                                       self._row_nbytes, cols, xq, out2, n)
            elif (batch == 1 and self.nbytes > STREAMING_BYTES and not fmt.gemv_tiles
                  and not _dispatch.gemv_prefetch):
                # On a CPU whose prefetcher streams alone (_dispatch.gemv_prefetch off: a Zen 4),
                # a single column streaming from memory reads fastest one row after another (one
                # read stream per thread, left to the prefetcher); from cache the tiles choose,
                # per family, between that and several rows per pass (src/tiles.h).  Not so the
                # table's gemv_tiles formats: the ggml_repack ones without panels, whose vec_dot is
                # one fma chain per row and whose tile's 8 rows in lanes stream faster (14336 x
                # 4096, 2 threads: q4_0 3.8 -> 3.1 ms, iq4_nl 3.8 -> 3.3, mxfp4 5.5 -> 3.7;
                # src/formats/q32_x8.h), and nvfp4 and q1_0, whose tiles prepare a column's scales
                # (q1_0: and activations) once for 16 rows (src/formats/fp4_bits.h; q1_0 57344 x
                # 8192, 1 / 2 threads: 14.4 -> 11.9 / 7.1 -> 5.9 ms, AVX2 18.6 -> 13.9 / 8.6 -> 6.9),
                # and the floats, whose AVX-512 vec_dot is one scalar chain per row (their tile
                # runs 16 rows side by side: src/formats/float_panels.h).
                # Elsewhere (an Intel Xeon) the tiles, whose rows ask for their lines ahead in
                # software, beat one row after another unprefetched (AVX2's f32 4 rows a block
                # 1.08-1.28x in and out of cache), q2_0 even.
                _kernels.matmul_act_vec_dot(isa, qtype, data, row_nbytes, cols, xq, out2, n)
            else:
                _kernels.matmul_act(isa, qtype, data, row_nbytes, cols, xq, out2, n, fmt.interleave or 2,
                                    _kernels.TILE_GEMV_FLOAT_ROWS if fmt.kind == "float" else _kernels.TILE_ROWS)
        return out

    def _product_rows(self, n_threads: int,
                      panels: bool = True) -> tuple[int, np.ndarray, int, np.ndarray | None]:
        """(type id, bytes, bytes per row, panels) of what products read: the GGUF rows, or the
        copy the format prepares at the first product while set_repack(True) is in force (made
        once, read-only): its rows in its repack_as format, or its first rows // R * R rows as
        interleaved panels of R = interleave rows (returned beside the GGUF rows, which hold the
        last rows % R; not made for a caller that reads whole rows, panels=False, nor used by a
        kernel variant that reads the format's GGUF rows faster)."""
        fmt = self._fmt
        rows, cols = self._shape
        twin = _formats.BY_NAME[fmt.repack_as] if fmt.repack_as else None
        panels = panels and _has_panels(_dispatch.isa, fmt.id)
        if self._prepared is None and _repack:
            if twin is not None:
                copy = _empty_on_lines(rows * twin.row_nbytes(cols))
                _kernels.repack_rows(_dispatch.isa, fmt.id, self._data, self._row_nbytes, cols,
                                     copy, twin.row_nbytes(cols), n_threads)
            elif panels and rows >= fmt.interleave:
                copy = _empty_on_lines(rows // fmt.interleave * fmt.interleave * fmt.panel_row_nbytes(cols))
                _kernels.interleave(_dispatch.isa, fmt.id, fmt.interleave, self._data, self._row_nbytes, cols, copy,
                                    fmt.panel_row_nbytes(cols), n_threads)
            else:
                copy = None
            if copy is not None:
                copy.flags.writeable = False
                self._prepared = copy
        if self._prepared is not None and twin is not None:
            return twin.id, self._prepared, twin.row_nbytes(cols), None
        return fmt.id, self._data, self._row_nbytes, self._prepared if panels else None

    def _require(self, op: str) -> None:
        if op not in self._fmt.ops or op not in _COMPILED_OPS[self._fmt.id]:
            what = "dequantize" if op == DEQUANTIZE else "multiply"
            raise NotImplementedError(f"qgemv cannot {what} {self._fmt.name} matrices yet")


def _empty_on_lines(nbytes: int) -> np.ndarray:
    """An uninitialised uint8 array of nbytes starting on a 64-byte line (numpy's own start 16
    bytes past one here), for the prepared copies: the panels' 64-byte loads then split across
    lines only where a block's size makes them (Intel Xeon, 4096 x 4096, 2 threads, aligned /
    16 bytes on: batch 32 q4_K 1.05x, q2_K and iq4_xs 1.03x, q6_K and q8_0 1.02x; batch 8
    1.02-1.04x; a single column even)."""
    raw = np.empty(nbytes + 63, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes]


# ---------------------------------------------------------------------- validation
def _check_shape(shape, fmt: Format) -> tuple[int, int]:
    try:
        rows, cols = (_index(v) for v in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be a pair of ints (rows, cols), got {shape!r}") from None
    if rows < 0 or cols < 0:
        raise ValueError(f"{fmt.name}: shape {shape!r} has a negative dimension")
    _check_cols(cols, fmt)
    return rows, cols


def _check_cols(cols: int, fmt: Format) -> None:
    if cols % fmt.block_size:
        raise ValueError(f"{fmt.name}: cols {cols} is not a multiple of the block size {fmt.block_size}")


def _index(v) -> int:
    if isinstance(v, bool):
        raise TypeError("bool is not a dimension")
    return operator.index(v)


def _as_bytes(data, fmt: Format) -> np.ndarray:
    """The buffer as a flat uint8 array, without copying."""
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            raise ValueError(f"{fmt.name}: the data array must be C-contiguous")
        return data.reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(data, dtype=np.uint8)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{fmt.name}: data must be a contiguous buffer (bytes, mmap, numpy array): {e}") from None


def _check_imatrix(imatrix, cols: int, fmt: Format) -> np.ndarray | None:
    """imatrix as a C-contiguous float32 (cols,) array of finite weights >= 0, or None."""
    if imatrix is None:
        if fmt.needs_imatrix:
            raise ValueError(f"{fmt.name}: ggml quantizes this format only with an importance "
                             f"matrix; pass imatrix= (one weight per column)")
        return None
    qw = np.asarray(imatrix)
    if not np.issubdtype(qw.dtype, np.floating):
        raise TypeError(f"{fmt.name}: imatrix must be float32, not {qw.dtype}")
    if qw.shape != (cols,):
        raise ValueError(f"{fmt.name}: imatrix has shape {qw.shape}, expected ({cols},), "
                         f"one weight per column")
    qw = np.ascontiguousarray(qw, dtype=np.float32)
    if not np.isfinite(qw).all():
        raise ValueError(f"{fmt.name}: imatrix holds NaN or Inf (first at column "
                         f"{int(np.argmin(np.isfinite(qw)))})")
    if (qw < 0).any():
        raise ValueError(f"{fmt.name}: imatrix holds a negative weight (first at column "
                         f"{int(np.argmax(qw < 0))})")
    return qw


def _check_x(x, cols: int, name: str) -> tuple[np.ndarray, bool]:
    """x as a float32 (batch, cols) array with its rows or its columns contiguous, and whether it
    was a vector."""
    if type(x) is np.ndarray and x.dtype is _F32 and x.shape == (cols,) and x.strides == (4,):
        return x.reshape(1, cols), True   # the common case (a float32 vector), checked first
    x = np.asarray(x)
    if x.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"{name}: x must be float16, float32 or float64, not {x.dtype}")
    if x.ndim == 1:
        if x.shape[0] != cols:
            raise ValueError(f"{name}: x has {x.shape[0]} values, the matrix has {cols} columns")
        return np.ascontiguousarray(x, dtype=np.float32).reshape(1, cols), True
    if x.ndim == 2:
        if x.shape[0] != cols:
            raise ValueError(f"{name}: x has shape {x.shape}, expected ({cols}, n)")
        # numpy's (cols, n) order, C-contiguous, stays as it is: the quantizers read a few columns
        # of it at a time (_kernels.quantize_activations), faster than a transposed copy first
        xt = np.asarray(x, dtype=np.float32).T
        if xt.strides[1] != xt.itemsize and (xt.strides[0] != xt.itemsize or xt.strides[1] % xt.itemsize):
            xt = np.ascontiguousarray(xt)
        return xt, False
    raise ValueError(f"{name}: x must be 1-D (cols,) or 2-D (cols, n), got {x.ndim}-D")


def _check_out(out, shape: tuple, name: str) -> np.ndarray:
    if out is None:
        return np.empty(shape, dtype=np.float32)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: out must be a numpy array, not {type(out).__name__}")
    if out.dtype != np.float32:
        raise TypeError(f"{name}: out must be float32, not {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"{name}: out has shape {out.shape}, expected {shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name}: out must be C-contiguous and writeable")
    return out
