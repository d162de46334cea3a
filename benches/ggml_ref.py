"""A small ctypes binding to ggml's CPU library, the reference qgemv is measured against.

Which ggml: the folder named by ``QGEMV_GGML_LIB`` (holding libggml-base.so and
libggml-cpu.so, e.g. a llama-cpp-python built with ``CMAKE_ARGS="-DGGML_NATIVE=ON"``:
``site-packages/llama_cpp/lib``), else the prebuilt one in the PyPI package
``libggml-python`` (``libggml/lib64``).  ``load()`` returns None when neither exists.

What it exposes (type ids are ggml's, the same as ``qgemv.formats()``):

- ``Ggml.to_float(type_id, blocks, n)``: ggml's type traits ``to_float`` (dequantize).
- ``Ggml.quantize(type_id, x)``: ``ggml_quantize_chunk`` over the rows of ``x``.
- ``Ggml.mul_mat(type_id, blocks, rows, cols, x, n_threads)``: ``W @ x`` through a ggml graph
  (``ggml_mul_mat``; activations quantized inside, as in llama.cpp), timed around
  ``ggml_graph_compute`` only.
- ``MulMat``: the same graph prepared once over several copies of the weights (rotated per
  call, so benchmarks can keep the weights out of cache) with a persistent thread pool, and
  optionally with llama.cpp's repacked layout (the CPU_REPACK buffer type).

Tensors are made in a ``no_alloc`` context and pointed at numpy buffers; the only struct
pokes are ``ggml_tensor.data`` and the ABI structs passed by value, whose layouts follow
``ggml.h`` / ``ggml-cpu.h`` (ggml 0.9 - 0.25) and are checked at load against
``ggml_get_data``/``ggml_get_name``/``ggml_nbytes``.
"""
from __future__ import annotations

import ctypes as C
import os
import time
from pathlib import Path

import numpy as np

GGML_MAX_DIMS = 4
GGML_MAX_SRC = 10
GGML_MAX_OP_PARAMS = 64
GGML_MAX_NAME = 64
GGML_MAX_N_THREADS = 512
TYPE_F32 = 0


class ggml_init_params(C.Structure):
    _fields_ = [("mem_size", C.c_size_t), ("mem_buffer", C.c_void_p), ("no_alloc", C.c_bool)]


class ggml_tensor(C.Structure):
    _fields_ = [
        ("type", C.c_int),
        ("buffer", C.c_void_p),
        ("ne", C.c_int64 * GGML_MAX_DIMS),
        ("nb", C.c_size_t * GGML_MAX_DIMS),
        ("op", C.c_int),
        ("op_params", C.c_int32 * (GGML_MAX_OP_PARAMS // 4)),
        ("flags", C.c_int32),
        ("src", C.c_void_p * GGML_MAX_SRC),
        ("view_src", C.c_void_p),
        ("view_offs", C.c_size_t),
        ("data", C.c_void_p),
        ("name", C.c_char * GGML_MAX_NAME),
        ("extra", C.c_void_p),
        ("padding", C.c_char * 8),
    ]


class ggml_cplan(C.Structure):
    _fields_ = [
        ("work_size", C.c_size_t),
        ("work_data", C.c_void_p),
        ("n_threads", C.c_int),
        ("threadpool", C.c_void_p),
        ("abort_callback", C.c_void_p),
        ("abort_callback_data", C.c_void_p),
        ("use_ref", C.c_bool),
    ]


class ggml_threadpool_params(C.Structure):
    _fields_ = [
        ("cpumask", C.c_bool * GGML_MAX_N_THREADS),
        ("n_threads", C.c_int),
        ("prio", C.c_int),
        ("poll", C.c_uint32),
        ("strict_cpu", C.c_bool),
        ("paused", C.c_bool),
    ]


class ggml_type_traits(C.Structure):
    _fields_ = [
        ("type_name", C.c_char_p),
        ("blck_size", C.c_int64),
        ("blck_size_interleave", C.c_int64),
        ("type_size", C.c_size_t),
        ("is_quantized", C.c_bool),
        ("to_float", C.c_void_p),
        ("from_float_ref", C.c_void_p),
    ]


TO_FLOAT = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int64)
LOG_CALLBACK = C.CFUNCTYPE(None, C.c_int, C.c_char_p, C.c_void_p)
P = C.c_void_p
CPU_FEATURES = ("sse3", "ssse3", "avx", "avx_vnni", "avx2", "bmi2", "f16c", "fma", "avx512",
                "avx512_vbmi", "avx512_vnni", "avx512_bf16", "amx_int8", "llamafile")
# llama.cpp's CPU_REPACK buffer type; C++ linkage, so it is looked up by its mangled name
_REPACK_BUFT_SYMBOL = "_Z35ggml_backend_cpu_repack_buffer_typev"


def default_lib_dir() -> Path | None:
    """QGEMV_GGML_LIB, else libggml-python's lib64 folder, else None."""
    env = os.environ.get("QGEMV_GGML_LIB")
    if env:
        return Path(env)
    try:
        import libggml
    except ImportError:
        return None
    for sub in ("lib64", "lib"):
        d = Path(libggml.__file__).parent / sub
        if (d / "libggml-cpu.so").exists():
            return d
    return None


_LOADED: dict = {}


def load(lib_dir=None) -> "Ggml | None":
    """The ggml in ``lib_dir`` (default: ``default_lib_dir()``), loaded once; None if absent."""
    lib_dir = Path(lib_dir) if lib_dir else default_lib_dir()
    if lib_dir is None or not (lib_dir / "libggml-cpu.so").exists():
        return None
    key = str(lib_dir.resolve())
    if key not in _LOADED:
        _LOADED[key] = Ggml(lib_dir)
    return _LOADED[key]


class Ggml:
    def __init__(self, lib_dir: Path):
        self.lib_dir = Path(lib_dir)
        mode = C.RTLD_GLOBAL
        self.base = C.CDLL(str(self.lib_dir / "libggml-base.so"), mode=mode)
        self.cpu = C.CDLL(str(self.lib_dir / "libggml-cpu.so"), mode=mode)
        b, c = self.base, self.cpu
        sig = {
            (b, "ggml_init"): (P, [ggml_init_params]),
            (b, "ggml_free"): (None, [P]),
            (b, "ggml_tensor_overhead"): (C.c_size_t, []),
            (b, "ggml_graph_overhead"): (C.c_size_t, []),
            (b, "ggml_new_tensor_2d"): (C.POINTER(ggml_tensor), [P, C.c_int, C.c_int64, C.c_int64]),
            (b, "ggml_mul_mat"): (C.POINTER(ggml_tensor), [P, P, P]),
            (b, "ggml_new_graph"): (P, [P]),
            (b, "ggml_build_forward_expand"): (None, [P, P]),
            (b, "ggml_get_data"): (P, [P]),
            (b, "ggml_get_name"): (C.c_char_p, [P]),
            (b, "ggml_set_name"): (P, [P, C.c_char_p]),
            (b, "ggml_nbytes"): (C.c_size_t, [P]),
            (b, "ggml_row_size"): (C.c_size_t, [C.c_int, C.c_int64]),
            (b, "ggml_type_size"): (C.c_size_t, [C.c_int]),
            (b, "ggml_blck_size"): (C.c_int64, [C.c_int]),
            (b, "ggml_type_name"): (C.c_char_p, [C.c_int]),
            (b, "ggml_get_type_traits"): (C.POINTER(ggml_type_traits), [C.c_int]),
            (b, "ggml_quantize_chunk"): (C.c_size_t, [C.c_int, P, P, C.c_int64, C.c_int64, C.c_int64, P]),
            (b, "ggml_quantize_requires_imatrix"): (C.c_bool, [C.c_int]),
            (b, "ggml_threadpool_params_default"): (ggml_threadpool_params, [C.c_int]),
            (c, "ggml_cpu_init"): (None, []),
            (c, "ggml_graph_plan"): (ggml_cplan, [P, C.c_int, P]),
            (c, "ggml_graph_compute"): (C.c_int, [P, C.POINTER(ggml_cplan)]),
            (c, "ggml_threadpool_new"): (P, [C.POINTER(ggml_threadpool_params)]),
            (c, "ggml_threadpool_free"): (None, [P]),
            (c, "ggml_threadpool_pause"): (None, [P]),
            (c, "ggml_threadpool_resume"): (None, [P]),
            (b, "ggml_backend_buft_alloc_buffer"): (P, [P, C.c_size_t]),
            (b, "ggml_backend_buft_get_alloc_size"): (C.c_size_t, [P, P]),
            (b, "ggml_backend_buffer_get_base"): (P, [P]),
            (b, "ggml_backend_buffer_free"): (None, [P]),
            (b, "ggml_backend_tensor_alloc"): (C.c_int, [P, P, P]),
            (b, "ggml_backend_tensor_set"): (None, [P, P, C.c_size_t, C.c_size_t]),
        }
        for (lib, name), (res, args) in sig.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
            setattr(self, name, f)
        for name in ("ggml_version", "ggml_commit"):
            f = getattr(b, name, None)
            if f is not None:
                f.restype = C.c_char_p
        self.version = b.ggml_version().decode() if hasattr(b, "ggml_version") else "?"
        self.commit = b.ggml_commit().decode() if hasattr(b, "ggml_commit") else "?"
        self.features = {}
        for feat in CPU_FEATURES:
            f = getattr(c, f"ggml_cpu_has_{feat}", None)
            if f is not None:
                f.restype = C.c_int
                self.features[feat] = bool(f())
        try:
            rb = getattr(c, _REPACK_BUFT_SYMBOL)
            rb.restype = P
            self.repack_buft = rb()
        except AttributeError:
            self.repack_buft = None
        # ggml logs (e.g. "repack: repack tensor ... with q4_0_8x8") to stderr; keep benchmarks quiet
        b.ggml_log_set.restype, b.ggml_log_set.argtypes = None, [LOG_CALLBACK, P]
        self._quiet = LOG_CALLBACK(lambda level, text, user: None)
        b.ggml_log_set(self._quiet, None)
        self.ggml_cpu_init()
        self._check_abi()

    def __repr__(self):
        return f"Ggml({self.version} {self.commit}, {self.lib_dir})"

    def describe(self) -> str:
        on = [k for k, v in self.features.items() if v]
        return f"ggml {self.version} ({self.commit}) from {self.lib_dir}; CPU features: {' '.join(on)}"

    # ------------------------------------------------------------------ checks
    def _check_abi(self) -> None:
        """The ggml_tensor layout this file assumes matches the library's accessors."""
        ctx = self._context(2)
        try:
            t = self.ggml_new_tensor_2d(ctx, TYPE_F32, 32, 3)
            self.ggml_set_name(C.cast(t, P), b"abi-check")
            buf = np.zeros(96, np.float32)
            t.contents.data = buf.ctypes.data
            ok = (self.ggml_get_data(C.cast(t, P)) == buf.ctypes.data
                  and self.ggml_get_name(C.cast(t, P)) == b"abi-check"
                  and t.contents.name == b"abi-check"
                  and list(t.contents.ne) == [32, 3, 1, 1]
                  and self.ggml_nbytes(C.cast(t, P)) == 384
                  and self.ggml_tensor_overhead() >= C.sizeof(ggml_tensor))
        finally:
            self.ggml_free(ctx)
        if not ok:
            raise RuntimeError(f"ggml in {self.lib_dir}: struct ggml_tensor layout differs from "
                               f"benches/ggml_ref.py's; update the binding")

    def _context(self, n_tensors: int, n_graphs: int = 0):
        size = n_tensors * self.ggml_tensor_overhead() + n_graphs * self.ggml_graph_overhead() + 1024
        ctx = self.ggml_init(ggml_init_params(size, None, True))
        if not ctx:
            raise MemoryError("ggml_init failed")
        return ctx

    # ------------------------------------------------------------------ type traits
    def type_name(self, type_id: int) -> str:
        return self.ggml_type_name(type_id).decode()

    def row_size(self, type_id: int, n: int) -> int:
        return self.ggml_row_size(type_id, n)

    def to_float(self, type_id: int, blocks, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """ggml's ``to_float`` of the first ``n`` values in ``blocks`` (float32, shape (n,)), into
        ``out`` (a C-contiguous float32 array of n values) when given."""
        src = np.ascontiguousarray(np.frombuffer(blocks, np.uint8) if not isinstance(blocks, np.ndarray)
                                   else blocks.reshape(-1).view(np.uint8))
        need = self.row_size(type_id, n)
        if src.size < need:
            raise ValueError(f"{self.type_name(type_id)}: {n} values need {need} bytes, got {src.size}")
        if out is None:
            out = np.empty(n, np.float32)
        elif out.dtype != np.float32 or out.size != n or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of {n} values")
        out = out.reshape(-1)
        if type_id == TYPE_F32:
            out[:] = src[:need].view(np.float32)
            return out
        fn = self.ggml_get_type_traits(type_id).contents.to_float
        if not fn:
            raise ValueError(f"ggml has no to_float for type {type_id}")
        TO_FLOAT(fn)(src.ctypes.data, out.ctypes.data, n)
        return out

    def quantize(self, type_id: int, x, imatrix=None) -> np.ndarray:
        """``ggml_quantize_chunk`` of float32 rows ``x`` (rows, cols) -> (rows, row bytes) uint8.

        Formats that require an importance matrix get a uniform one unless given.
        """
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim == 1:
            x = x[None]
        rows, cols = x.shape
        out = np.empty((rows, self.row_size(type_id, cols)), np.uint8)
        if imatrix is None and self.ggml_quantize_requires_imatrix(type_id):
            imatrix = np.ones(cols, np.float32)
        im = None if imatrix is None else np.ascontiguousarray(imatrix, np.float32)
        written = self.ggml_quantize_chunk(type_id, x.ctypes.data, out.ctypes.data, 0, rows, cols,
                                           None if im is None else im.ctypes.data)
        assert written == out.nbytes, (written, out.nbytes)
        return out

    # ------------------------------------------------------------------ products
    def mul_mat(self, type_id: int, blocks, rows: int, cols: int, x, n_threads: int = 1,
                repeat: int = 1, repack: bool = False):
        """``W @ x`` for x (cols,) or (cols, batch) -> (result float32, list of seconds per run)."""
        x = np.asarray(x, np.float32)
        vector = x.ndim == 1
        mm = MulMat(self, type_id, [blocks], rows, cols, 1 if vector else x.shape[1], n_threads,
                    repack=repack)
        try:
            mm.set_x(x if not vector else x[:, None])
            times = [mm.run() for _ in range(repeat)]
            y = mm.result()
        finally:
            mm.close()
        return (y[:, 0] if vector else y), times


class MulMat:
    """``ggml_mul_mat(W_i, x)`` graphs over weight copies ``W_i``, run in turn by ``run()``.

    The weights are the caller's buffers (kept alive here), or with ``repack=True`` copies in
    llama.cpp's CPU_REPACK buffer (interleaved rows, where ggml has them for the type; check
    ``self.repacked``).  A persistent ggml thread pool serves every run; ``pause()`` it between
    measurements so its workers do not spin while something else is timed.
    """

    def __init__(self, g: Ggml, type_id: int, copies, rows: int, cols: int, batch: int,
                 n_threads: int, repack: bool = False):
        self.g, self.type_id, self.rows, self.cols, self.batch = g, type_id, rows, cols, batch
        self.n_threads = n_threads
        row_nbytes = g.row_size(type_id, cols)
        self.copies = [np.ascontiguousarray(np.asarray(c).reshape(-1).view(np.uint8)) for c in copies]
        for c in self.copies:
            if c.size < rows * row_nbytes:
                raise ValueError(f"{g.type_name(type_id)} {rows}x{cols} needs {rows * row_nbytes} bytes, got {c.size}")
        n = len(self.copies)
        self.ctx = g._context(3 * n, n_graphs=n)
        self.x = np.zeros((batch, cols), np.float32)      # ggml's src1: ne0 = cols, ne1 = batch
        self.y = np.zeros((batch, rows), np.float32)      # dst: ne0 = rows, ne1 = batch
        self.buffers, self.graphs, self.repacked = [], [], False
        self._closed = False
        if repack and g.repack_buft is None:
            raise RuntimeError("this ggml exports no CPU_REPACK buffer type")
        self.plans = []
        for c in self.copies:
            w = g.ggml_new_tensor_2d(self.ctx, type_id, cols, rows)
            xt = g.ggml_new_tensor_2d(self.ctx, TYPE_F32, cols, batch)
            xt.contents.data = self.x.ctypes.data
            if repack:
                wp = C.cast(w, P)
                size = g.ggml_backend_buft_get_alloc_size(g.repack_buft, wp)
                buf = g.ggml_backend_buft_alloc_buffer(g.repack_buft, size)
                if not buf:
                    raise MemoryError("repack buffer allocation failed")
                self.buffers.append(buf)
                g.ggml_backend_tensor_alloc(buf, wp, g.ggml_backend_buffer_get_base(buf))
                # init_tensor sets extra to the repack traits when ggml interleaves this type and
                # shape; otherwise set_tensor would dereference NULL, so use the plain layout
                if w.contents.extra:
                    g.ggml_backend_tensor_set(wp, c.ctypes.data, 0, rows * row_nbytes)
                    self.repacked = True
                else:
                    g.ggml_backend_buffer_free(self.buffers.pop())
                    w.contents.buffer = None
                    w.contents.data = c.ctypes.data
            else:
                w.contents.data = c.ctypes.data
            y = g.ggml_mul_mat(self.ctx, C.cast(w, P), C.cast(xt, P))
            y.contents.data = self.y.ctypes.data
            gr = g.ggml_new_graph(self.ctx)
            g.ggml_build_forward_expand(gr, C.cast(y, P))
            self.graphs.append(gr)
        params = g.ggml_threadpool_params_default(n_threads)
        params.paused = True                  # no spinning workers until the first run
        self.pool = g.ggml_threadpool_new(C.byref(params))
        self.paused = True
        for gr in self.graphs:
            plan = g.ggml_graph_plan(gr, n_threads, self.pool)
            work = np.empty(max(plan.work_size, 1) + 64, np.uint8)
            plan.work_data = work.ctypes.data
            self.plans.append((plan, work))
        self.i = 0

    def set_x(self, x) -> None:
        """x (cols, batch) float32: the activations every later run multiplies."""
        self.x[...] = np.asarray(x, np.float32).T

    def run(self) -> float:
        """One ``W_i @ x`` on the next copy; seconds spent in ``ggml_graph_compute``."""
        if self.paused:
            self.g.ggml_threadpool_resume(self.pool)
            self.paused = False
        gr, (plan, _) = self.graphs[self.i], self.plans[self.i]
        self.i = (self.i + 1) % len(self.graphs)
        t0 = time.perf_counter()
        status = self.g.ggml_graph_compute(gr, C.byref(plan))
        t1 = time.perf_counter()
        if status != 0:
            raise RuntimeError(f"ggml_graph_compute returned {status}")
        return t1 - t0

    def result(self) -> np.ndarray:
        """The last product, (rows, batch) float32 (a copy)."""
        return self.y.T.copy()

    def pause(self) -> None:
        if not self.paused:
            self.g.ggml_threadpool_pause(self.pool)
            self.paused = True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.g.ggml_threadpool_free(self.pool)
        for buf in self.buffers:
            self.g.ggml_backend_buffer_free(buf)
        self.g.ggml_free(self.ctx)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
