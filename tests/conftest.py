"""Shared fixtures: the ISA variants this CPU runs, and the paths of optional test data."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))   # tests/blocks.py and friends

from qgemv import _dispatch  # noqa: E402
from qgemv.models import gemma3_path, smollm2_path  # noqa: E402,F401  (shared by the test modules)

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

