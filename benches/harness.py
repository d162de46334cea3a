"""What the benchmarks share: test matrices, weight copies, the bandwidth probe, fair timing.

Everything is parametrized from the format table (``qgemv.formats("matmul")``,
``("dequantize")`` and ``("quantize")``), so a format joins the benchmarks once its row lists
the op.

Timing on a small shared machine: qgemv and ggml are timed in alternating blocks of calls
(``interleaved``) so both see the same background load, each block after untimed calls that
last at least WARMUP seconds (thread pools waking, and the first calls after the other side's
block running slow for a few milliseconds), and figures are medians over all the timed calls.
"""
from __future__ import annotations

import math
import os
import statistics
import threading
import time

import numpy as np

import qgemv
from qgemv import QMatrix

try:
    import ggml_ref
except ImportError:              # imported as benches.harness
    from . import ggml_ref

MiB = 1 << 20


def last_level_cache_bytes(cpu_dir: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The size of the largest cache sysfs lists for CPU 0 (its L3), in bytes; 0 where unknown."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    best = 0
    try:
        entries = os.listdir(cpu_dir)
    except OSError:
        return 0
    for entry in entries:
        try:
            with open(os.path.join(cpu_dir, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text and text[-1] in units and text[:-1].isdigit():
            best = max(best, int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            best = max(best, int(text))
    return best


# weight copies rotated per call: at least 256 MiB (8x a Zen 4's 32 MiB L3) and twice the L3
# this machine reports.  An Intel Xeon guest reporting 480 MiB served part of a 256 MiB rotation
# from its L3: q8_0 14336 x 4096, 2 threads, 32.2-32.6 GB/s against 30.3-31.3 with 1 and 2 GiB
# (q4_K 33.0-34.5 against 30.6-31.4; the read probe 31.8-33.2: benches/RESULTS.md, 53rd session)
OUT_OF_CACHE_BYTES = max(256 * MiB, 2 * last_level_cache_bytes())
SHAPES = ((4096, 4096), (14336, 4096))
# a small model's short rows out of cache, batch 1 (SmolLM2-135M's 576 values, Gemma-3 270M's
# 640; 768 is a whole number of every format's blocks): per-row and per-panel costs, and how a
# single column's streams restart, weigh there as they do not on rows of 4096
SHORT_ROWS = (57344, 768)
BASE_ROWS = 512                  # rows quantized from Gaussian values, then tiled


def gemv_formats(names=None):
    """Formats qgemv multiplies (optionally only ``names``), in table order."""
    return _select(qgemv.formats("matmul"), names)


def dequant_formats(names=None):
    """Formats qgemv dequantizes that are weight formats (not element/activation-only types)."""
    return _select([f for f in qgemv.formats("dequantize") if f.act is not None], names)


def quantize_formats(names=None):
    """Weight formats qgemv quantizes: every one ``ggml_quantize_chunk`` has a path for (the
    activation-only q8_1 and q8_K have none)."""
    return _select([f for f in qgemv.formats("quantize") if f.act is not None], names)


def _select(fmts, names):
    if not names:
        return list(fmts)
    wanted = {n.lower() for n in names}
    return [f for f in fmts if f.name.lower() in wanted]


# ---------------------------------------------------------------------- matrices
def quantize(fmt, x: np.ndarray) -> np.ndarray:
    """float32 rows -> blocks of ``fmt``, by ggml if present, else libgguf."""
    g = ggml_ref.load()
    if g is not None:
        return g.quantize(fmt.id, x)
    import libgguf
    im = np.ones(x.shape[1], np.float32) if libgguf.quantize_requires_imatrix(fmt.id) else None
    return np.ascontiguousarray(libgguf.quantize_rows(x, fmt.id, imatrix=im)).view(np.uint8)


_BASE_CACHE: dict = {}


def weights(fmt, rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """A (rows, row_nbytes) uint8 matrix of ``fmt`` blocks: Gaussian weights quantized by ggml.

    ``BASE_ROWS`` distinct rows are quantized and tiled (speed does not depend on which rows
    repeat, and quantizing 58 M values per format would dominate the run).
    """
    key = (fmt.id, cols, seed)
    if key not in _BASE_CACHE:
        x = np.random.default_rng(seed).standard_normal((BASE_ROWS, cols)).astype(np.float32)
        _BASE_CACHE[key] = quantize(fmt, x).reshape(BASE_ROWS, fmt.row_nbytes(cols))
    base = _BASE_CACHE[key]
    reps = -(-rows // BASE_ROWS)
    return np.ascontiguousarray(np.tile(base, (reps, 1))[:rows])


def n_copies(nbytes: int, out_of_cache: bool) -> int:
    """How many weight copies to rotate through so the total is >= OUT_OF_CACHE_BYTES."""
    return max(2, math.ceil(OUT_OF_CACHE_BYTES / nbytes)) if out_of_cache else 1


def weight_copies(fmt, rows: int, cols: int, out_of_cache: bool) -> list[np.ndarray]:
    w = weights(fmt, rows, cols)
    return [w] + [w.copy() for _ in range(n_copies(w.nbytes, out_of_cache) - 1)]


def activations(cols: int, batch: int, seed: int = 1) -> np.ndarray:
    """x of shape (cols, batch) float32 (numpy matmul's layout for ``m @ x``)."""
    return np.random.default_rng(seed).standard_normal((cols, batch)).astype(np.float32)


# ---------------------------------------------------------------------- quantize inputs
QUANTIZE_SHAPE = (64, 4096)      # 1 MiB of float32: ggml's slowest searches take ~0.3 s on it


def quantize_input(rows: int = QUANTIZE_SHAPE[0], cols: int = QUANTIZE_SHAPE[1], seed: int = 0):
    """Gaussian float32 rows and an importance matrix (positive, uneven, as llama.cpp's
    mean squared activations): the one input both sides quantize."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    imatrix = (rng.random(cols) ** 2 * 4 + 0.05).astype(np.float32)
    return x, imatrix


def imatrix_variants(fmt) -> tuple[bool, ...]:
    """Whether to time ``fmt`` without and with an importance matrix: only with one where ggml
    requires it, both where its quantizer uses one (its bytes change), else only without."""
    if fmt.needs_imatrix:
        return (True,)
    x, imatrix = quantize_input(4, 2 * max(fmt.block_size, 256), seed=1)
    plain = QMatrix.quantize(x, fmt.id).data
    weighted = QMatrix.quantize(x, fmt.id, imatrix=imatrix ** 4).data
    return (False, True) if not np.array_equal(plain, weighted) else (False,)


# ---------------------------------------------------------------------- bandwidth
def _read_all(a: np.ndarray) -> None:
    np.bitwise_or.reduce(a)      # integer OR: vectorized, exact, a read of every byte


def read_bandwidth(n_threads: int, nbytes: int = 1 << 30, reps: int = 7, stat=None) -> float:
    """Streaming read bandwidth (GB/s) of ``n_threads`` threads each reducing its share of a
    1 GiB array with numpy (which releases the GIL): independent of qgemv's kernels."""
    a = np.ones(nbytes // 8, np.uint64)
    parts = np.array_split(a, n_threads)
    times = []
    for _ in range(reps + 1):
        start = threading.Barrier(n_threads + 1)
        def work(p):
            start.wait()
            _read_all(p)
        ts = [threading.Thread(target=work, args=(p,)) for p in parts]
        for t in ts:
            t.start()
        start.wait()
        t0 = time.perf_counter()
        for t in ts:
            t.join()
        times.append(time.perf_counter() - t0)
    return a.nbytes / (stat or statistics.median)(times[1:]) / 1e9


# ---------------------------------------------------------------------- timing
# untimed calls before each block, in seconds (one call at least).  One call was not enough:
# after the other side's block (or any pause) the next calls ran slower for a few
# milliseconds, which weighs on the faster side's short calls most (Intel Xeon, q4_0 14336 x
# 4096 out of cache, 2 threads, alone 1.12-1.14 ms: blocks after 10 ms sleeps 1.17-1.24,
# after ggml's 1.16-1.18; with 5-10 ms of warm-up 1.12-1.13, ggml's own times even)
WARMUP = 0.01


def interleaved(runners: dict, reps: int, block: int = 5, warmup: float = WARMUP) -> dict:
    """Run each ``runners[name]()`` (returns its own seconds as a float, else it is timed here) in alternating
    blocks of ``block`` timed calls until each has ``reps``, each block after untimed calls
    lasting ``warmup`` seconds (one at least).  Returns name -> list of seconds.

    A runner may have ``pause`` / ``resume`` attributes (ggml's thread pool) called around
    its blocks so idle workers do not spin while the others are timed.
    """
    times = {name: [] for name in runners}
    while any(len(t) < reps for t in times.values()):
        for name, run in runners.items():
            if len(times[name]) >= reps:
                continue
            start = time.perf_counter()
            run()
            while time.perf_counter() - start < warmup:
                run()
            for _ in range(block):
                t0 = time.perf_counter()
                t = run()
                times[name].append(t if isinstance(t, float) else time.perf_counter() - t0)
            if hasattr(run, "pause"):
                run.pause()
    return times


def median(ts) -> float:
    return statistics.median(ts) if ts else float("nan")


class QgemvGemv:
    """Callable: one ``m.matmul(x)`` on the next weight copy (rotated), into a fixed output."""

    def __init__(self, fmt, copies, rows, cols, x, n_threads):
        self.ms = [QMatrix(c, fmt.id, (rows, cols)) for c in copies]
        self.x, self.n_threads, self.i = x, n_threads, 0
        self.out = np.empty((rows, x.shape[1]), np.float32)
        for m in self.ms:   # a first product prepares a matrix's interleaved layout, if any (as
            m.matmul(x, n_threads=n_threads, out=self.out)   # a model's first token does): untimed

    def __call__(self):
        m = self.ms[self.i]
        self.i = (self.i + 1) % len(self.ms)
        m.matmul(self.x, n_threads=self.n_threads, out=self.out)


class GgmlGemv:
    """Callable: one ``ggml_mul_mat`` on the next weight copy; returns seconds in ggml."""

    def __init__(self, g, fmt, copies, rows, cols, x, n_threads, repack=False):
        self.mm = ggml_ref.MulMat(g, fmt.id, copies, rows, cols, x.shape[1], n_threads, repack=repack)
        self.mm.set_x(x)
        self.repacked = self.mm.repacked

    def __call__(self):
        return self.mm.run()

    def pause(self):
        self.mm.pause()

    def close(self):
        self.mm.close()


def machine() -> dict:
    """CPU model, cores, SIMD flags, load average: the header of RESULTS.md."""
    info = {"model": "?", "cores": os.cpu_count(), "flags": ""}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        for line in text.splitlines():
            if line.startswith("model name") and info["model"] == "?":
                info["model"] = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                info["flags"] = " ".join(sorted(f for f in flags if f.startswith(("avx", "fma", "f16c", "bmi2", "amx"))))
                break
    except OSError:
        pass
    try:
        import subprocess
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "CPU family", "Model", "L3 cache"):
                info[k.strip()] = v.strip()
    except OSError:
        pass
    info["loadavg"] = " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"
    return info
