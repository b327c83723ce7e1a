"""The server's event loop choice (ferrymq.server.eventloop)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ferrymq.server import eventloop

uvloop = pytest.importorskip("uvloop") if sys.platform != "win32" else None


def test_auto_is_uvloop_when_installed() -> None:
    loop = eventloop.loop_factory("auto")()
    try:
        assert eventloop.loop_name(loop) == "uvloop"
        assert isinstance(loop, uvloop.Loop)  # type: ignore[union-attr]
    finally:
        loop.close()


def test_asyncio_is_the_standard_loop() -> None:
    loop = eventloop.loop_factory("asyncio")()
    try:
        assert eventloop.loop_name(loop) == "asyncio"
        assert type(loop).__module__.startswith("asyncio")
    finally:
        loop.close()


def test_an_unknown_choice_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'tokio' is not one of auto, uvloop, asyncio"):
        eventloop.loop_factory("tokio")


def test_uvloop_asked_for_but_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    with pytest.raises(ValueError, match="uvloop is not installed"):
        eventloop.loop_factory("uvloop")
    assert eventloop.loop_factory("auto") is asyncio.new_event_loop
