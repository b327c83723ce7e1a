"""NAMELIST objects: a named list of up to 256 names (queue names, cluster names ...).

IBM MQ uses namelists where an attribute names several objects (a queue manager's
repositories, a channel's clusters); administrators define them with DEFINE NAMELIST or
MQCMD_CREATE_NAMELIST and read them with DISPLAY NAMELIST, MQCMD_INQUIRE_NAMELIST or
MQOPEN + MQINQ (MQCA_NAMES, MQIA_NAME_COUNT). The registry here owns the objects and the
rules of DEFINE/ALTER/DELETE NAMELIST; NAMES is held as a tuple beside the catalog's other
attributes (DESCR, NLTYPE), which are single values.

Definitions live in journal records (kind NAMELIST, JSON payload: our own file, never
evaluated), written through Staging as the other definitions are, and replayed at restart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from ferrymq.engine import attrs as A
from ferrymq.engine.definitions import Definition, Definitions, kept_values
from ferrymq.engine.objects import ObjectRegistry, check_name
from ferrymq.errors import failed
from ferrymq.mq import constants as C

KIND_NAMELIST = 9  # journal record kind: one namelist's definition
DEFAULT_NAMELIST = "SYSTEM.DEFAULT.NAMELIST"


def check_names(names: Iterable[object]) -> tuple[str, ...]:
    """NAMES as IBM allows them: at most 256, each at most 48 characters (blanks trimmed).

    Raises:
        MQError: MQRC_CHAR_ATTR_LENGTH_ERROR naming the rule and the value that broke it.
    """
    out = []
    for value in names:
        text = value.decode() if isinstance(value, bytes) else value
        if not isinstance(text, str):
            raise failed(C.MQRC_CHAR_ATTR_LENGTH_ERROR, f"NAMES takes names, not {value!r}")
        text = text.strip()
        if len(text) > C.MQ_OBJECT_NAME_LENGTH:
            raise failed(C.MQRC_CHAR_ATTR_LENGTH_ERROR,
                         f"a name in NAMES holds at most {C.MQ_OBJECT_NAME_LENGTH} characters: {text!r}")
        out.append(text)
    if len(out) > C.MQNC_MAX_NAMELIST_NAME_COUNT:
        raise failed(C.MQRC_CHAR_ATTR_LENGTH_ERROR,
                     f"NAMES holds at most {C.MQNC_MAX_NAMELIST_NAME_COUNT} names, not {len(out)}")
    return tuple(out)


class NamelistObject(Definition):
    """One NAMELIST definition."""

    __slots__ = ("names",)

    def __init__(self, name: str, attrs: dict[str, int | str], names: tuple[str, ...], now: float) -> None:
        super().__init__(name, attrs, now)
        self.names = names

    def status(self, name: str) -> int | str | tuple[str, ...]:
        """An attribute by its MQSC keyword (NAMES a tuple, NAMCOUNT its length)."""
        if name == "NAMES":
            return self.names
        if name == "NAMCOUNT":
            return len(self.names)
        if name in ("ALTDATE", "ALTTIME"):
            return self.altered[name == "ALTTIME"]
        return self.attrs.get(name, A.NAMELIST_BY_NAME[name].default)

    def document(self) -> dict[str, object]:
        return {**super().document(), "names": list(self.names)}


def decode_namelist(payload: bytes, now: float) -> NamelistObject:
    """A namelist from its journal record (a record that is not one raises ValueError,
    KeyError or TypeError: the caller logs and skips it)."""
    doc = json.loads(payload)
    obj = NamelistObject(str(doc["name"]), kept_values(A.NAMELIST_BY_NAME, doc["attrs"]), check_names(doc["names"]), now)
    obj.restore_stamps(doc)
    return obj


class NamelistRegistry(Definitions[NamelistObject]):
    """Every NAMELIST object, by name; the admin verbs over them."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float]) -> None:
        super().__init__(objects, now, "namelist", KIND_NAMELIST)
        self.namelists = self.by_name

    def define(self, name: str, attrs: Mapping[str, object] | None = None, names: Iterable[object] | None = None, *,
               like: str | None = None, replace: bool = False) -> NamelistObject:
        """DEFINE NAMELIST: from SYSTEM.DEFAULT.NAMELIST (or LIKE another); ``names`` given
        replaces the list taken from there.

        Raises:
            MQError: MQRC_OBJECT_NAME_ERROR (2152), MQRC_OBJECT_ALREADY_EXISTS (2100) without
                REPLACE, MQRC_UNKNOWN_OBJECT_NAME for a missing LIKE, the rules of
                ``check_names`` and of the attribute catalog. Nothing changes when one is raised.
        """
        name = check_name(name)
        existing = self.namelists.get(name)
        if existing is not None and not replace:
            raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"NAMELIST({name}) already exists; use REPLACE to redefine it")
        given = _checked(attrs or {})
        listed = None if names is None else check_names(names)
        base = self.namelists.get(DEFAULT_NAMELIST) if like is None else self.namelists.get(like.rstrip())
        if like is not None and base is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"LIKE({like.rstrip()}) is not a namelist")
        values = dict(base.attrs) if base is not None else A.defaults_for(A.NAMELIST)
        values.update(given)
        if listed is None:
            listed = base.names if base is not None else ()
        if existing is not None:
            existing.attrs, existing.names = values, listed
            return self.changed(existing)
        return self.added(NamelistObject(name, values, listed, self.now()))

    def alter(self, name: str, attrs: Mapping[str, object], names: Iterable[object] | None = None) -> NamelistObject:
        """ALTER NAMELIST: ``names`` given replaces the whole list.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME and the rules of ``define``; nothing changes then.
        """
        obj = self.require(name)
        values = dict(obj.attrs)
        values.update(_checked(attrs))
        listed = obj.names if names is None else check_names(names)
        obj.attrs, obj.names = values, listed
        return self.changed(obj)

    def delete(self, name: str) -> None:
        """DELETE NAMELIST.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME (2085).
        """
        obj = self.require(name)
        self.removed(obj)

    def define_system(self) -> None:
        """SYSTEM.DEFAULT.NAMELIST, where it is not defined yet."""
        if DEFAULT_NAMELIST not in self.namelists:
            self.define(DEFAULT_NAMELIST, {}, ())


def _checked(attrs: Mapping[str, object]) -> dict[str, int | str]:
    """Catalog names and values checked by the catalog's rules (NAMES is not among them)."""
    out: dict[str, int | str] = {}
    for key, value in attrs.items():
        attr = A.NAMELIST_BY_NAME.get(key.upper())
        if attr is None or attr.readonly or A.NAMELIST not in attr.types:
            raise failed(C.MQRC_SELECTOR_ERROR, f"{key.upper()} is not a settable attribute of NAMELIST")
        out[attr.name] = attr.check(value)
    return out
