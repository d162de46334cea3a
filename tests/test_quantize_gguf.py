"""qgemv quantize / quantize_gguf on tiny llama GGUFs: types per llama.cpp's rules, files
readable by qgemv and gguf-py, metadata intact, the model still runs, atomic writes, imatrix."""
from __future__ import annotations

import os
import struct

import numpy as np
import pytest

import qgemv
from qgemv import GGUFWriter, QMatrix, load_gguf
from qgemv.cli import main
from qgemv.llama import Llama
from qgemv.quantize_gguf import load_imatrix, plan_types, quantize_gguf
from tiny_llama import TinyConfig, read_weights, reference_forward, write_tiny_llama

gguf = pytest.importorskip("gguf")

# dim 64: every 256-block type must fall back; dim 256: none has to
NARROW = TinyConfig(dim=64, n_layers=8, n_heads=4, n_kv_heads=2, ffn_dim=128)
WIDE = TinyConfig(dim=256, n_layers=8, n_heads=4, n_kv_heads=2, ffn_dim=256)
# 16 layers: llama.cpp's use_more_bits(i, 16) holds for i in 0, 1 (first eighth), 14, 15 (last
# eighth) and every third layer from n/8 = 2 on: (i - 2) % 3 == 2 -> 4, 7, 10, 13
SHALLOW = TinyConfig(dim=256, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=256)
DEEP = TinyConfig(dim=256, n_layers=16, n_heads=4, n_kv_heads=2, ffn_dim=256)
MORE_BITS_16 = {0, 1, 4, 7, 10, 13, 14, 15}
MORE_BITS_8 = {0, 3, 6, 7}  # n/8 = 1: i < 1, i >= 7, (i - 1) % 3 == 2

MATRICES = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")
QUANTIZABLE = {f.name for f in qgemv.formats("quantize")}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    paths = {}
    for key, cfg in (("narrow", NARROW), ("wide", WIDE), ("deep", DEEP), ("shallow", SHALLOW)):
        paths[key] = str(d / f"{key}.gguf")
        write_tiny_llama(paths[key], cfg)
    paths["tied"] = str(d / "tied.gguf")
    write_tiny_llama(paths["tied"], TinyConfig(dim=256, n_layers=8, ffn_dim=256, tied=True))
    return paths


def written_types(path) -> dict[str, str]:
    with load_gguf(path) as f:
        return {name: t.qtype for name, t in f.tensors.items()}


def layer_types(types: dict, kind: str, n_layers: int) -> list[str]:
    return [types[f"blk.{i}.{kind}.weight"] for i in range(n_layers)]


# ---------------------------------------------------------------------------------------------
# the types llama.cpp would choose


@pytest.mark.parametrize("ftype, base", [("q4_0", "q4_0"), ("q5_1", "q5_1"), ("q8_0", "q8_0"),
                                         ("q6_K", "q6_K")])
def test_plain_types_wide(models, ftype, base, tmp_path):
    """Every 2-D weight in the type, output.weight q6_K (q8_0 stays q8_0), norms f32."""
    out = str(tmp_path / "out.gguf")
    plan = quantize_gguf(models["wide"], out, ftype)
    types = written_types(out)
    assert types == plan
    for name, qtype in types.items():
        if name.endswith("norm.weight"):
            assert qtype == "f32", name
        elif name == "output.weight":
            assert qtype == ("q8_0" if ftype == "q8_0" else "q6_K")
        else:
            assert qtype == base, name


@pytest.mark.parametrize("ftype, fallback", [("q2_K", "q4_0"), ("q3_K_S", "q4_0"),
                                             ("q4_K_S", "q5_0"), ("q5_K_S", "q5_1"),
                                             ("q6_K", "q8_0")])
def test_narrow_K_types_fall_back(models, ftype, fallback, tmp_path):
    """64 columns are no multiple of 256: llama.cpp's tensor_type_fallback table applies."""
    out = str(tmp_path / "out.gguf")
    quantize_gguf(models["narrow"], out, ftype, pure=True)
    types = written_types(out)
    for name, qtype in types.items():
        assert qtype == ("f32" if name.endswith("norm.weight") else fallback), name


def test_q4_K_M_rules(models):
    """attn_v and ffn_down get q6_K in the use_more_bits layers; output.weight q6_K."""
    with load_gguf(models["deep"]) as f:
        plan = plan_types(f, "q4_K_M")
    n = DEEP.n_layers
    want = ["q6_K" if i in MORE_BITS_16 else "q4_K" for i in range(n)]
    assert layer_types(plan, "attn_v", n) == want
    assert layer_types(plan, "ffn_down", n) == want
    for kind in ("attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"):
        assert layer_types(plan, kind, n) == ["q4_K"] * n, kind
    assert plan["output.weight"] == "q6_K"
    assert plan["token_embd.weight"] == "q4_K"
    assert plan["blk.0.attn_norm.weight"] == "f32"


def test_q5_K_M_rules(models):
    with load_gguf(models["deep"]) as f:
        plan = plan_types(f, "q5_K_M")
    n = DEEP.n_layers
    want = ["q6_K" if i in MORE_BITS_16 else "q5_K" for i in range(n)]
    assert layer_types(plan, "attn_v", n) == want
    assert layer_types(plan, "ffn_down", n) == want
    assert layer_types(plan, "attn_q", n) == ["q5_K"] * n
    assert plan["output.weight"] == "q6_K"


def test_q4_K_alias_and_tied_embeddings(models):
    """q4_K means q4_K_M (llama-quantize's alias); tied token_embd is treated as the output."""
    with load_gguf(models["tied"]) as f:
        assert plan_types(f, "q4_K") == plan_types(f, "q4_K_M")
        plan = plan_types(f, "q4_K_M")
    assert "output.weight" not in plan
    assert plan["token_embd.weight"] == "q6_K"


def test_q4_K_M_written_narrow(models, tmp_path):
    """The mix on 64 columns: q4_K -> q5_0 and the q6_K layers -> q8_0, written as planned."""
    out = str(tmp_path / "out.gguf")
    plan = quantize_gguf(models["narrow"], out, "q4_K_M")
    types = written_types(out)
    assert types == plan
    n = NARROW.n_layers
    want = ["q8_0" if i in MORE_BITS_8 else "q5_0" for i in range(n)]
    assert layer_types(types, "attn_v", n) == want
    assert layer_types(types, "attn_q", n) == ["q5_0"] * n
    assert layer_types(types, "ffn_down", n) == want  # 128 columns: q6_K -> q8_0 there too
    assert types["output.weight"] == "q8_0"  # llama.cpp: output width % 256 != 0 -> q8_0


# ---------------------------------------------------------------------------------------------
# the file


@pytest.mark.parametrize("ftype", ["q8_0", "q4_K_M", "q4_1"])
def test_output_readable_and_metadata_intact(models, ftype, tmp_path):
    src, out = models["wide"], str(tmp_path / "out.gguf")
    plan = quantize_gguf(src, out, ftype)
    r_in, r_out = gguf.GGUFReader(src), gguf.GGUFReader(out)
    with load_gguf(src) as fi, load_gguf(out) as fo:
        assert set(fo.metadata) == set(fi.metadata) | {"general.file_type",
                                                       "general.quantization_version"}
        for key in fi.metadata:
            if key == "general.file_type":
                continue
            assert fo.fields[key].type == fi.fields[key].type, key
            assert fo.fields[key].element_type == fi.fields[key].element_type, key
            a, b = fi.metadata[key], fo.metadata[key]
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, key
        ftype_id = {"q8_0": 7, "q4_K_M": 15, "q4_1": 3}[ftype]
        assert fo.metadata["general.file_type"] == ftype_id
        assert fo.fields["general.file_type"].type.name == "UINT32"
        assert fo.metadata["general.quantization_version"] == 2
        # gguf-py reads the same tensors, types and values as qgemv
        by_name = {t.name: t for t in r_out.tensors}
        assert set(by_name) == {t.name for t in r_in.tensors}
        for name, qtype in plan.items():
            t = by_name[name]
            assert t.tensor_type.name.lower() == qtype.lower()
            ref = gguf.quants.dequantize(t.data, t.tensor_type).reshape(fo.tensors[name].shape)
            np.testing.assert_array_equal(fo.array(name), ref)
            # and the values are the source's, quantized by QMatrix.quantize
            if qtype != "f32":
                again = QMatrix.quantize(np.asarray(fi.array(name), np.float32), qtype)
                assert bytes(again.data) == bytes(fo.tensor_data(name)), name
    assert gguf.GGUFReader(out).fields["general.file_type"].parts[-1][0] == ftype_id


def relative_error(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(a))


def test_model_still_generates(models, tmp_path):
    """The quantized file runs: qgemv's model on it matches the float64 textbook forward pass on
    its (gguf-py dequantized) weights, and its logits stay near the f32 model's.

    Random weights make the tiny model sensitive: q8_0's 0.5% weight error becomes ~3% in the
    logits of this 2-layer model, in the float64 reference as much as in qgemv.
    """
    tokens = [1, 5, 9, 14, 20]
    f32 = Llama.from_gguf(models["shallow"], act="f32", kv_dtype="f32").forward(tokens)
    errors = {}
    for ftype in ("q8_0", "q4_K_M"):
        out = str(tmp_path / f"{ftype}.gguf")
        quantize_gguf(models["shallow"], out, ftype)
        model = Llama.from_gguf(out, act="f32", kv_dtype="f32")
        got = model.forward(tokens)
        ref = reference_forward(read_weights(out), SHALLOW, tokens)
        assert relative_error(ref, got) < 1e-4, ftype
        errors[ftype] = relative_error(f32, got)
        greedy = list(model.generate(tokens, 4))
        assert len(greedy) == 4 and all(0 <= t < SHALLOW.n_vocab for t in greedy)
    assert errors["q8_0"] < 0.06
    assert errors["q8_0"] < errors["q4_K_M"] / 4
    assert errors["q4_K_M"] < 0.6


# ---------------------------------------------------------------------------------------------
# atomic writes


def test_interrupted_run_leaves_nothing(models, tmp_path):
    out = tmp_path / "out.gguf"

    def interrupt(i, n, *rest):
        if i == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        quantize_gguf(models["narrow"], str(out), "q4_0", progress=interrupt)
    assert os.listdir(tmp_path) == []


def test_failed_write_leaves_old_output(models, tmp_path, monkeypatch):
    out = tmp_path / "out.gguf"
    out.write_bytes(b"previous")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        quantize_gguf(models["narrow"], str(out), "q8_0")
    assert os.listdir(tmp_path) == ["out.gguf"] and out.read_bytes() == b"previous"


def test_tensors_stream_to_disk_one_piece_at_a_time(tmp_path, monkeypatch):
    """Peak memory is a piece of one tensor, not the model: quantized bytes go straight to the
    file as they are made (tracemalloc sees numpy's allocations)."""
    import tracemalloc
    from qgemv import quantize_gguf as qg
    src = str(tmp_path / "big.gguf")
    write_tiny_llama(src, TinyConfig(dim=512, n_layers=4, n_heads=4, n_kv_heads=2, ffn_dim=1024))
    monkeypatch.setattr(qg, "CHUNK_FLOATS", 64 * 512)   # 64 rows of float32 input per piece
    tracemalloc.start()
    try:
        quantize_gguf(src, str(tmp_path / "out.gguf"), "q8_0")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    with load_gguf(str(tmp_path / "out.gguf")) as f:
        written = sum(t.nbytes for t in f.tensors.values())
        largest = max(t.nbytes for t in f.tensors.values())
    assert written > 3 * 2**20 and peak < written / 3 and peak < 2 * largest


def test_writer_checks_what_a_producer_gives(tmp_path):
    for pieces, match in (([b"\0" * 30], "takes 34 bytes, its producer gave 30"),
                          ([b"\0" * 34, b"\0"], "its producer gave more")):
        w = GGUFWriter(tmp_path / "t.gguf")
        w.add_tensor("t", lambda pieces=pieces: iter(pieces), qtype="q8_0", shape=(1, 32))
        with pytest.raises(ValueError, match=match):
            w.write()
        assert os.listdir(tmp_path) == []
    w = GGUFWriter(tmp_path / "t.gguf")
    q = QMatrix.quantize(np.ones((2, 32), np.float32), "q8_0")
    w.add_tensor("t", lambda: (q.data[:34], q.data[34:]), qtype="q8_0", shape=(2, 32))
    w.write()
    with load_gguf(tmp_path / "t.gguf") as f:
        np.testing.assert_array_equal(f.qmatrix("t").dequantize(), q.dequantize())


# ---------------------------------------------------------------------------------------------
# refusals


def test_refusals(models, tmp_path):
    out = str(tmp_path / "out.gguf")
    with pytest.raises(ValueError, match="unknown file type 'q8_K'"):
        quantize_gguf(models["wide"], out, "q8_K")
    for ftype in ("iq2_xxs", "iq2_xs", "iq1_s"):
        with pytest.raises(ValueError, match="requires an importance matrix"):
            quantize_gguf(models["wide"], out, ftype)
    with pytest.raises(ValueError, match="same file"):
        quantize_gguf(models["wide"], models["wide"], "q8_0")
    missing = [ft for ft in ("iq4_xs", "iq3_s", "iq3_xs", "nvfp4", "q1_0", "q2_0")
               if {"iq3_xs": "iq3_s"}.get(ft, ft) not in QUANTIZABLE]
    for ftype in missing[:1]:
        with pytest.raises(ValueError, match="cannot quantize"):
            quantize_gguf(models["wide"], out, ftype)
    assert os.listdir(tmp_path) == []


def test_requantize_needs_permission(tmp_path):
    src, out = str(tmp_path / "q8.gguf"), str(tmp_path / "out.gguf")
    write_tiny_llama(src, TinyConfig(qtypes={"weight": "q8_0"}))
    with pytest.raises(ValueError, match="already quantized"):
        quantize_gguf(src, out, "q4_0")
    plan = quantize_gguf(src, out, "q4_0", allow_requantize=True)
    assert plan["blk.0.attn_q.weight"] == "q4_0"
    assert plan["output.weight"] == "q8_0"  # already the planned type: copied as is


def test_cli(models, tmp_path, capsys):
    out = str(tmp_path / "out.gguf")
    assert main(["quantize", models["narrow"], out, "--type", "q8_0", "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert f"[{len(written_types(out))}/{len(written_types(out))}]" in err and "MiB" in err
    assert written_types(out)["blk.0.attn_q.weight"] == "q8_0"
    assert main(["quantize", models["wide"], str(tmp_path / "x.gguf"), "--type", "iq2_xxs"]) == 1
    assert "importance matrix" in capsys.readouterr().err
    assert main(["quantize", models["wide"], str(tmp_path / "x.gguf"), "--type", "q9_X"]) == 1
    assert "unknown file type" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.gguf")


# ---------------------------------------------------------------------------------------------
# importance matrices


def imatrix_values(path, seed=1) -> dict[str, tuple[np.ndarray, int]]:
    """Per-weight (sums of squared activations, token count), as llama-imatrix collects them."""
    rng = np.random.default_rng(seed)
    out = {}
    with load_gguf(path) as f:
        for name, t in f.tensors.items():
            if name.startswith("blk.") and len(t.shape) == 2:
                count = 512
                sums = (rng.random(t.dims[0]) ** 4 * 3 + 0.01) * count
                out[name] = sums.astype(np.float32), count
    return out


def write_imatrix_gguf(path, values) -> None:
    """llama-imatrix's GGUF layout: <w>.in_sum2 f32 ne=[ne0, 1], <w>.counts f32 ne=[1, 1]."""
    w = GGUFWriter(path)
    w.add_metadata("general.type", "imatrix")
    w.add_metadata("imatrix.datasets", ["calibration.txt"])
    w.add_metadata("imatrix.chunk_count", 10, type="uint32")
    w.add_metadata("imatrix.chunk_size", 512, type="uint32")
    for name, (sums, count) in values.items():
        w.add_tensor(name + ".in_sum2", sums.reshape(1, -1))
        w.add_tensor(name + ".counts", np.array([[count]], np.float32))
    w.write()


def write_imatrix_legacy(path, values) -> None:
    """The legacy .dat: n_entries; per entry name_len, name, ncall, nval, sums; chunks, dataset."""
    parts = [struct.pack("<i", len(values))]
    for name, (sums, count) in values.items():
        raw = name.encode()
        parts += [struct.pack("<i", len(raw)), raw, struct.pack("<ii", count, sums.size),
                  sums.astype("<f4").tobytes()]
    parts += [struct.pack("<i", 10), struct.pack("<i", 15), b"calibration.txt"]
    with open(path, "wb") as fh:
        fh.write(b"".join(parts))


def test_imatrix_round_trip(models, tmp_path):
    src = models["narrow"]
    values = imatrix_values(src)
    im_gguf, im_dat = str(tmp_path / "imatrix.gguf"), str(tmp_path / "imatrix.dat")
    write_imatrix_gguf(im_gguf, values)
    write_imatrix_legacy(im_dat, values)
    for path in (im_gguf, im_dat):
        im = load_imatrix(path)
        assert set(im.values) == set(values) and im.chunk_count == 10
        assert im.datasets == ["calibration.txt"]
        for name, (sums, count) in values.items():
            np.testing.assert_array_equal(im.values[name], sums / np.float32(count))

    out_g, out_d, out_plain = (str(tmp_path / n) for n in ("g.gguf", "d.gguf", "plain.gguf"))
    plan = quantize_gguf(src, out_g, "q4_0", imatrix=im_gguf)
    assert quantize_gguf(src, out_d, "q4_0", imatrix=im_dat) == plan
    quantize_gguf(src, out_plain, "q4_0")
    # llama.cpp's guard with an imatrix: the first n_layer/8 ffn_down layers in q4_1
    assert plan["blk.0.ffn_down.weight"] == "q4_1" and plan["blk.1.ffn_down.weight"] == "q4_0"
    changed = 0
    with load_gguf(src) as fs, load_gguf(out_g) as fg, load_gguf(out_d) as fd, \
            load_gguf(out_plain) as fp:
        assert fg.metadata["quantize.imatrix.file"] == im_gguf
        assert fg.metadata["quantize.imatrix.dataset"] == "calibration.txt"
        assert fg.metadata["quantize.imatrix.entries_count"] == len(values)
        assert fg.metadata["quantize.imatrix.chunks_count"] == 10
        for name, (sums, count) in values.items():
            want = QMatrix.quantize(np.asarray(fs.array(name), np.float32), plan[name],
                                    imatrix=sums / np.float32(count))
            assert bytes(fg.tensor_data(name)) == bytes(want.data), name
            assert bytes(fd.tensor_data(name)) == bytes(want.data), name
            changed += bytes(fp.tensor_data(name)) != bytes(want.data)
    assert changed > len(values) // 2  # the importances were used


def test_imatrix_size_mismatch(models, tmp_path):
    values = imatrix_values(models["narrow"])
    name = "blk.0.attn_q.weight"
    values[name] = (values[name][0][:32], values[name][1])
    path = str(tmp_path / "bad.gguf")
    write_imatrix_gguf(path, values)
    message = f"imatrix size 32 is different from tensor size 64 for {name}"
    with pytest.raises(ValueError, match=message):
        quantize_gguf(models["narrow"], str(tmp_path / "out.gguf"), "q4_0", imatrix=path)
    assert sorted(os.listdir(tmp_path)) == ["bad.gguf"]
