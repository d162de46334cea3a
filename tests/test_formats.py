"""The format table agrees with ggml's, with the C structs and with the compiled kernels."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import qgemv
from qgemv import _dispatch, _formats, _kernels

# ../shared/FORMATS.md (ggml 0.25.3): id -> (name, block size, bytes per block)
GGML_TYPES = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
    6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36),
    10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110), 12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176),
    14: ("q6_K", 256, 210), 15: ("q8_K", 256, 292), 16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74),
    18: ("iq3_xxs", 256, 98), 19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110),
    22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136), 24: ("i8", 1, 1), 25: ("i16", 1, 2),
    26: ("i32", 1, 4), 27: ("i64", 1, 8), 28: ("f64", 1, 8), 29: ("iq1_m", 256, 56),
    30: ("bf16", 1, 2), 34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66), 39: ("mxfp4", 32, 17),
    40: ("nvfp4", 64, 36), 41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}


def test_table_is_ggmls():
    assert {f.id: (f.name, f.block_size, f.type_size) for f in _formats.FORMATS} == GGML_TYPES
    assert set(_formats.RETIRED_IDS).isdisjoint(_formats.BY_ID)
    assert max(_formats.BY_ID) < _formats.N_TYPES == _kernels.N_TYPES


@pytest.mark.parametrize("isa", _dispatch.COMPILED)
def test_kernel_table_matches_format_table(isa):
    """Every compiled variant implements exactly the ops the table lists, with ggml's sizes."""
    info = _kernels.table_info(isa)
    for f in _formats.FORMATS:
        dequant, matmul, activation, nbytes, align, quantize = info[f.id]
        assert nbytes == f.type_size, f.name
        assert (_formats.DEQUANTIZE in f.ops) == dequant, f.name
        assert (_formats.MATMUL in f.ops) == matmul, f.name
        assert (_formats.ACTIVATION in f.ops) == activation, f.name
        assert (_formats.QUANTIZE in f.ops) == quantize, f.name
        assert align in (1, 2, 4, 8) and f.type_size % align == 0, f.name
    for i in _formats.RETIRED_IDS:
        assert info[i] == (False, False, False, 0, 0, False)


def test_every_product_has_an_activation_format():
    for f in qgemv.formats("matmul"):
        assert _formats.ACTIVATION in _formats.BY_NAME[f.act.lower()].ops, f.name


@pytest.mark.parametrize("qtype, name", [("Q4_0", "q4_0"), ("q4_k", "q4_K"), (12, "q4_K"), ("IQ2_XXS", "iq2_xxs")])
def test_lookup_by_name_or_id(qtype, name):
    assert _formats.lookup(qtype).name == name


@pytest.mark.parametrize("qtype, error", [("q4_2", ValueError), (4, ValueError), (99, ValueError),
                                           (-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_lookup_refuses(qtype, error):
    with pytest.raises(error):
        _formats.lookup(qtype)


def test_bits_per_weight():
    assert _formats.lookup("q4_0").bits_per_weight == 4.5
    assert _formats.lookup("q6_K").bits_per_weight == 6.5625


def test_show_config_names_the_variant_and_the_speed_policies(capsys):
    config = qgemv.show_config()
    assert config["isa"] == _dispatch.isa
    assert _dispatch.isa in capsys.readouterr().out
    for policy in _POLICIES:
        assert config[policy].split()[0] == ("on" if getattr(_dispatch, policy) else "off")


@pytest.mark.parametrize("env", ["avx9000", "AVX2x"])
def test_isa_override_refuses_unknown(env):
    with pytest.raises(RuntimeError, match="QGEMV_ISA"):
        _dispatch.choose(env)


def test_isa_override_picks_each_runnable():
    for isa in _dispatch.runnable():
        assert _dispatch.choose(isa.upper()) == isa


# the CPU flags (Linux's names) each x86 variant needs beyond the one before it
_ISA_FLAGS = {"avx2": {"avx2", "fma", "f16c", "bmi2"}, "avxvnni": {"avx_vnni"},
              "avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd", "avx512_vnni"},
              "avx512bf16": {"avx512_bf16"}}
_ISA_NEEDS = {"avx2": (), "avxvnni": ("avx2",), "avx512": ("avx2",), "avx512bf16": ("avx512",)}


@pytest.mark.skipif(not Path("/proc/cpuinfo").is_file(), reason="no /proc/cpuinfo (not Linux)")
def test_cpu_runs_what_the_kernel_reports():
    """cpu_runs (CPUID, XCR0) against the flags Linux reports for this CPU; the avxvnni variant
    (CPUID 7.1 EAX bit 4, read directly) included."""
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if "avx" not in flags:
        pytest.skip("not an x86 CPU with AVX")

    def runs(isa):
        return _ISA_FLAGS[isa] <= flags and all(runs(i) for i in _ISA_NEEDS[isa])
    for isa in _ISA_FLAGS:
        assert bool(_kernels.cpu_runs(isa)) == runs(isa), isa
    if "avxvnni" in _dispatch.COMPILED and runs("avxvnni") and not runs("avx512"):
        assert _dispatch.choose("") == "avxvnni"


# the per-CPU policies: chooser, override variable, and the choice by CPU (the chooser's
# arguments past env)
_POLICIES = {
    "gemv_prefetch": (_dispatch.choose_gemv_prefetch, "QGEMV_GEMV_PREFETCH",
                      [(("AuthenticAMD", True), False), (("AuthenticAMD", False), True),
                       (("GenuineIntel", True), True), (("GenuineIntel", False), True), (("", False), True)]),
    "dequant_stream": (_dispatch.choose_dequant_stream, "QGEMV_DEQUANT_STREAM",
                       [(("AuthenticAMD",), False), (("GenuineIntel",), True), (("",), False)]),
    "widen_f16": (_dispatch.choose_widen_f16, "QGEMV_WIDEN_F16",
                  [(("AuthenticAMD",), False), (("GenuineIntel",), True), (("",), True)]),
    "bf16_pairs": (_dispatch.choose_bf16_pairs, "QGEMV_BF16_PAIRS",
                   [(("AuthenticAMD",), True), (("GenuineIntel",), False), (("",), False)]),
}


def test_bf16_pairs_reach_the_avx512bf16_variant_alone():
    """set_bf16_pairs switches vdpbf16ps's arithmetic in the one variant that has the
    instruction; the others keep their order whatever is asked."""
    was = _dispatch.bf16_pairs
    try:
        for on in (True, False):
            _dispatch.set_bf16_pairs(on)
            for isa in _dispatch.COMPILED:
                assert _kernels.bf16_pairs(isa) is (on and isa == "avx512bf16")
    finally:
        _dispatch.set_bf16_pairs(was)


@pytest.mark.parametrize("policy", _POLICIES)
def test_policy_follows_the_cpu_unless_forced(policy):
    choose, _, by_cpu = _POLICIES[policy]
    for cpu, on in by_cpu:
        assert choose("", *cpu) is on
        assert choose("1", *cpu) is True
        assert choose("0", *cpu) is False


@pytest.mark.parametrize("env", ["2", "on", "yes"])
@pytest.mark.parametrize("policy", _POLICIES)
def test_policy_override_refuses_unknown(policy, env, monkeypatch):
    choose, name, _ = _POLICIES[policy]
    with pytest.raises(RuntimeError, match=name):
        choose(env)
    monkeypatch.setenv(name, env)
    with pytest.raises(RuntimeError, match=name):
        choose()


def test_amx_policy_follows_what_the_os_grants(monkeypatch):
    """AMX tiles run where _kernels.amx_request says the CPU has them and Linux grants them;
    QGEMV_AMX=0 turns them off, =1 where they are not granted is an error, anything else too."""
    for granted in (False, True):
        monkeypatch.setattr(_kernels, "amx_request", lambda granted=granted: granted)
        assert _dispatch.choose_amx("") is granted
        assert _dispatch.choose_amx("0") is False
        if granted:
            assert _dispatch.choose_amx("1") is True
        else:
            with pytest.raises(RuntimeError, match="QGEMV_AMX"):
                _dispatch.choose_amx("1")
            with pytest.raises(RuntimeError, match="AMX"):
                _dispatch.set_amx(True)
        with pytest.raises(RuntimeError, match="QGEMV_AMX"):
            _dispatch.choose_amx("yes")


@pytest.mark.parametrize("offset", [0, 1, 5, 16])
@pytest.mark.parametrize("fmt", ["q4_K", "q8_0", "f32"])
def test_dequantize_streamed_gives_the_plain_stores_bits(fmt, offset, isa, monkeypatch):
    """Outputs of STREAM_STORES_BYTES and more go out through a row per thread and non-temporal
    stores where dequant_stream says so: every row's bits as with plain stores, whatever the
    output's alignment (offset floats past a 64-byte boundary), with rows of 4352 values (no
    multiple of 64 bytes, so each row starts at another offset)."""
    rows, cols = qgemv.qmatrix.STREAM_STORES_BYTES // (4 * 4352) + 3, 4352   # 17 super-blocks a row
    rng = np.random.default_rng(5)
    m = qgemv.QMatrix.quantize(rng.standard_normal((rows, cols)).astype(np.float32), fmt)
    monkeypatch.setattr(_dispatch, "dequant_stream", False)
    plain = m.dequantize(n_threads=2)
    monkeypatch.setattr(_dispatch, "dequant_stream", True)
    buf = np.zeros(rows * cols + 64, np.float32)
    start = (-buf.ctypes.data // 4) % 16 + offset
    out = buf[start:start + rows * cols].reshape(rows, cols)
    for n in (1, 2):
        out[:] = np.nan
        assert m.dequantize(out=out, n_threads=n) is out
        assert np.array_equal(out.view(np.uint32), plain.view(np.uint32))
    assert np.array_equal(m.dequantize(n_threads=2).view(np.uint32), plain.view(np.uint32))


def test_dequantize_scratch_too_small_is_refused():
    m = qgemv.QMatrix.quantize(np.ones((4, 256), np.float32), "q8_0")
    out = np.empty((4, 256), np.float32)
    with pytest.raises(ValueError, match="scratch"):
        _kernels.dequantize(_dispatch.isa, m.format.id, m.data, m.row_nbytes, out, 2, np.empty((1, 256), np.float32))


def test_cpu_vendor_is_cpuids():
    vendor = _kernels.cpu_vendor()
    assert vendor.isprintable() and len(vendor) in (0, 12)
    if vendor:
        assert f"CPU {vendor}" in qgemv.show_config()["gemv_prefetch"]
    assert ("with AVX-512" in qgemv.show_config()["gemv_prefetch"]) is _dispatch.cpu_avx512


@pytest.fixture
def widen_f16_restored():
    before = _dispatch.widen_f16
    yield
    _dispatch.set_widen_f16(before)


@pytest.mark.parametrize("batch", [2, 8, 17, 32])
@pytest.mark.parametrize("cols", [64, 4096 + 64 + 3])
def test_widen_f16_reaches_every_variant_and_never_changes_a_result(batch, cols, isa, widen_f16_restored):
    """The flag is set in every compiled table; an f16 batch gives the same bits with its columns
    widened once or kept as f16 (the same values meet the same fmas), and the same as its
    columns one at a time, on rows of whole lines and on rows with a tail past them."""
    rng = np.random.default_rng(4)
    m = qgemv.QMatrix.quantize(rng.standard_normal((37, cols)).astype(np.float32), "f16")
    x = rng.standard_normal((cols, batch)).astype(np.float32)
    ys = {}
    for on in (True, False):
        _dispatch.set_widen_f16(on)
        assert all(_kernels.widen_f16(v) is on for v in _dispatch.COMPILED)
        ys[on] = m @ x
    assert np.array_equal(ys[True].view(np.uint32), ys[False].view(np.uint32))
    one = np.stack([m @ np.ascontiguousarray(x[:, j]) for j in range(batch)], axis=1)
    assert np.array_equal(ys[True].view(np.uint32), one.view(np.uint32))


@pytest.fixture
def gemv_prefetch_restored():
    before = _dispatch.gemv_prefetch
    yield
    _dispatch.set_gemv_prefetch(before)


@pytest.mark.parametrize("fmt", [f for f in qgemv.formats("matmul") if f.interleave], ids=lambda f: f.name)
@pytest.mark.parametrize("cols", [512, 4096])
def test_gemv_prefetch_reaches_every_variant_and_never_changes_a_result(fmt, cols, isa, gemv_prefetch_restored):
    """The flag is set in every compiled table; a single column over the panels (8 or 16 rows) gives
    the same bits with and without it (a hint to the memory system only), and the same as
    the rows one by one: on short rows, read a panel after another, and on rows of 4096 values,
    two panels at a time (superblocks_x16.h: X16_PAIRS_MIN_VALUES, q8_0_x16.h)."""
    rng = np.random.default_rng(3)
    m = qgemv.QMatrix.quantize(rng.standard_normal((37, cols)).astype(np.float32), fmt.name,
                               imatrix=np.ones(cols, np.float32) if fmt.needs_imatrix else None)
    x = rng.standard_normal(cols).astype(np.float32)
    ys = {}
    for on in (True, False):
        _dispatch.set_gemv_prefetch(on)
        assert all(_kernels.prefetch_one_column(isa) is on for isa in _dispatch.COMPILED)
        ys[on] = m @ x
    assert np.array_equal(ys[True], ys[False])
    rb = fmt.row_nbytes(cols)
    rows = [qgemv.QMatrix(bytes(m.data[r * rb:(r + 1) * rb]), fmt.name, (1, cols)) @ x for r in range(37)]
    assert np.array_equal(ys[True], np.concatenate(rows))
