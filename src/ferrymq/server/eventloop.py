"""Which asyncio event loop a queue manager's server runs on.

uvloop (libuv) handles each readable socket and each write in far less interpreter work
than the standard selector loop, which is what a server of many small requests spends
most of its time on; so the server runs on it whenever it is installed ("auto"). The
standard loop stays selectable ("asyncio"), for platforms without uvloop and to compare
the two; asking for "uvloop" where it is not installed is an error, not a silent fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

CHOICES = ("auto", "uvloop", "asyncio")


def _uvloop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_factory(choice: str = "auto") -> Callable[[], asyncio.AbstractEventLoop]:
    """A function making a new event loop of the chosen kind.

    Raises:
        ValueError: an unknown choice, or "uvloop" when uvloop is not installed.
    """
    if choice not in CHOICES:
        raise ValueError(f"event loop {choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return asyncio.new_event_loop
    uv = _uvloop_factory()
    if uv is not None:
        return uv
    if choice == "uvloop":
        raise ValueError("event loop 'uvloop' was asked for, but uvloop is not installed (pip install uvloop)")
    return asyncio.new_event_loop


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """"uvloop" or "asyncio": what a running loop is, for logs and status."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"

