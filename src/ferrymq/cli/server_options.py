"""The queue manager process's knobs on the command line: ``ferrymq create`` keeps them
in config.json (``"server": {...}``), ``ferrymq start`` overrides them for one run.

Each knob is a ``QueueManagerServer`` keyword, or, where it has an ``engine_field``, a
field of the engine's ``MemoryLimits`` (docs/limits.md), or, marked ``process``, the queue
manager process's own (the web console's port), or, marked ``channels``, a setting of the
channel initiator (IBM's qm.ini Channels stanza), or, marked ``tls``, a setting of IBM's
qm.ini SSL stanza (``ServerTLS``'s OCSP policy, words rather than numbers); only the ones
given are kept, so a queue manager follows the defaults for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ferrymq.engine.paging import MemoryLimits
    from ferrymq.tls.ocsp import OCSPPolicy

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Knob:
    name: str  # the QueueManagerServer keyword
    kind: type[int] | type[float] | type[str]
    low: float  # the smallest value allowed
    help: str
    engine_field: str = ""  # a MemoryLimits field rather than a server keyword
    process: bool = False  # the queue manager process's own (the web console): not a server keyword
    channels: bool = False  # a ChannelInitiator keyword rather than a server keyword
    choices: tuple[str, ...] = ()  # a word knob's values (kind str), IBM's spelling

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


KNOBS = (
    Knob("max_msg_length", int, 32_768, "Largest message a connection carries, bytes (server default 4 MiB)."),
    Knob("heartbeat", float, 0, "Heartbeat interval, seconds, for every connection; 0: each "
                                      "connection's server-connection channel's HBINT (IBM's default 300)."),
    Knob("max_connections", int, 0, "Most client connections at once; more are refused with 2537 (default 1000)."),
    Knob("fd_reserve", int, 0, "File descriptors kept for the queue manager itself when the connection "
                                "capacity is worked out from RLIMIT_NOFILE (default 64)."),
    Knob("handshake_timeout", float, 0, "Seconds a new connection has to send its Connect (default 10)."),
    Knob("idle_timeout", float, 0, "Seconds of silence (heartbeat answers included) after which a connected "
                                   "client is ended, like DISCINT; 0: never (default). A client that misses "
                                   "heartbeats is cut in any case."),
    Knob("frame_timeout", float, 0, "Seconds a frame, once begun, has to arrive whole (default 60)."),
    Knob("frame_budget", int, 0, "Bytes that frames being received may hold across all connections; a "
                                 "connection growing past it is read no more until it falls (default 256 MiB)."),
    Knob("persistent_memory", int, 0, "Bytes of persistent message data kept in memory; beyond it messages are "
                                      "read back from the journal when needed (default 256 MiB).",
         "persistent_bytes"),
    Knob("unsynced_memory", int, 0, "Bytes of paged-out persistent data that may wait for the disk before "
                                    "requests are read no more (default 64 MiB).", "unsynced_bytes"),
    Knob("metrics_port", int, 0, "Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0: a free port, "
                                 "shown by 'ferrymq status'); off unless given."),
    Knob("console_port", int, 0, "Serve the web console at http://127.0.0.1:PORT/ (0: a free port, shown by "
                                 "'ferrymq status'); off unless given. Users sign in with the queue manager's "
                                 "registry (ferrymq user add).", process=True),
    Knob("console_tls", int, 0, "1: serve the web console over HTTPS (TLS 1.2/1.3) with the queue manager's "
                                "certificate from its key repository (SSLKEYR, CERTLABL; 'ferrymq tls "
                                "create-dev-certs' makes one); 0: plain HTTP on loopback (default).", process=True),
    Knob("non_persistent_memory", int, 0, "Bytes of non-persistent message data on all queues; more is "
                                          "refused with 2056 (default 1 GiB).", "non_persistent_bytes"),
    Knob("pipeline_length", int, 1, "IBM's PipeLineLength: above 1 a sending channel sends its next batch "
                                    "while the last one waits for its confirmation, when the receiving queue "
                                    "manager's is above 1 too; any value above 1 acts as 2 (default 1; "
                                    "docs/distributed.md).", channels=True),
    Knob("ocsp_check_extensions", str, 0, "IBM's OCSPCheckExtensions: YES (default) asks the OCSP responder a "
                                          "client's certificate names (AuthorityInfoAccess) whether it is "
                                          "revoked; NO never asks (docs/security.md).", choices=("YES", "NO")),
    Knob("ocsp_authentication", str, 0, "IBM's OCSPAuthentication: when an OCSP responder cannot say whether a "
                                        "certificate is revoked, REQUIRED (default) refuses the connection, WARN "
                                        "lets it on with a Channel SSL Warning event, OPTIONAL lets it on.",
         choices=("REQUIRED", "WARN", "OPTIONAL")),
)
_BY_NAME = {k.name: k for k in KNOBS}


def click_options(fn: F) -> F:
    """Add one ``--knob`` option per knob (default None: not given)."""
    for knob in reversed(KNOBS):
        kind: Any = click.Choice(knob.choices, case_sensitive=False) if knob.choices else knob.kind
        fn = click.option(knob.flag, knob.name, type=kind, default=None, help=knob.help)(fn)
    return fn


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs among ``values`` (click's keyword arguments) that were given, checked.

    Raises:
        ValueError: a value out of its range.
    """
    out = {k: values[k] for k in _BY_NAME if values.get(k) is not None}
    return check(out)


def check(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` (from config.json or the command line) as server keywords.

    Raises:
        ValueError: an unknown knob, a value of the wrong type or out of its range.
    """
    out: dict[str, Any] = {}
    for name, value in options.items():
        knob = _BY_NAME.get(name)
        if knob is None:
            raise ValueError(f"unknown server option {name!r}")
        if knob.choices:
            if not isinstance(value, str) or value.upper() not in knob.choices:
                raise ValueError(f"{name} is one of {', '.join(knob.choices)}, not {value!r}")
            out[name] = value.upper()
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (knob.kind is int
                                                                            and not isinstance(value, int)):
            raise ValueError(f"{name} must be {'an integer' if knob.kind is int else 'a number'}, not {value!r}")
        if value < knob.low:
            raise ValueError(f"{name} must be at least {knob.low:g}, not {value!r}")
        out[name] = knob.kind(value)
    if out:
        from ferrymq.server.conn_limits import Limits  # only when needed: it loads the server package

        Limits(**{k: v for k, v in out.items() if k in Limits.__dataclass_fields__})  # the server's own rules
        memory_limits(out)
    return out


def server_keywords(options: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs among checked ``options`` that are ``QueueManagerServer`` keywords."""
    return {k: v for k, v in options.items()
            if not (_BY_NAME[k].engine_field or _BY_NAME[k].process or _BY_NAME[k].channels or _BY_NAME[k].choices)}


def ocsp_policy(options: Mapping[str, Any]) -> OCSPPolicy:
    """IBM's SSL stanza OCSP settings among checked ``options`` (the defaults for the rest)."""
    from ferrymq.tls.ocsp import OCSPPolicy

    return OCSPPolicy(check_extensions=options.get("ocsp_check_extensions", "YES") == "YES",
                      authentication=options.get("ocsp_authentication", "REQUIRED"))


def channel_keywords(options: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs among checked ``options`` that are ``ChannelInitiator`` keywords."""
    return {k: v for k, v in options.items() if _BY_NAME[k].channels}


def memory_limits(options: Mapping[str, Any]) -> MemoryLimits:
    """The engine's memory limits: the defaults, with the knobs among ``options`` that set them.

    Raises:
        ValueError: a limit the engine refuses.
    """
    from ferrymq.engine.paging import MemoryLimits  # the engine is loaded only by commands that need it

    return MemoryLimits(**{_BY_NAME[k].engine_field: v for k, v in options.items() if _BY_NAME[k].engine_field})


def as_args(options: Mapping[str, Any]) -> list[str]:
    """``options`` as command-line arguments (for the detached server process)."""
    args: list[str] = []
    for name, value in options.items():
        args += [_BY_NAME[name].flag, str(value)]
    return args
