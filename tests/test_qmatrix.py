"""QMatrix against the oracles: gguf-py's dequantize (bit for bit) and float64 products.

Parametrized over the format table: a format joins these tests by listing the op.
"""
from __future__ import annotations

import mmap
import threading

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix, _dispatch, _formats
from blocks import random_blocks

gguf = pytest.importorskip("gguf")

DEQUANT = [f for f in qgemv.formats("dequantize") if f.kind != "activation"]
MATMUL = qgemv.formats("matmul")


def ids(fmt) -> str:
    return fmt.name


def oracle_dequantize(fmt, blocks: np.ndarray, cols: int) -> np.ndarray:
    """ggml's to_float of the blocks, as gguf-py (or numpy for plain element types) computes it."""
    if fmt.kind == "int" or fmt.name == "f64":
        dtype = np.dtype({"f64": "float64"}.get(fmt.name, fmt.name.replace("i", "int")))
        return blocks.view(dtype).astype(np.float32).reshape(-1, cols)
    qt = gguf.GGMLQuantizationType[fmt.name.upper()]
    return gguf.quants.dequantize(blocks, qt).astype(np.float32).reshape(-1, cols)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def cols_for(fmt) -> int:
    return 4 * max(fmt.block_size, 64)


# ---------------------------------------------------------------------- dequantize
@pytest.mark.parametrize("fmt", [f for f in DEQUANT if f.gguf_py or f.kind == "int" or f.name == "f64"], ids=ids)
@pytest.mark.parametrize("moderate", [False, True], ids=["any-scales", "moderate-scales"])
def test_dequantize_bit_exact_random_blocks(fmt, moderate, isa):
    cols = cols_for(fmt)
    blocks = random_blocks(fmt.name, 24, cols, seed=fmt.id, moderate=moderate)
    m = QMatrix(blocks, fmt.name, (24, cols))
    np.testing.assert_array_equal(bits(m.dequantize()), bits(oracle_dequantize(fmt, blocks, cols)))


def _gguf_quantizable(fmt) -> bool:
    try:
        gguf.quants.quantize(np.zeros((1, cols_for(fmt)), np.float32), gguf.GGMLQuantizationType[fmt.name.upper()])
        return True
    except (NotImplementedError, KeyError, TypeError):
        return False


@pytest.mark.parametrize("fmt", [f for f in DEQUANT if f.gguf_py and f.kind != "int" and _gguf_quantizable(f)], ids=ids)
def test_dequantize_bit_exact_quantized_blocks(fmt, isa):
    """Blocks as a quantizer makes them: smooth, noisy, heavy-tailed and all-zero rows."""
    cols = cols_for(fmt)
    rng = np.random.default_rng(7)
    t = np.arange(cols, dtype=np.float32)
    w = np.stack([np.cos(0.37 * t + 1) * 2 + 0.1, rng.standard_normal(cols),
                  rng.standard_t(2, cols), np.zeros(cols)]).astype(np.float32)
    blocks = gguf.quants.quantize(w, gguf.GGMLQuantizationType[fmt.name.upper()])
    m = QMatrix(blocks, fmt.name, w.shape)
    np.testing.assert_array_equal(bits(m.dequantize()), bits(oracle_dequantize(fmt, blocks, cols)))


@pytest.mark.parametrize("fmt", DEQUANT, ids=ids)
def test_dequantize_rows_reads_only_those_rows(fmt, isa):
    cols = cols_for(fmt)
    blocks = random_blocks(fmt.name, 16, cols, seed=3, moderate=True)
    m = QMatrix(blocks, fmt.name, (16, cols))
    full = m.dequantize()
    picked = [5, 0, 15, 5, -1]
    np.testing.assert_array_equal(bits(m.dequantize_rows(picked)), bits(full[picked]))
    # a buffer holding only rows 3..4 (as a view) still serves them: nothing else is touched
    two = QMatrix(blocks[3:5].copy(), fmt.name, (2, cols))
    np.testing.assert_array_equal(bits(two.dequantize_rows([1, 0])), bits(full[[4, 3]]))


def test_dequantize_variants_agree():
    """Every ISA variant this CPU runs gives the same bits (and the same as gguf-py above)."""
    results = {}
    for isa in qgemv._dispatch.runnable():
        qgemv._dispatch.isa, saved = isa, qgemv._dispatch.isa
        try:
            results[isa] = [bits(QMatrix(random_blocks(f.name, 8, cols_for(f), seed=1), f.name,
                                         (8, cols_for(f))).dequantize()) for f in DEQUANT]
        finally:
            qgemv._dispatch.isa = saved
    first = next(iter(results.values()))
    for isa, got in results.items():
        for f, a, b in zip(DEQUANT, first, got):
            np.testing.assert_array_equal(a, b, err_msg=f"{f.name} {isa}")


# ---------------------------------------------------------------------- products
def _check_product(fmt, m, x, y, tol):
    w = m.dequantize().astype(np.float64)
    ref = w @ x.astype(np.float64)
    bound = tol * (np.abs(w) @ np.abs(x.astype(np.float64))) + 1e-30
    err = np.abs(y.astype(np.float64) - ref)
    worst = np.unravel_index(np.argmax(err / bound), err.shape)
    assert (err <= bound).all(), (f"{fmt.name}: |y - ref| = {err[worst]:.3g} > bound {bound[worst]:.3g} "
                                  f"at {worst}")


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("act", ["ggml", "f32"])
@pytest.mark.parametrize("batch", [None, 1, 3])
def test_matmul_within_tolerance(fmt, act, batch, isa):
    rows, cols = 67, cols_for(fmt)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=fmt.id + 100, moderate=True), fmt.name, (rows, cols))
    rng = np.random.default_rng(11)
    x = rng.standard_normal(cols if batch is None else (cols, batch)).astype(np.float32)
    y = m @ x if act == "ggml" else m.matmul(x, act="f32")
    assert y.shape == ((rows,) if batch is None else (rows, batch)) and y.dtype == np.float32
    tol = fmt.tolerance if act == "ggml" else _formats.F32_TOLERANCE
    _check_product(fmt, m, x, y, tol)


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
def test_matmul_exact_on_exact_activations(fmt, isa):
    """x already on the activation grid (integers, 127 in every block, so d = 1 exactly):
    ggml's product then differs from the float one by float32 rounding only."""
    rows, cols = 8, cols_for(fmt)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=5, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(1).integers(-127, 128, cols).astype(np.float32)
    x[::32] = 127.0
    y, y_f32 = m @ x, m.matmul(x, act="f32")
    w = m.dequantize().astype(np.float64)
    assert (np.abs(y - y_f32) <= 1e-5 * (np.abs(w) @ np.abs(x))).all()   # float32 rounding only


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("act", ["ggml", "f32"])
def test_threads_give_identical_results(fmt, act, monkeypatch):
    """A team of 2 on every format's products and dequantize, whatever their bytes (the
    lowest-bit formats' 256 x 1024 matrices are under the serial thresholds): 1 thread's bits."""
    rows, cols = 256, 4 * 256
    monkeypatch.setattr(qgemv._threads, "PRODUCT_SERIAL_BELOW_BYTES", 0)
    monkeypatch.setattr(qgemv._threads, "SERIAL_BELOW_BYTES", 0)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=9, moderate=True), fmt.name, (rows, cols))
    assert qgemv._threads.resolve(2, m.nbytes, rows, product=True) == 2
    assert qgemv._threads.resolve(2, m.nbytes, rows) == 2
    for batch in (1, 2):
        x = np.random.default_rng(2).standard_normal((cols, batch)).astype(np.float32)
        kw = {} if act == "ggml" else {"act": "f32"}
        one = m.matmul(x, n_threads=1, **kw)
        np.testing.assert_array_equal(one, m.matmul(x, n_threads=2, **kw))
    np.testing.assert_array_equal(m.dequantize(n_threads=1), m.dequantize(n_threads=2))


def test_small_products_run_serially():
    """A product of less than PRODUCT_SERIAL_BELOW_BYTES (weight bytes times the batch's
    columns) takes one thread; a batch of the same weights that reaches it, the team; a
    dequantize from SERIAL_BELOW_BYTES on."""
    threads = qgemv._threads
    small = threads.PRODUCT_SERIAL_BELOW_BYTES // 4
    assert threads.SERIAL_BELOW_BYTES <= small
    assert threads.resolve(2, small, 4096, product=True) == 1
    assert threads.resolve(2, small * 4, 4096, product=True) == 2
    assert threads.resolve(2, small, 4096) == 2


def test_concurrent_python_threads_agree():
    fmt = _formats.lookup("q4_0")
    m = QMatrix(random_blocks("q4_0", 512, 1024, seed=4, moderate=True), "q4_0", (512, 1024))
    x = np.random.default_rng(0).standard_normal(1024).astype(np.float32)
    expected = m @ x
    results = [None] * 8

    def work(i):
        results[i] = [m @ x for _ in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        for y in r:
            np.testing.assert_array_equal(y, expected, err_msg=fmt.name)


def test_matmul_out_and_dtypes():
    m = QMatrix(random_blocks("q8_0", 64, 256, moderate=True), "q8_0", (64, 256))
    x = np.random.default_rng(0).standard_normal(256)
    out = np.empty(64, np.float32)
    assert m.matmul(x, out=out) is out
    np.testing.assert_array_equal(out, m @ x.astype(np.float32))
    np.testing.assert_array_equal(m @ x[::-1].copy(), m @ np.ascontiguousarray(x[::-1]))
    np.testing.assert_array_equal(m @ x.astype(np.float16), m @ x.astype(np.float16).astype(np.float32))


def test_asarray_dequantizes():
    m = QMatrix(random_blocks("q4_0", 4, 64), "q4_0", (4, 64))
    np.testing.assert_array_equal(np.asarray(m), m.dequantize())
    assert np.asarray(m, dtype=np.float64).dtype == np.float64


# ---------------------------------------------------------------------- buffers
def test_buffers_are_not_copied(tmp_path):
    blocks = random_blocks("q4_0", 8, 64)
    raw = blocks.tobytes()
    ref = QMatrix(blocks, "q4_0", (8, 64)).dequantize()
    path = tmp_path / "w.bin"
    path.write_bytes(raw)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        sources = [raw, bytearray(raw), memoryview(raw), mm, np.memmap(path, mode="r"), blocks]
        for src in sources:
            m = QMatrix(src, "q4_0", (8, 64))
            np.testing.assert_array_equal(m.dequantize(), ref, err_msg=type(src).__name__)
            assert not m.data.flags.writeable
        arr = np.frombuffer(raw, np.uint8)
        assert np.shares_memory(QMatrix(arr, "q4_0", (8, 64)).data, arr)
        del m
        mm.close()


def test_properties():
    m = QMatrix(bytes(2 * 144 * 4), "Q4_K", (4, 512))
    assert (m.shape, m.qtype, m.nbytes, m.row_nbytes, m.bits_per_weight) == ((4, 512), "q4_K", 1152, 288, 4.5)
    assert m.data.dtype == np.uint8 and m.data.shape == (1152,)
    assert "q4_K" in repr(m)


def test_empty_shapes():
    m = QMatrix(b"", "q8_0", (0, 64))
    assert m.dequantize().shape == (0, 64)
    assert (m @ np.ones(64, np.float32)).shape == (0,)
    z = QMatrix(b"", "q8_0", (3, 0))
    np.testing.assert_array_equal(z @ np.ones(0, np.float32), np.zeros(3, np.float32))


# ---------------------------------------------------------------------- bad arguments
def _m():
    return QMatrix(random_blocks("q4_0", 4, 64), "q4_0", (4, 64))


@pytest.mark.parametrize("args, error, match", [
    ((b"\0" * 36, "q4_0", (2, 48)), ValueError, "q4_0: cols 48 is not a multiple of the block size 32"),
    ((b"\0" * 35, "q4_0", (2, 32)), ValueError, "needs 36 bytes"),
    ((b"\0" * 36, "q4_9", (2, 32)), ValueError, "unknown qtype"),
    ((b"\0" * 36, 4, (2, 32)), ValueError, "retired"),
    ((b"\0" * 36, "q4_0", (2,)), TypeError, "pair of ints"),
    ((b"\0" * 36, "q4_0", (2, 32.0)), TypeError, "pair of ints"),
    ((b"\0" * 36, "q4_0", (-2, 32)), ValueError, "negative"),
    ((np.zeros((4, 36), np.uint8)[:, :18], "q4_0", (2, 32)), ValueError, "C-contiguous"),
    (([0] * 36, "q4_0", (2, 32)), TypeError, "buffer"),
    ((np.zeros(10, np.uint8)[1:], "f32", (1, 2)), ValueError, "multiple of 4"),
])
def test_constructor_refuses(args, error, match):
    with pytest.raises(error, match=match):
        QMatrix(*args)


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m @ np.ones(63, np.float32), ValueError, "x has 63 values, the matrix has 64 columns"),
    (lambda m: m @ np.ones((32, 2), np.float32), ValueError, r"expected \(64, n\)"),
    (lambda m: m @ np.ones((64, 2, 1), np.float32), ValueError, "1-D"),
    (lambda m: m @ np.ones(64, np.int32), TypeError, "float16, float32 or float64"),
    (lambda m: m @ np.ones(64, np.complex64), TypeError, "float16, float32 or float64"),
    (lambda m: m.matmul(np.ones(64, np.float32), act="q8_1"), ValueError, "act must be"),
    (lambda m: m.matmul(np.ones(64, np.float32), n_threads=0), ValueError, ">= 1"),
    (lambda m: m.matmul(np.ones(64, np.float32), n_threads=1.5), TypeError, "positive int"),
    (lambda m: m.matmul(np.ones(64, np.float32), out=np.empty(4, np.float64)), TypeError, "float32"),
    (lambda m: m.matmul(np.ones(64, np.float32), out=np.empty(5, np.float32)), ValueError, "shape"),
    (lambda m: m.matmul(np.ones(64, np.float32), out=np.empty(8, np.float32)[::2]), ValueError, "C-contiguous"),
    (lambda m: m @ np.full(64, np.nan, np.float32), ValueError, "NaN"),
    (lambda m: m.dequantize(out=np.empty((4, 63), np.float32)), ValueError, "shape"),
    (lambda m: m.dequantize_rows([4]), IndexError, "row id 4"),
    (lambda m: m.dequantize_rows([[0]]), TypeError, "1-D"),
    (lambda m: m.dequantize_rows([0.5]), TypeError, "ints"),
    (lambda m: np.asarray(m, copy=False), ValueError, "copy"),
])
def test_calls_refuse(call, error, match):
    with pytest.raises(error, match=match):
        call(_m())


def test_missing_kernel_raises_only_when_used(monkeypatch):
    """A format the compiled kernels lack (a stale build, or a table row ahead of its kernels)
    makes a QMatrix fine, and NotImplementedError only when it is used: never a crash."""
    from qgemv import qmatrix
    fmt = _formats.lookup("q4_0")
    monkeypatch.setitem(qmatrix._COMPILED_OPS, fmt.id, set())
    m = QMatrix(bytes(fmt.type_size), fmt.name, (1, fmt.block_size))
    with pytest.raises(NotImplementedError, match="q4_0"):
        m.dequantize()
    with pytest.raises(NotImplementedError, match="q4_0"):
        m @ np.ones(32, np.float32)


def test_set_num_threads():
    try:
        qgemv.set_num_threads(1)
        assert qgemv.get_num_threads() == 1
        with pytest.raises(ValueError):
            qgemv.set_num_threads(0)
    finally:
        qgemv.set_num_threads(None)
    assert qgemv.get_num_threads() >= 1


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
def test_streaming_and_tile_paths_give_the_same_bits(fmt, isa, monkeypatch):
    """Large single columns take the one-row-at-a-time loop where the CPU's prefetcher streams
    alone (gemv_prefetch off), small ones, batches and the others the row tiles: every tile
    keeps vec_dot's float operations, so the driver changes the speed, never the bits.  37
    blocks a row and 70 rows: past the chunks of blocks and rows the tiles prepare a column's
    activations for (q1_0's GEMV rows: 32 blocks, 16 rows), with remainders."""
    from qgemv import qmatrix
    rows, cols = 70, 37 * max(fmt.block_size, 64)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=12, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(3).standard_normal(cols).astype(np.float32)
    tiled = m @ x
    np.testing.assert_array_equal((m @ np.stack([x, -x, x], axis=1))[:, [0, 2]], np.stack([tiled] * 2, axis=1))
    monkeypatch.setattr(qmatrix, "STREAMING_BYTES", 0)
    for prefetch in (False, True):
        monkeypatch.setattr(_dispatch, "gemv_prefetch", prefetch)
        np.testing.assert_array_equal(m @ x, tiled)


@pytest.mark.parametrize("fmt", [f for f in DEQUANT if f.name in ("f32", "f16", "q4_0", "q8_0", "q4_K", "iq2_xs", "tq1_0")], ids=ids)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_dequantize_into_an_unaligned_out(fmt, n_threads):
    """The row kernels store without alignment: an out 4 bytes off a 32-byte boundary gets
    the same floats, on one thread or a team."""
    rows, cols = 301, 6 * max(fmt.block_size, 256)   # enough bytes for a thread team
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=5, moderate=True), fmt.name, (rows, cols))
    assert qgemv._threads.resolve(n_threads, m.nbytes, rows) == n_threads
    want = m.dequantize(n_threads=1)
    shifted = np.full(rows * cols + 1, np.nan, np.float32)[1:].reshape(rows, cols)   # 4 bytes off
    assert shifted.ctypes.data % 32
    m.dequantize(out=shifted, n_threads=n_threads)
    np.testing.assert_array_equal(shifted.view(np.uint32), want.view(np.uint32))
