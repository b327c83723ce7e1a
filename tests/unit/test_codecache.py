"""The frames' compiled-code cache: kept between processes, ignored when it cannot be trusted."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import cast

import pytest

from ferrymq.protocol import codecache
from ferrymq.protocol.codecache import CodeCache

SOURCE = "def f(x):\n    return x + 1\n"


def _run(code: CodeType) -> Callable[[int], int]:
    ns: dict[str, object] = {}
    exec(code, ns)  # our own test source
    return cast(Callable[[int], int], ns["f"])


def test_saved_code_is_used_by_the_next_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "frames.marshal"
    first = CodeCache(path)
    f = _run(first.compile(SOURCE, "<frame X pack>"))
    assert f(1) == 2 and first.misses == 1
    first.save()
    assert path.exists() and first.misses == 0
    second = CodeCache(path)
    g = _run(second.compile(SOURCE, "<frame X pack>"))
    assert g(41) == 42 and second.misses == 0
    # another name or another source is compiled afresh
    second.compile(SOURCE, "<frame Y pack>")
    second.compile(SOURCE.replace("1", "2"), "<frame X pack>")
    assert second.misses == 2
    second.save()  # only what this process used is kept: the two new entries and the first
    assert len(CodeCache(path)._code) == 3
    third = CodeCache(path)
    third.compile(SOURCE, "<frame Y pack>")
    third.compile("x = 1\n", "<z>")
    third.save()
    assert len(CodeCache(path)._code) == 2


@pytest.mark.parametrize("content", [b"", b"garbage", codecache._MAGIC + b"\xff\x00", codecache._MAGIC[:-1]])
def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "frames.marshal"
    path.write_bytes(content)
    cache = CodeCache(path)
    assert _run(cache.compile(SOURCE, "<x>"))(0) == 1
    assert cache.misses == 1


def _saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    tmp_path.chmod(0o755)
    path = tmp_path / "frames.marshal"
    cache = CodeCache(path)
    cache.compile(SOURCE, "<x>")
    cache.save()
    assert CodeCache(path).compile(SOURCE, "<x>") and CodeCache(path)._code  # trusted as saved
    return path


def test_a_file_others_may_write_is_not_trusted_with_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _saved(tmp_path, monkeypatch)
    path.chmod(0o666)
    assert CodeCache(path)._code == {}
    path.chmod(0o644)
    tmp_path.chmod(0o777)  # nor one in a directory others may write
    assert CodeCache(path)._code == {}


def test_a_symbolic_link_or_an_oversized_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _saved(tmp_path, monkeypatch)
    link = tmp_path / "link.marshal"
    link.symlink_to(path)
    assert CodeCache(link)._code == {}
    with path.open("ab") as f:
        f.truncate(codecache.MAX_BYTES + 1)
    assert CodeCache(path)._code == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _saved(tmp_path, monkeypatch)
    os.chown(path, 65534, 65534)
    assert CodeCache(path)._code == {}


def test_entries_that_are_not_code_are_dropped(tmp_path: Path) -> None:
    import marshal
    path = tmp_path / "frames.marshal"
    path.write_bytes(codecache._MAGIC + marshal.dumps({b"k": 1, "s": compile("1", "<s>", "eval")}))
    assert CodeCache(path)._code == {}


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "frames.marshal"
    cache = CodeCache(path)
    cache.compile(SOURCE, "<x>")
    cache.save()
    assert not path.exists()


def test_an_unwritable_directory_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = CodeCache(blocker / "sub" / "frames.marshal")  # its parent is a file: mkdir fails
    cache.compile(SOURCE, "<x>")
    cache.save()
    assert cache.misses == 1


def test_a_fresh_process_imports_the_codec_from_the_cache(tmp_path: Path) -> None:
    """Two processes in turn, writing bytecode: the second compiles none of the frames."""
    env = {"PYTHONDONTWRITEBYTECODE": "", "PATH": "/usr/bin:/bin"}
    probe = ("import ferrymq.protocol.codec, ferrymq.protocol.layout as l; "
             "print(l.CODE.misses, len(l.CODE._code))")
    src = str(Path(codecache.__file__).parents[2])
    subprocess.run([sys.executable, "-c", probe], env={**env, "PYTHONPATH": src}, check=True,
                   capture_output=True)
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "PYTHONPATH": src}, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0] == "0" and int(out[1]) > 100
