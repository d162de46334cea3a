"""pytest-benchmark: qgemv GEMV and dequantize per format, next to ggml, numpy and gguf-py.

    cd <repo> && python -m pytest benches/bench_gemv.py --benchmark-enable -p no:cacheprovider \
        [-k "q4_0 and 14336"] [--benchmark-columns=median,iqr,rounds] [--benchmark-json=out.json]

(``--benchmark-enable`` because pyproject's addopts disables benchmarks for the test run.)
Formats come from the table (``qgemv.formats("matmul")`` / ``("dequantize")``).  Each
benchmark's ``extra_info`` holds ``gbps`` (weight bytes / median time) and, for GEMV,
``pct_bw`` (of the read bandwidth measured by ``test_read_bandwidth`` in the same session).
Cases: GEMV at 4096x4096 (in cache) and 14336x4096 (out of cache: weights rotated through
copies totalling harness.OUT_OF_CACHE_BYTES, 256 MiB or twice the L3), batch 1 and 8, 1 and 2
threads, and on short rows (57344x768 out of cache, batch 1: harness.SHORT_ROWS), for qgemv,
ggml (plain and, where ggml has it, repacked layout) and numpy (float32 matmul on the
dequantized matrix); dequantize 4096x4096 on 1 thread for qgemv, ggml's ``to_float`` and
gguf-py.
For one table of qgemv vs ggml side by side, use ``benches/compare.py``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ggml_ref  # noqa: E402
import harness  # noqa: E402

from qgemv import QMatrix  # noqa: E402

GGML = ggml_ref.load()
ROUNDS = 20
BANDWIDTH: dict[int, float] = {}
IMPLS = ("qgemv", "ggml", "ggml_repack", "numpy")

# one case per (format, shape) block, impl innermost so the weight copies are made once
GEMV_CASES = [(f, shape, batch, threads, impl)
              for f in harness.gemv_formats() for shape in harness.SHAPES
              for batch in (1, 8) for threads in (1, 2) for impl in IMPLS]
GEMV_CASES += [(f, harness.SHORT_ROWS, 1, threads, impl)
               for f in harness.gemv_formats() for threads in (1, 2) for impl in IMPLS]


def _id(case):
    f, (r, c), batch, threads, impl = case
    return f"{f.name}-{r}x{c}-b{batch}-t{threads}-{impl}"


_copies_cache: dict = {}


def _copies(fmt, shape):
    """Weight copies of the current (format, shape); the previous ones are dropped."""
    key = (fmt.id, shape)
    if key not in _copies_cache:
        _copies_cache.clear()
        _copies_cache[key] = harness.weight_copies(fmt, *shape, out_of_cache=shape[0] >= 14336)
    return _copies_cache[key]


@pytest.mark.parametrize("n_threads", [1, 2])
def test_read_bandwidth(benchmark, n_threads):
    """Streaming read of 1 GiB by n_threads numpy reductions (GIL released): the ceiling."""
    a = np.ones((1 << 30) // 8, np.uint64)
    parts = np.array_split(a, n_threads)
    import threading

    def read():
        ts = [threading.Thread(target=harness._read_all, args=(p,)) for p in parts]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    benchmark.pedantic(read, rounds=7, iterations=1, warmup_rounds=1)
    BANDWIDTH[n_threads] = a.nbytes / benchmark.stats.stats.median / 1e9
    benchmark.extra_info["gbps"] = round(BANDWIDTH[n_threads], 2)


def _record(benchmark, nbytes, threads=None):
    gbps = nbytes / benchmark.stats.stats.median / 1e9
    benchmark.extra_info["gbps"] = round(gbps, 2)
    benchmark.extra_info["weight_bytes"] = nbytes
    if threads in BANDWIDTH:
        benchmark.extra_info["pct_bw"] = round(100 * gbps / BANDWIDTH[threads], 1)


@pytest.mark.parametrize("case", GEMV_CASES, ids=_id)
def test_gemv(benchmark, case):
    fmt, (rows, cols), batch, threads, impl = case
    if impl.startswith("ggml") and GGML is None:
        pytest.skip("no ggml library (pip install libggml-python or set QGEMV_GGML_LIB)")
    copies = _copies(fmt, (rows, cols))
    x = harness.activations(cols, batch)
    benchmark.group = f"gemv {rows}x{cols} b{batch} t{threads}"
    benchmark.extra_info.update(format=fmt.name, impl=impl, copies=len(copies))
    if impl == "qgemv":
        benchmark.pedantic(harness.QgemvGemv(fmt, copies, rows, cols, x, threads),
                           rounds=ROUNDS, iterations=1, warmup_rounds=2)
    elif impl.startswith("ggml"):
        run = harness.GgmlGemv(GGML, fmt, copies, rows, cols, x, threads, repack=impl == "ggml_repack")
        try:
            if impl == "ggml_repack" and not run.repacked:
                pytest.skip(f"ggml has no repacked layout for {fmt.name} here")
            benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=2)
        finally:
            run.close()
    else:
        from threadpoolctl import threadpool_limits
        dense = QMatrix(copies[0], fmt.id, (rows, cols)).dequantize()
        with threadpool_limits(threads):
            benchmark.pedantic(lambda: dense @ x, rounds=max(5, ROUNDS // 4), iterations=1,
                               warmup_rounds=1)
    _record(benchmark, copies[0].nbytes, threads)


DEQUANT_CASES = [(f, impl) for f in harness.dequant_formats() for impl in ("qgemv", "ggml", "gguf_py")]


@pytest.mark.parametrize("case", DEQUANT_CASES, ids=lambda c: f"{c[0].name}-{c[1]}")
def test_dequantize(benchmark, case):
    fmt, impl = case
    rows, cols = 4096, 4096
    benchmark.group = "dequantize 4096x4096 t1"
    benchmark.extra_info.update(format=fmt.name, impl=impl)
    w = harness.weights(fmt, rows, cols)
    if impl == "qgemv":
        m = QMatrix(w, fmt.id, (rows, cols))
        out = np.empty((rows, cols), np.float32)
        benchmark.pedantic(m.dequantize, kwargs={"out": out, "n_threads": 1}, rounds=ROUNDS,
                           iterations=1, warmup_rounds=1)
    elif impl == "ggml":
        if GGML is None:
            pytest.skip("no ggml library")
        benchmark.pedantic(GGML.to_float, args=(fmt.id, w, rows * cols), rounds=ROUNDS,
                           iterations=1, warmup_rounds=1)
    else:
        if not fmt.gguf_py:
            pytest.skip(f"gguf-py does not dequantize {fmt.name}")
        import gguf
        w = w[:512]                               # gguf-py is slow; GB/s is per byte anyway
        qt = gguf.GGMLQuantizationType(fmt.id)
        benchmark.pedantic(gguf.quants.dequantize, args=(w, qt), rounds=3, iterations=1)
    _record(benchmark, w.nbytes)
