"""A small reference llama model on QMatrix weights: readable numpy, llama.cpp's arithmetic.

Design:

1. The model is a *user* of qgemv: every projection is a ``QMatrix`` over the GGUF mmap
   (matrices stored back to back with one format and width, such as q/v or gate/up, one
   QMatrix over their joint bytes); embeddings use ``dequantize_rows``; nothing dequantizes a
   whole matrix.  Products are ``QMatrix.matmul`` with the format's own activations: x
   quantized to its activation type, then ggml's vec_dot arithmetic, as llama.cpp does (for
   the IQ grid formats that of its tiled kernels, which llama.cpp runs on prompts).
2. Hidden states are float32 ``(n_tokens, dim)``; a prompt is one batched pass (each weight
   row is read once for all prompt tokens), decoding is one token per pass.
3. Every step follows llama.cpp's CPU path (ggml's AVX2 build, f16 KV cache, no flash
   attention) to the bit: RMS norm in its order, RoPE from libm's cosf/sinf with its fused
   multiply-adds, the query rounded to f16 against the f16 cache, and attention and SwiGLU in
   C (src/llama_ops.h: ggml's vector e^x, its orders of additions; AVX2 code where the CPU has
   it, the same bits; attention's heads on the model's threads).  Greedy tokens are then llama.cpp's
   (tests/test_llama_cpp.py); only its tied q8_0 output GEMM sums in another order (~1e-5).
   ``Llama(..., act="f32", kv_dtype="f32")`` turns the roundings off: the forward pass is
   then float32 throughout, which the tests compare against a float64 reference.
4. Architectures: ``llama`` and ``mistral`` (rotary embedding on adjacent pairs, the layout
   llama.cpp's converter permutes Q and K into), ``qwen2`` (q/k/v biases, rotary embedding on
   the two halves of each head: "NEOX" style).  Everything comes from the GGUF metadata.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .gguf import GGUFFile, load_gguf
from . import _dispatch, _kernels, _threads
from .qmatrix import QMatrix
from .tokenizer import StreamDecoder, Tokenizer

__all__ = ["Llama", "LlamaConfig", "Sampler"]

ARCHITECTURES = {"llama": "norm", "mistral": "norm", "qwen2": "neox"}   # arch -> rope style


@dataclass(frozen=True)
class LlamaConfig:
    """Hyper-parameters, read from ``<arch>.*`` GGUF metadata."""

    arch: str
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_dim: int
    n_vocab: int
    rms_eps: float
    rope_base: float
    rope_dims: int
    rope_style: str
    context_length: int

    @classmethod
    def from_metadata(cls, meta, n_vocab: int) -> LlamaConfig:
        arch = str(meta["general.architecture"])
        if arch not in ARCHITECTURES:
            raise NotImplementedError(f"general.architecture {arch!r} is not a llama-style model "
                                      f"qgemv runs (supported: {', '.join(ARCHITECTURES)})")

        def get(key, default=None):
            value = meta.get(f"{arch}.{key}", default)
            if value is None:
                raise ValueError(f"GGUF metadata lacks {arch}.{key}")
            return value

        dim, n_heads = int(get("embedding_length")), int(get("attention.head_count"))
        head_dim = int(get("attention.key_length", dim // n_heads))
        return cls(
            arch=arch, dim=dim, n_layers=int(get("block_count")), n_heads=n_heads,
            n_kv_heads=int(get("attention.head_count_kv", n_heads)), head_dim=head_dim,
            ffn_dim=int(get("feed_forward_length")), n_vocab=n_vocab,
            rms_eps=float(get("attention.layer_norm_rms_epsilon", 1e-5)),
            rope_base=float(get("rope.freq_base", 10000.0)),
            rope_dims=int(get("rope.dimension_count", head_dim)),
            rope_style=ARCHITECTURES[arch], context_length=int(get("context_length", 4096)),
        )


class _Projections:
    """Several projections of one input (q, k, v; gate, up), computed with as few products as
    the file allows: matrices stored back to back in the mmap with one format and width are
    one ``QMatrix`` over the bytes they already occupy (zero copy), so the input is quantized
    once and one kernel call covers them.  ``__call__`` returns the outputs in ``names`` order."""

    def __init__(self, f: GGUFFile, names: Sequence[str]):
        infos = sorted((f.tensors[n] for n in names), key=lambda t: t.offset)
        runs = [[infos[0]]]
        for t in infos[1:]:
            if f.stackable(runs[-1][-1].name, t.name):
                runs[-1].append(t)
            else:
                runs.append([t])
        self.products = []              # (QMatrix, [(name, first row, end row)])
        for run in runs:
            m = f.qmatrix(*(t.name for t in run))   # one zero-copy matrix: each one's rows in turn
            rows = np.cumsum([0] + [t.shape[0] for t in run])
            self.products.append((m, [(t.name, int(a), int(b)) for t, a, b in zip(run, rows, rows[1:])]))
        self.names = list(names)

    def __call__(self, x: np.ndarray, n_threads: int | None, act: str | None) -> list[np.ndarray]:
        out = {}
        for m, parts in self.products:
            y = _linear(m, x, n_threads, act)
            for name, a, b in parts:
                out[name] = y[:, a:b]
        return [out[name] for name in self.names]


class _Layer:
    """One transformer block's weights: QMatrix projections and float32 norms/biases."""

    def __init__(self, f: GGUFFile, i: int):
        p = f"blk.{i}."
        self.attn_norm = f.array(p + "attn_norm.weight")
        self.qkv = _Projections(f, [p + f"attn_{n}.weight" for n in "qkv"])
        self.wo = f.qmatrix(p + "attn_output.weight")
        self.bq, self.bk, self.bv = (f.array(p + f"attn_{n}.bias") if p + f"attn_{n}.bias" in f.tensors
                                     else None for n in "qkv")
        self.ffn_norm = f.array(p + "ffn_norm.weight")
        self.gate_up = _Projections(f, [p + "ffn_gate.weight", p + "ffn_up.weight"])
        self.w_down = f.qmatrix(p + "ffn_down.weight")


def _linear(w: QMatrix, x: np.ndarray, n_threads: int | None, act: str | None,
            bias: np.ndarray | None = None) -> np.ndarray:
    """x @ W.T for x (n, in) -> (n, out), by ``QMatrix.matmul``.  act None: the format's own
    activations, ggml's arithmetic to the bit (x quantized to its vec_dot type, then ggml's
    vec_dot sums per row and column, which every tile kernel keeps); act "f32": float32
    activations."""
    if x.shape[0] == 1:
        y = w.matmul(x[0], act=act, n_threads=n_threads)[None]
    else:
        y = np.ascontiguousarray(w.matmul(x.T, act=act, n_threads=n_threads).T)
    return y + bias if bias is not None else y


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x * (1 / sqrt(mean(x^2) + eps)) * weight, per row, in ggml's order (the squares summed
    in float64, the scale in float32; src/llama_ops.h)."""
    out = np.empty(x.shape, np.float32)
    _kernels.rms_norm_f32(np.ascontiguousarray(x, dtype=np.float32), weight, eps, out)
    return out


def _swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """silu(gate) * up, silu(x) = x / (1 + e^-x), with ggml's vector e^x (src/llama_ops.h)."""
    out = np.empty(gate.shape, np.float32)
    _kernels.swiglu_f32(_dispatch.isa, gate, up, out)
    return out


class Llama:
    """A llama-family transformer over the weights of a GGUF file.

    Examples
    --------
    >>> model = Llama.from_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")      # doctest: +SKIP
    >>> ids = model.tokenizer.encode("The capital of France is")          # doctest: +SKIP
    >>> print(model.tokenizer.decode(list(model.generate(ids, 8))))       # doctest: +SKIP
     Paris. ...
    """

    def __init__(self, f: GGUFFile, n_threads: int | None = None, act: str | None = None,
                 kv_dtype: str = "f16"):
        if kv_dtype not in ("f16", "f32"):
            raise ValueError(f"kv_dtype must be 'f16' (llama.cpp's) or 'f32', not {kv_dtype!r}")
        self.file = f
        self.n_threads = n_threads
        self.act = act
        self._kv_f16 = kv_dtype == "f16"
        # a file without a vocabulary still runs forward passes on token ids
        self.tokenizer = (Tokenizer.from_metadata(f.metadata) if "tokenizer.ggml.model" in f.metadata
                          else None)
        self.tok_embd = f.qmatrix("token_embd.weight")
        n_vocab = self.tok_embd.shape[0]
        self.config = c = LlamaConfig.from_metadata(f.metadata, n_vocab)
        self.layers = [_Layer(f, i) for i in range(c.n_layers)]
        self.output_norm = f.array("output_norm.weight")
        # tied embeddings: the output projection is the embedding matrix itself
        self.output = f.qmatrix("output.weight") if "output.weight" in f.tensors else self.tok_embd
        freq_factors = f.array("rope_freqs.weight") if "rope_freqs.weight" in f.tensors else None
        self._inv_freq = self._rope_inv_freq(c, freq_factors)
        self._scale = np.float32(1) / np.sqrt(np.float32(c.head_dim))   # of the attention scores
        self._cache_k: np.ndarray | None = None
        self._cache_v: np.ndarray | None = None
        self._rotations: np.ndarray | None = None
        self.n_past = 0

    @classmethod
    def from_gguf(cls, path, n_threads: int | None = None, **options) -> Llama:
        """Open a GGUF file (mmap, zero-copy) and build the model from its metadata;
        ``options`` are those of the constructor (act, kv_dtype)."""
        return cls(load_gguf(path), n_threads=n_threads, **options)

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget every position: the next forward starts a new sequence."""
        self.n_past = 0

    def _ensure_cache(self, n_total: int) -> None:
        c = self.config
        if n_total > c.context_length:
            raise ValueError(f"sequence of {n_total} tokens exceeds the context length {c.context_length}")
        cap = 0 if self._cache_k is None else self._cache_k.shape[2]
        if n_total <= cap:
            return
        new_cap = min(c.context_length, max(256, 2 * cap, n_total))
        shape = (c.n_layers, c.n_kv_heads, new_cap, c.head_dim)
        k, v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        if cap:
            k[:, :, :cap], v[:, :, :cap] = self._cache_k, self._cache_v
        self._cache_k, self._cache_v = k, v
        self._rotations = self._rope_tables(np.arange(new_cap))   # every position the cache holds

    # ------------------------------------------------------------------ maths
    @staticmethod
    def _rope_inv_freq(c: LlamaConfig, freq_factors) -> tuple[np.float32, np.ndarray]:
        """The ratio base^(-2 / rope_dims) between successive theta_i, in float32, and the
        file's per-frequency divisors (ones if it has none)."""
        step = np.float32(c.rope_base) ** np.float32(-2.0 / c.rope_dims)
        ff = np.ones(c.rope_dims // 2, np.float32) if freq_factors is None else freq_factors.astype(np.float32)
        return step, ff

    def _rope_tables(self, positions: np.ndarray) -> np.ndarray:
        """cos + i sin of pos * theta_i, complex64 (n, 1, rope_dims/2), as ggml_rope_cache_init
        computes them: theta = pos, then theta *= step in float32, per i; the C
        library's cosf and sinf."""
        step, ff = self._inv_freq
        theta = positions.astype(np.float32)
        angle = np.empty((positions.size, ff.size), np.float32)
        for i in range(ff.size):
            angle[:, i] = theta / ff[i]
            theta = theta * step
        table = np.empty(angle.shape, np.complex64)
        cos_sin = table.view(np.float32).reshape(-1, 2)
        cos, sin = np.empty(angle.size, np.float32), np.empty(angle.size, np.float32)
        _kernels.cos_sin_f32(angle.reshape(-1), cos, sin)
        cos_sin[:, 0], cos_sin[:, 1] = cos, sin
        return table[:, None, :]

    def _rope(self, x: np.ndarray, rot: np.ndarray) -> np.ndarray:
        """Rotate the first rope_dims of each head of x (n, heads, head_dim) by pos * theta_i:
        pair (a, b) becomes (a cos - b sin, a sin + b cos), a complex product (numpy's complex64
        product rounds as ggml's rope does here: one fused multiply-add per component)."""
        r = self.config.rope_dims
        out = np.array(x, dtype=np.float32, order="C")
        if self.config.rope_style == "norm":     # pairs (2i, 2i+1): complex numbers in place
            z = out[..., :r].view(np.complex64)
            z *= rot
        else:                                     # neox: pairs (i, i + r/2)
            z = np.empty(out.shape[:-1] + (r // 2,), np.complex64)
            z.real, z.imag = out[..., : r // 2], out[..., r // 2: r]
            z *= rot
            out[..., : r // 2], out[..., r // 2: r] = z.real, z.imag
        return out

    def _attention(self, li: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, start: int) -> np.ndarray:
        """Causal grouped-query attention of n new positions over the cache; (n, heads * head_dim).
        In C (src/llama_ops.h) in ggml's order of operations, its decoding order for one
        position, its GEMM order for several: K and V stored in the cache rounded to f16 (as
        llama.cpp's f16 cache), the query rounded to f16 for q . k, the scores scaled, softmax
        with ggml's e^x, the probabilities rounded to f16 against V.  The (query, head) pairs
        are shared among the model's threads."""
        c = self.config
        out = np.empty((q.shape[0], c.n_heads * c.head_dim), np.float32)
        _kernels.attention(_dispatch.isa, q, k, v, self._cache_k[li], self._cache_v[li], start, self._scale,
                           q.shape[0] > 1, self._kv_f16, out, _threads.resolve(self.n_threads, None, None))
        return out

    # ------------------------------------------------------------------ forward
    def forward(self, tokens: Sequence[int], pos: int | None = None, last_only: bool = False) -> np.ndarray:
        """Logits (n, vocab) float32 for ``tokens`` at positions pos, pos+1, ...; appends them
        to the KV cache.  ``pos`` defaults to the number of positions already seen (and may
        only rewind, never skip).  ``last_only`` returns just the last row, (1, vocab)."""
        c = self.config
        tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
        n = tokens.size
        if n == 0:
            raise ValueError("forward needs at least one token")
        if ((tokens < 0) | (tokens >= c.n_vocab)).any():
            raise ValueError(f"token ids must be in [0, {c.n_vocab})")
        start = self.n_past if pos is None else int(pos)
        if not 0 <= start <= self.n_past:
            raise ValueError(f"pos {start} is past the {self.n_past} positions in the cache")
        self._ensure_cache(start + n)
        t, act = self.n_threads, self.act
        rope = self._rotations[start:start + n]
        x = self.tok_embd.dequantize_rows(tokens)
        for li, L in enumerate(self.layers):
            h = _rms_norm(x, L.attn_norm, c.rms_eps)
            q, k, v = L.qkv(h, t, act)
            if L.bq is not None:
                q, k, v = q + L.bq, k + L.bk, v + L.bv
            q = self._rope(q.reshape(n, c.n_heads, c.head_dim), rope)
            k = self._rope(k.reshape(n, c.n_kv_heads, c.head_dim), rope)
            attn = self._attention(li, q, k, v.reshape(n, c.n_kv_heads, c.head_dim), start)
            x = x + _linear(L.wo, attn, t, act)
            h = _rms_norm(x, L.ffn_norm, c.rms_eps)
            gate, up = L.gate_up(h, t, act)
            x = x + _linear(L.w_down, _swiglu(gate, up), t, act)
        self.n_past = start + n
        if last_only:
            x = x[-1:]
        return np.ascontiguousarray(_linear(self.output, _rms_norm(x, self.output_norm, c.rms_eps), t, act))

    # ------------------------------------------------------------------ generation
    def generate(self, prompt: Sequence[int], n: int, sampler: Sampler | None = None,
                 stats: dict | None = None) -> Iterator[int]:
        """Yield up to n new token ids after ``prompt`` (a fresh sequence), stopping after an
        end-of-generation token.  ``stats`` (a dict, optional) receives prompt/decode timings."""
        sampler = sampler or Sampler()
        self.reset()
        history = list(prompt)
        t0 = time.perf_counter()
        logits = self.forward(history, last_only=True)[0]
        t1 = time.perf_counter()
        produced = 0
        for _ in range(n):
            token = sampler(logits, history)
            history.append(token)
            produced += 1
            yield token
            if produced == n or (self.tokenizer is not None and self.tokenizer.is_eog(token)):
                break
            logits = self.forward([token], last_only=True)[0]
        if stats is not None:
            stats.update(prompt_tokens=len(prompt), prompt_s=t1 - t0,
                         gen_tokens=produced, gen_s=time.perf_counter() - t1)

    def generate_text(self, text: str, n: int, sampler: Sampler | None = None,
                      on_text: Callable[[str], None] | None = None, stats: dict | None = None) -> str:
        """Encode ``text``, generate up to n tokens, and return (and stream) the new text."""
        if self.tokenizer is None:
            raise ValueError("this GGUF file has no tokenizer metadata: use generate() on token ids")
        decoder = StreamDecoder(self.tokenizer)
        pieces = []
        for token in self.generate(self.tokenizer.encode(text), n, sampler, stats):
            piece = decoder.push(token)
            if piece:
                pieces.append(piece)
                if on_text:
                    on_text(piece)
        tail = decoder.flush()
        if tail:
            pieces.append(tail)
            if on_text:
                on_text(tail)
        return "".join(pieces)


class Sampler:
    """Next-token choice as llama.cpp's default chain: repetition penalty, top-k, top-p,
    temperature, then a draw; ``temperature <= 0`` is greedy (argmax).

    >>> Sampler()(np.array([0.1, 2.0, -1.0], np.float32), [])
    1
    """

    def __init__(self, temperature: float = 0.0, top_k: int = 40, top_p: float = 0.95,
                 repeat_penalty: float = 1.0, repeat_last_n: int = 64, seed: int | None = None):
        if top_k < 0 or not 0 < top_p <= 1 or repeat_penalty <= 0:
            raise ValueError("need top_k >= 0, 0 < top_p <= 1, repeat_penalty > 0")
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p
        self.repeat_penalty, self.repeat_last_n = repeat_penalty, repeat_last_n
        self.rng = np.random.default_rng(seed)

    def __call__(self, logits: np.ndarray, history: Sequence[int]) -> int:
        logits = np.array(logits, dtype=np.float64)
        if self.repeat_penalty != 1.0 and history:
            seen = np.unique(np.asarray(history[-self.repeat_last_n:], dtype=np.int64))
            vals = logits[seen]
            logits[seen] = np.where(vals > 0, vals / self.repeat_penalty, vals * self.repeat_penalty)
        if self.temperature <= 0:
            return int(np.argmax(logits))
        order = np.argsort(-logits, kind="stable")
        if self.top_k:
            order = order[: self.top_k]
        probs = np.exp((logits[order] - logits[order[0]]))
        probs /= probs.sum()
        keep = int(np.searchsorted(np.cumsum(probs), self.top_p) + 1)   # smallest set with mass >= top_p
        order = order[:keep]
        probs = np.exp((logits[order] - logits[order[0]]) / self.temperature)
        probs /= probs.sum()
        return int(order[self.rng.choice(order.size, p=probs)])
