"""What every named definition shares (TOPIC, NAMELIST, PROCESS, CHANNEL and LISTENER
objects): its attributes, its creation and alteration stamps and its journal record (JSON:
our own file, never from the wire); and what every registry of them shares: lookup by name
with IBM's refusal, MQSC generic names, iteration in name order, and the bookkeeping of a
change (stamped, the object epoch moved on, journaled through Staging's ``keep``/``forget``).

The registries themselves own their object type's rules (define, alter, delete).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any, Generic, TypeVar

from ferrymq.engine.objects import ObjectRegistry, stamp
from ferrymq.engine.staging import Staging
from ferrymq.errors import failed
from ferrymq.mq import constants as C


class Definition:
    """One named definition: ``attrs`` maps MQSC keywords to values; ``record_id`` is its
    journal record's (0 until journaled)."""

    __slots__ = ("altered", "attrs", "created", "name", "record_id")

    def __init__(self, name: str, attrs: dict[str, int | str], now: float) -> None:
        self.name = name
        self.attrs = attrs
        self.created = stamp(now)
        self.altered = self.created
        self.record_id = 0

    def stamp_of(self, keyword: str) -> str | None:
        """CRDATE, CRTIME, ALTDATE or ALTTIME; None for any other keyword."""
        if keyword in ("ALTDATE", "ALTTIME"):
            return self.altered[keyword == "ALTTIME"]
        if keyword in ("CRDATE", "CRTIME"):
            return self.created[keyword == "CRTIME"]
        return None

    def document(self) -> dict[str, object]:
        """What its journal record holds (subclasses add their own fields)."""
        return {"name": self.name, "attrs": self.attrs, "created": self.created, "altered": self.altered}

    def encode(self) -> bytes:
        return json.dumps(self.document()).encode()

    def restore_stamps(self, doc: Mapping[str, Any]) -> None:
        """The stamps of a definition read back from its record.

        Raises:
            TypeError, KeyError, IndexError: the record holds no pair of stamps.
        """
        created, altered = doc["created"], doc["altered"]
        if not isinstance(created, list) or not isinstance(altered, list):
            raise TypeError("created and altered are not [date, time] pairs")
        self.created = (str(created[0]), str(created[1]))
        self.altered = (str(altered[0]), str(altered[1]))


def kept_values(catalog: Mapping[str, object], attrs: object) -> dict[str, int | str]:
    """A record's attributes that ``catalog`` knows, with the value types attributes take
    (those of another version are dropped).

    Raises:
        TypeError: ``attrs`` is not a JSON object.
    """
    if not isinstance(attrs, dict):
        raise TypeError("attrs is not an object")
    return {k: v for k, v in attrs.items()
            if k in catalog and isinstance(v, (int, str)) and not isinstance(v, bool)}


T = TypeVar("T", bound=Definition)


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

    # -- the bookkeeping of a change ---------------------------------------------------------
    def added(self, obj: T) -> T:
        """A new definition: registered and journaled."""
        self.by_name[obj.name] = obj
        self.objects.epoch += 1
        self.persist(obj)
        return obj

    def changed(self, obj: T) -> T:
        """A definition whose attributes changed (ALTER, DEFINE REPLACE): stamped, journaled."""
        obj.altered = stamp(self.now())
        self.objects.epoch += 1
        self.persist(obj)
        return obj

    def removed(self, obj: T) -> None:
        """A deleted definition: unregistered, its record deleted."""
        del self.by_name[obj.name]
        self.objects.epoch += 1
        self.unpersist(obj)

    def load(self, obj: T) -> None:
        """A definition replayed from the journal at restart."""
        self.by_name[obj.name] = obj
        self.objects.epoch += 1
