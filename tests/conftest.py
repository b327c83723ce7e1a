"""Settings shared by every test directory.

Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a loaded
two-core machine a single example of the protocol stream tests has taken 295 ms once and
3 ms when replayed, failing CI as "flaky". Speed is measured in bench/, never by tests, so
the deadline is off for the whole suite; each test's example count still bounds its time.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ferrymq", deadline=None)
settings.load_profile("ferrymq")


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount tmpfs filesystems of a given size (``small_tmpfs("4m")``) for disk-full tests;
    each is unmounted afterwards. Mounting needs root, which CI has."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs the suite as root)")
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        mnt = tmp_path / f"disk{len(mounted)}"
        mnt.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)
        mounted.append(mnt)
        return mnt

    try:
        yield mount
    finally:
        for mnt in mounted:
            subprocess.run(["umount", "-l", str(mnt)], check=False)

