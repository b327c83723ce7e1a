"""PROCESS objects: what a trigger monitor starts when a triggered queue's trigger message
names them (APPLICID, APPLTYPE, ENVRDATA, USERDATA, DESCR).

A queue's PROCESS attribute names one; the trigger message (wire.mqtm) carries its
attributes as they are when the trigger event happens. The registry owns the objects and
the rules of DEFINE/ALTER/DELETE PROCESS; SYSTEM.DEFAULT.PROCESS is the base of a new one.

Definitions live in journal records (kind PROCESS, JSON payload: our own file, never
evaluated), written through Staging as the other definitions are, and replayed at restart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from ferrymq.engine import attrs as A
from ferrymq.engine.definitions import Definition, Definitions, kept_values
from ferrymq.engine.objects import ObjectRegistry, check_name
from ferrymq.errors import failed
from ferrymq.mq import constants as C

KIND_PROCESS = 12  # journal record kind: one process definition
DEFAULT_PROCESS = "SYSTEM.DEFAULT.PROCESS"


class ProcessObject(Definition):
    """One PROCESS definition."""

    __slots__ = ()

    def status(self, name: str) -> int | str:
        """An attribute by its MQSC keyword."""
        if name == "PROCESS":
            return self.name
        if name in ("ALTDATE", "ALTTIME"):
            return self.altered[name == "ALTTIME"]
        return self.attrs.get(name, A.PROCESS_BY_NAME[name].default)


def decode_process(payload: bytes, now: float) -> ProcessObject:
    """A process from its journal record (a record that is not one raises ValueError,
    KeyError or TypeError: the caller logs and skips it)."""
    doc = json.loads(payload)
    obj = ProcessObject(check_name(str(doc["name"])), kept_values(A.PROCESS_BY_NAME, doc["attrs"]), now)
    obj.restore_stamps(doc)
    return obj


class ProcessRegistry(Definitions[ProcessObject]):
    """Every PROCESS object, by name; the admin verbs over them."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float]) -> None:
        super().__init__(objects, now, "process", KIND_PROCESS)

    def define(self, name: str, attrs: Mapping[str, object] | None = None, *, like: str | None = None,
               replace: bool = False) -> ProcessObject:
        """DEFINE PROCESS: from SYSTEM.DEFAULT.PROCESS (or LIKE another).

        Raises:
            MQError: MQRC_OBJECT_NAME_ERROR (2152), MQRC_OBJECT_ALREADY_EXISTS (2100) without
                REPLACE, MQRC_UNKNOWN_OBJECT_NAME for a missing LIKE, and the catalog's value
                rules. Nothing changes when one is raised.
        """
        name = check_name(name)
        existing = self.by_name.get(name)
        if existing is not None and not replace:
            raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"PROCESS({name}) already exists; use REPLACE to redefine it")
        given = _checked(attrs or {})
        base = self.by_name.get(DEFAULT_PROCESS) if like is None else self.by_name.get(like.rstrip())
        if like is not None and base is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"LIKE({like.rstrip()}) is not a process")
        values = dict(base.attrs) if base is not None else A.defaults_for(A.PROCESS)
        values.update(given)
        if existing is not None:
            existing.attrs = values
            return self.changed(existing)
        return self.added(ProcessObject(name, values, self.now()))

    def alter(self, name: str, attrs: Mapping[str, object]) -> ProcessObject:
        """ALTER PROCESS.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME and the catalog's value rules; nothing changes then.
        """
        obj = self.require(name)
        values = dict(obj.attrs)
        values.update(_checked(attrs))
        obj.attrs = values
        return self.changed(obj)

    def delete(self, name: str) -> None:
        """DELETE PROCESS (IBM lets a queue keep naming a deleted process: its trigger events
        then make no trigger message).

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME (2085).
        """
        obj = self.require(name)
        self.removed(obj)

    def define_system(self) -> None:
        """SYSTEM.DEFAULT.PROCESS, where it is not defined yet."""
        if DEFAULT_PROCESS not in self.by_name:
            self.define(DEFAULT_PROCESS, {})


def _checked(attrs: Mapping[str, object]) -> dict[str, int | str]:
    """Catalog names and values checked by the catalog's rules.

    Raises:
        MQError: MQRC_SELECTOR_ERROR for a name that is not a settable PROCESS attribute.
    """
    out: dict[str, int | str] = {}
    for key, value in attrs.items():
        attr = A.PROCESS_BY_NAME.get(key.upper())
        if attr is None or attr.readonly:
            raise failed(C.MQRC_SELECTOR_ERROR, f"{key.upper()} is not a settable attribute of PROCESS")
        out[attr.name] = attr.check(value)
    return out
