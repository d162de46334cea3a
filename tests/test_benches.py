"""The benchmark harness's ggml binding (benches/ggml_ref.py) computes what ggml computes.

Skipped when no ggml library is installed (libggml-python or QGEMV_GGML_LIB).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
import ggml_ref  # noqa: E402

ggml = ggml_ref.load()
pytestmark = pytest.mark.skipif(ggml is None, reason="no ggml library (pip install libggml-python)")

ROWS, COLS = 48, 256


def _weights(seed=0):
    return np.random.default_rng(seed).standard_normal((ROWS, COLS)).astype(np.float32)


def test_type_sizes_match_the_format_table():
    for f in qgemv.formats():
        assert ggml.row_size(f.id, COLS) == f.row_nbytes(COLS), f.name


@pytest.mark.parametrize("name", ["q8_0", "q4_0"])
def test_to_float_is_qgemv_dequantize(name):
    fmt = next(f for f in qgemv.formats() if f.name == name)
    blocks = ggml.quantize(fmt.id, _weights())
    got = ggml.to_float(fmt.id, blocks, ROWS * COLS).reshape(ROWS, COLS)
    want = QMatrix(blocks, fmt.id, (ROWS, COLS)).dequantize()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("name", ["q8_0", "q4_0"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_mul_mat_agrees_with_qgemv(name, batch, n_threads):
    fmt = next(f for f in qgemv.formats() if f.name == name)
    blocks = ggml.quantize(fmt.id, _weights())
    x = np.random.default_rng(1).standard_normal((COLS, batch)).astype(np.float32)
    got, times = ggml.mul_mat(fmt.id, blocks, ROWS, COLS, x, n_threads=n_threads, repeat=2)
    want = QMatrix(blocks, fmt.id, (ROWS, COLS)) @ x
    assert got.shape == (ROWS, batch) and len(times) == 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("fmt", qgemv.formats("matmul"), ids=lambda f: f.name)
@pytest.mark.parametrize("batch", [1, 3])
def test_every_format_agrees_with_ggml_mul_mat(fmt, batch):
    """m @ x against ggml's own CPU mul_mat on the same blocks: the same activation format, so
    only the float summation order may differ (for the 32-value formats it is ggml's AVX2 order
    to the bit, for the IQ grids that of ggml's tiled kernels; the bound below is what any order
    allows)."""
    from blocks import random_blocks
    rows, cols = 16, 3 * max(fmt.block_size, 256)          # an odd number of blocks per row
    blocks = random_blocks(fmt.name, rows, cols, seed=fmt.id, moderate=True)
    x = np.random.default_rng(fmt.id).standard_normal((cols, batch)).astype(np.float32)
    got, _ = ggml.mul_mat(fmt.id, blocks, rows, cols, x)
    m = QMatrix(blocks, fmt.id, (rows, cols))
    want = m @ x
    bound = 1e-5 * (np.abs(m.dequantize()).astype(np.float64) @ np.abs(x.astype(np.float64))) + 1e-30
    assert (np.abs(got.astype(np.float64) - want) <= bound).all(), fmt.name


# the formats whose products are ggml's AVX2 arithmetic to the bit (src/formats/q32.h)
GGML_ORDER = ["q4_1", "q5_0", "q5_1", "q8_0"]
# the formats whose products are the arithmetic of ggml's tiled kernels to the bit (ggml-cpu/tiled,
# which ggml runs for 8 columns and more since before 0.25.3; src/formats/iquants.h, iq1.h)
GGML_TILED_ORDER = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"]
# the formats llama.cpp repacks: ggml's arithmetic on its repacked rows (src/formats/q32_x8.h)
INTERLEAVED = [f.name for f in qgemv.formats("matmul") if f.ggml_repack]


def _ggml_product(name: str, rows: int, nblocks: int, batch: int):
    """(format, ggml's blocks of random rows x nblocks blocks, x, ggml's w @ x)."""
    fmt = next(f for f in qgemv.formats() if f.name == name)
    cols = nblocks * fmt.block_size
    w = np.random.default_rng(nblocks).standard_normal((rows, cols)).astype(np.float32)
    blocks = ggml.quantize(fmt.id, w, np.ones(cols, np.float32) if fmt.needs_imatrix else None)
    x = np.random.default_rng(nblocks + batch).standard_normal((cols, batch)).astype(np.float32)
    got, _ = ggml.mul_mat(fmt.id, blocks, rows, cols, x)
    return fmt, blocks, x, got


@pytest.mark.parametrize("name", GGML_ORDER)
@pytest.mark.parametrize("nblocks", [1, 2, 3, 5, 37, 128])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("isa_name", [i for i in qgemv._dispatch.PREFERENCE if i != "baseline"])
def test_ggml_order_formats_give_ggml_bits(name, nblocks, batch, isa_name, monkeypatch):
    """For these formats m @ x is ggml's AVX2 result bit for bit on every x86 variant,
    odd block counts included (the vector loops' remainders and the two-accumulator formats'
    scalar last block), from the GGUF rows and from the panels a variant has: q4_1, q5_0 and
    q5_1's 8 rows (src/formats/q32_pairs.h), q8_0's 16 on AVX-512 (q8_0_x16.h), with 40 rows
    so that the last rows % 16 come from the GGUF rows."""
    if not qgemv._kernels.cpu_runs(isa_name):
        pytest.skip(f"this CPU does not run the {isa_name} variant")
    monkeypatch.setattr(qgemv._dispatch, "isa", isa_name)
    fmt, blocks, x, got = _ggml_product(name, 40, nblocks, batch)
    rows, cols = 40, nblocks * fmt.block_size
    for repack in (True, False):
        qgemv.set_repack(repack)
        try:
            m = QMatrix(blocks, fmt.id, (rows, cols))
            want = m @ x
            panels = bool(qgemv._kernels.panel_rows(isa_name, fmt.id)) and rows >= fmt.interleave
            assert (m._prepared is not None) == (repack and panels)
        finally:
            qgemv.set_repack(True)
        np.testing.assert_array_equal(got.reshape(want.shape).view(np.uint32), want.view(np.uint32),
                                      err_msg=f"repack={repack}")


@pytest.mark.parametrize("name", INTERLEAVED)
@pytest.mark.parametrize("nblocks", [1, 2, 3, 37, 128])
@pytest.mark.parametrize("batch", [1, 3, 5])
def test_interleaved_formats_give_ggml_repacked_bits(name, nblocks, batch, isa):
    """q4_0, iq4_nl and mxfp4 give, on every ISA and either layout, the bits of ggml's
    repacked-rows path (llama.cpp's default for them on x86: gemv, and gemm for batches)."""
    if ggml.repack_buft is None:
        pytest.skip("this ggml has no CPU_REPACK buffer type")
    fmt = next(f for f in qgemv.formats() if f.name == name)
    rows, cols = 24, nblocks * fmt.block_size
    w = np.random.default_rng(nblocks).standard_normal((rows, cols)).astype(np.float32)
    blocks = ggml.quantize(fmt.id, w)
    x = np.random.default_rng(nblocks + batch).standard_normal((cols, batch)).astype(np.float32)
    mm = ggml_ref.MulMat(ggml, fmt.id, [blocks], rows, cols, batch, 1, repack=True)
    try:
        assert mm.repacked, f"ggml did not repack {name}"
        mm.set_x(x)
        mm.run()
        got = mm.result().copy()
    finally:
        mm.close()
    for repack in (True, False):
        qgemv.set_repack(repack)
        try:
            want = QMatrix(blocks, fmt.id, (rows, cols)) @ x
        finally:
            qgemv.set_repack(True)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=f"repack={repack}")


def test_mul_mat_vector_and_repacked_layout():
    blocks = ggml.quantize(2, _weights())                      # q4_0: ggml repacks it on AVX2
    x = np.random.default_rng(2).standard_normal(COLS).astype(np.float32)
    plain, _ = ggml.mul_mat(2, blocks, ROWS, COLS, x)
    assert plain.shape == (ROWS,)
    mm = ggml_ref.MulMat(ggml, 2, [blocks, blocks.copy()], ROWS, COLS, 1, 1,
                         repack=ggml.repack_buft is not None)
    try:
        mm.set_x(x[:, None])
        for _ in range(2):                                     # both weight copies
            mm.run()
            np.testing.assert_allclose(mm.result()[:, 0], plain, rtol=1e-5,
                                       atol=1e-5 * np.abs(plain).max())
    finally:
        mm.close()


# ---------------------------------------------------------------------- quantize benchmarks
import harness  # noqa: E402


def test_quantize_benchmarks_cover_the_weight_formats_qgemv_quantizes():
    import bench_quantize
    weight = [f for f in qgemv.formats("quantize") if f.kind != "activation"]
    assert harness.quantize_formats() == weight
    cases = {(f.name, weighted, impl) for f, weighted, impl in bench_quantize.CASES}
    for f in weight:
        assert {(f.name, False, "qgemv"), (f.name, False, "ggml")} <= cases or f.needs_imatrix, f.name
    assert ("q4_K", True, "ggml") in cases and ("q8_0", True, "qgemv") not in cases


@pytest.mark.parametrize("fmt", harness.quantize_formats(), ids=lambda f: f.name)
def test_quantize_benchmark_times_what_ggml_does(fmt):
    """Both sides give the same bytes for the benchmark's input, and a format is timed with an
    imatrix exactly where ggml's quantizer uses (or requires) one."""
    x, imatrix = harness.quantize_input(4, 2 * max(fmt.block_size, 256), seed=1)
    for weighted in harness.imatrix_variants(fmt):
        im = imatrix if weighted else None
        np.testing.assert_array_equal(ggml.quantize(fmt.id, x, im),
                                      QMatrix.quantize(x, fmt.id, imatrix=im).data.reshape(len(x), -1))
    if not fmt.needs_imatrix:
        uses = not np.array_equal(ggml.quantize(fmt.id, x), ggml.quantize(fmt.id, x, imatrix ** 4))
        assert harness.imatrix_variants(fmt) == ((False, True) if uses else (False,))


def test_compare_quantize_row():
    import compare
    fmt = qgemv.formats("quantize")[[f.name for f in qgemv.formats("quantize")].index("q4_0")]
    row = compare.finish(compare.run_quantize(fmt, True, 2, ggml), {1: 10.0, 2: 20.0})
    assert row["op"] == "quantize (imatrix)" and row["shape"] == harness.QUANTIZE_SHAPE
    assert row["nbytes"] == 4 * harness.QUANTIZE_SHAPE[0] * harness.QUANTIZE_SHAPE[1]
    assert row["qgemv_ms"] > 0 and row["ggml_ms"] > 0 and row["ratio"] > 0 and "pct_bw" not in row
    assert "quantize (imatrix)" in compare.text_table([row])


def test_compare_gives_out_of_cache_rows_the_bandwidth_beside_them():
    import compare
    base = dict(op="gemv", format="q4_0", batch=1, threads=2, nbytes=10 ** 7, qgemv_ms=1.0)
    inside = compare.finish(dict(base, shape=(4096, 4096)), {1: 10.0, 2: 20.0})
    out = compare.finish(dict(base, shape=(14336, 4096), bw_beside=12.5), {1: 10.0, 2: 20.0})
    assert inside["pct_bw"] == 100 * 10.0 / 20.0 and out["pct_bw"] == 100 * 10.0 / 12.5


def test_out_of_cache_copies_outgrow_twice_the_last_level_cache(tmp_path):
    """The out-of-cache rotation is 256 MiB or twice the largest cache sysfs lists (an L3 of
    480 MiB served part of a 256 MiB rotation); sizes in K, M or bytes, unreadable entries
    skipped, no sysfs: 0."""
    for index, size in (("index0", "48K"), ("index2", "2048K"), ("index3", "491520K"), ("index4", "oops")):
        (tmp_path / index).mkdir()
        (tmp_path / index / "size").write_text(size + "\n")
    (tmp_path / "uevent").write_text("")
    assert harness.last_level_cache_bytes(str(tmp_path)) == 480 * harness.MiB
    (tmp_path / "index5").mkdir()
    (tmp_path / "index5" / "size").write_text("1G")
    assert harness.last_level_cache_bytes(str(tmp_path)) == 1024 * harness.MiB
    assert harness.last_level_cache_bytes(str(tmp_path / "none")) == 0
    assert harness.OUT_OF_CACHE_BYTES == max(256 * harness.MiB, 2 * harness.last_level_cache_bytes())
    nbytes = 14336 * 4096
    assert harness.n_copies(nbytes, True) * nbytes >= harness.OUT_OF_CACHE_BYTES


def test_interleaved_times_blocks_after_a_warm_up():
    """Each runner's calls come in blocks of `block` timed calls, each block after untimed calls
    lasting `warmup` seconds (one at least); runners alternate block by block; a runner's
    returned float is its time."""
    calls = []
    runners = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b") or 0.5}
    times = harness.interleaved(runners, reps=4, block=2, warmup=0.0)
    assert calls == list("aaabbb" * 2) and len(times["a"]) == 4 and times["b"] == [0.5] * 4
    stamps = []
    slow = {"a": lambda: (stamps.append(time.perf_counter()), time.sleep(0.002))}
    harness.interleaved(slow, reps=2, block=2, warmup=0.009)
    assert len(stamps) >= 4 and stamps[-2] - stamps[0] >= 0.0089   # untimed calls for 9 ms, then 2 timed


def test_compare_marks_disturbed_rows():
    """A ratio whose median and fastest-call figures part by more than compare.DISTURBED either
    way is marked "~" in both tables (another job ran during part of that row)."""
    import compare
    base = dict(op="gemv", format="q4_0", shape=(4096, 4096), batch=32, threads=2, qgemv_ms=1.0, ggml_ms=1.5)
    calm, slow, fast = dict(base, ratio=1.5, ratio_min=1.6), dict(base, ratio=1.0, ratio_min=2.0), \
        dict(base, ratio=3.0, ratio_min=1.5)
    assert [compare.disturbed(r) for r in (calm, slow, fast)] == [False, True, True]
    assert "1.50 ~" not in compare.markdown_table([calm]) and "1.00 ~" in compare.markdown_table([slow])
    assert "3.00 ~" in compare.text_table([fast])


def test_compare_checks_the_rows_against_issue_6s_targets():
    """Each target names the rows that miss it (a disturbed one marked "~") or says "met"."""
    import compare

    def gemv(fmt, cache, batch, threads, ratio, ms=1.0, pct_bw=95.0, ratio_min=None):
        return dict(op="gemv", format=fmt, cache=cache, batch=batch, threads=threads, qgemv_ms=ms,
                    ratio=ratio, ratio_min=ratio if ratio_min is None else ratio_min, pct_bw=pct_bw)
    rows = [gemv("q4_0", "out", 1, 2, 2.5, ms=1.0, pct_bw=85), gemv("q4_0", "out", 1, 1, 2.4, ms=1.9),
            gemv("q5_0", "out", 1, 2, 1.2, ms=1.0), gemv("q5_0", "out", 1, 1, 1.2, ms=2.0),
            gemv("f32", "out", 1, 2, 0.9, ms=1.0, pct_bw=97), gemv("f32", "out", 1, 1, 0.9, ms=1.5),
            gemv("q8_0", "in", 1, 1, 0.98, ratio_min=1.5), gemv("q8_0", "in", 8, 2, 1.4),
            gemv("q8_0", "in", 32, 2, 2.1),
            dict(op="dequant", format="q8_0", batch=None, threads=1, qgemv_ms=1.0, ratio=1.1, numpy_ms=15.0),
            dict(op="quantize", format="q8_0", batch=None, threads=1, qgemv_ms=1.0, ratio=0.5)]
    short = [dict(gemv("q8_0", "out", 1, t, ratio, pct_bw=50), shape=compare.harness.SHORT_ROWS)
             for t, ratio in ((1, 0.9), (2, 1.1))]   # their own line, not the 14336x4096 ones'
    got = dict(compare.targets(rows + short))
    assert [m for name, m in got.items() if "short rows" in name] == [["q8_0 t1 0.90x"]]
    assert got["GEMV out of cache, 2 threads: at least ggml's speed"] == ["f32 0.90x"]
    assert [m for name, m in got.items() if "read bandwidth" in name] == [["q4_0 85.0%"]]
    assert [m for name, m in got.items() if "compute-bound" in name] == [["q5_0 1.20x"]]
    assert got["GEMV in cache, 1 thread: at least ggml's speed"] == ["q8_0 0.98x ~"]
    assert [m for name, m in got.items() if name.startswith("batches")] == [["q8_0 batch 8 1.40x"]]
    assert got["dequantize, 1 thread: at least ggml's speed"] == []
    assert [m for name, m in got.items() if "gguf-py" in name] == [["q8_0 15.0x"]]
    assert [m for name, m in got.items() if "one" in name and "2 threads" in name] == [["f32 1.50x"]]
    rows[4]["ratio_min"] = 2.0                                     # f32's 2-thread row disturbed
    assert [m for name, m in compare.targets(rows) if "one" in name and "2 threads" in name] == [["f32 1.50x ~"]]
    rows[4]["qgemv_1t_ms"], rows[4]["ratio_min"] = 1.9, 0.9        # one thread timed beside it
    assert [m for name, m in compare.targets(rows) if "one" in name and "2 threads" in name] == [[]]
    rows[0]["qgemv_1t_ms"] = 1.7                                   # ... and preferred to its own row
    assert [m for name, m in compare.targets(rows) if "one" in name and "2 threads" in name] == [["q4_0 1.70x"]]
    assert "- dequantize, 1 thread: at least ggml's speed: met" in compare.targets_text(rows)
    assert "- GEMV out of cache: 2 threads 1.8x one (the read probe itself: 1.05x): q4_0 1.70x" in \
        compare.targets_text(rows, {1: 32.0, 2: 33.6})
    assert compare.compute_bound("iq2_xxs") and compare.compute_bound("tq1_0") and not compare.compute_bound("q4_0")


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".")[:3] if p.isdigit())


@pytest.mark.skipif(ggml is None or _version(ggml.version) < (0, 25, 3),
                    reason="ggml before 0.25.3 (libggml-python's 0.20) has no tiled kernels; "
                           "QGEMV_GGML_LIB names a newer build")
@pytest.mark.parametrize("name", GGML_TILED_ORDER)
@pytest.mark.parametrize("nblocks", [1, 3, 16])
@pytest.mark.parametrize("batch", [8, 17, 32])
def test_iq_grids_give_the_bits_of_ggml_tiled_kernels(name, nblocks, batch, isa):
    """From 8 columns on ggml multiplies these formats by its tiled kernels: per super-block an
    exact integer t, then acc = fma(t d_x factor, d_y, acc).  qgemv does the same on every path
    (vec_dot, its tiles, the packed VNNI tile), so m @ x is ggml's result bit for bit."""
    fmt, blocks, x, got = _ggml_product(name, 40, nblocks, batch)
    want = QMatrix(blocks, fmt.id, (40, nblocks * fmt.block_size)) @ x
    np.testing.assert_array_equal(got.reshape(want.shape).view(np.uint32), want.view(np.uint32))
