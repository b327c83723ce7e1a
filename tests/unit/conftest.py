from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from engine_helpers import Env


@pytest.fixture
def env() -> Env:
    return Env()
