"""What every registry of named definitions shares (TOPIC objects, NAMELISTs): lookup by
name with IBM's refusal, MQSC generic names, iteration in name order, and the journal
writes of each definition through Staging (``keep``/``forget``).

The registries themselves own their object type's rules (define, alter, delete).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator
from functools import partial
from typing import Generic, Protocol, TypeVar

from ferrymq.engine.objects import ObjectRegistry
from ferrymq.engine.staging import Staging
from ferrymq.errors import failed
from ferrymq.mq import constants as C


class Named(Protocol):
    name: str
    record_id: int

    def encode(self) -> bytes: ...


T = TypeVar("T", bound=Named)


def _not_attached(obj: object) -> None:
    """Before ``attach``: a registry nobody journals (tests of the rules alone)."""


class Definitions(Generic[T]):
    """Named definitions of one kind (``what`` names it in refusals); ``kind`` is their
    journal record kind."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float], what: str, kind: int) -> None:
        self.objects = objects  # its ``epoch`` moves on every change of a definition
        self.now = now
        self.what, self.kind = what, kind
        self.by_name: dict[str, T] = {}
        self.persist: Callable[[T], None] = _not_attached
        self.unpersist: Callable[[T], None] = _not_attached

    def attach(self, staging: Staging) -> None:
        """Write definitions through ``staging`` (the journal), as queue definitions are."""
        self.persist, self.unpersist = partial(staging.keep, self.kind), staging.forget

    def __iter__(self) -> Iterator[T]:
        return iter([self.by_name[n] for n in sorted(self.by_name)])

    def __len__(self) -> int:
        return len(self.by_name)

    def find(self, name: str) -> T | None:
        return self.by_name.get(name.rstrip())

    def require(self, name: str) -> T:
        """Raises: MQError MQRC_UNKNOWN_OBJECT_NAME (2085)."""
        obj = self.find(name)
        if obj is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"{self.what} {name.rstrip()!r} is not defined")
        return obj

    def names(self, pattern: str = "*") -> list[str]:
        """Names matching an MQSC generic name (``APP.*``), sorted."""
        pattern = pattern.rstrip() or "*"
        return sorted(n for n in self.by_name if fnmatch.fnmatchcase(n, pattern))
