"""The blocking and the asyncio clients are twins: what they share differs only in the
spelling of ``async``/``await``, and what differs is the I/O itself (a short, named list).

Each function of client/sync.py is compared with its namesake in client/aio.py once the
async spelling is taken away (``async def/with/for``, ``await``, the ``Async`` prefix of a
name, the asynchronous dunders and context manager), docstrings, comments and layout
aside. A flow both clients need is written once (ferrymq.client.flows, ferrymq.client.mqi)
and only driven here; a change to one twin that is not made to the other fails here.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "src" / "ferrymq" / "client"

# The functions whose twins differ, and why: each is the I/O of its client.
DIFFERENT = {
    "Client.__init__": "the socket and its receive bound / the futures, events and tasks of the loop",
    "Client._handshake": "a blocking socket / an asyncio transport and the heartbeat watchdog task",
    "Client.run": "steps.drive / the same loop, awaiting each step",
    "Client._step": "time.sleep and socket.close / asyncio.sleep and transport.abort",
    "Client._flush": "sendall / transport.write, once per loop iteration",
    "Client._exchange": "write then read until the reply / a future the protocol resolves",
    "Client._send": "whether the request left: the socket's write / the last flushed correlation id",
    "Client._reconnect": "runs the flow / runs it once in a task shared by every task that saw the end",
    "Client.disconnect": "the socket / the transport and the watchdog",
    "Queue.put": "asynchronous puts: write at 64 KiB, reconnect on a failed write / hold the producer while "
                 "the transport is full, reconnect before",
    "Queue.put_columns": "as put",
    "Queue._get_ahead": "read the socket until a pushed message / wait for the protocol's arrival event",
    "connect": "socket.create_connection / the loop's getaddrinfo and sock_connect",
}

_SPELLING = [
    (r"\basync (def|with|for)\b", r"\1"),
    (r"\bawait ", ""),
    (r"\bAsync(?=[A-Z])", ""),
    (r"\basynccontextmanager\b", "contextmanager"),
    (r"\b__a(enter|exit|iter)__\b", r"__\1__"),
    (r"\bconnect_async\b", "connect"),
]


def without_async(text: str) -> str:
    for pattern, repl in _SPELLING:
        text = re.sub(pattern, repl, text)
    return text


def _shape(node: ast.FunctionDef) -> str:
    """The function's code without its docstring, comments and layout."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    node.body = body or [ast.Pass()]
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def functions(path: Path) -> dict[str, str]:
    """``name`` or ``Class.name`` -> its shape, after ``without_async``."""
    tree = ast.parse(without_async(path.read_text()))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = _shape(node)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef):
                    found[f"{node.name}.{sub.name}"] = _shape(sub)
    return found


def test_without_async_removes_only_the_spelling() -> None:
    text = "async def f(q: AsyncQueue) -> None:\n    async with x:\n        await q.get()\n"
    assert without_async(text) == "def f(q: Queue) -> None:\n    with x:\n        q.get()\n"


TWINS = [("sync.py", "aio.py"), ("subscription.py", "aio_subscription.py")]
"""Each blocking module and its asyncio twin."""


def twins() -> tuple[dict[str, str], dict[str, str]]:
    """Every twin pair's functions, the blocking ones and the asyncio ones."""
    sync: dict[str, str] = {}
    aio: dict[str, str] = {}
    for a, b in TWINS:
        fa, fb = functions(CLIENT / a), functions(CLIENT / b)
        assert not (fa.keys() & sync.keys()) and not (fb.keys() & aio.keys()), "a name in two twin modules"
        sync.update(fa)
        aio.update(fb)
    return sync, aio


def test_the_twins_differ_only_in_the_async_spelling_but_for_their_io() -> None:
    sync, aio = twins()
    both = sync.keys() & aio.keys()
    drifted = sorted(name for name in both if sync[name] != aio[name] and name not in DIFFERENT)
    assert not drifted, f"differ beyond async/await (write the logic once in flows/mqi, or name why): {drifted}"
    alike = sorted(name for name in DIFFERENT if name in both and sync[name] == aio[name])
    assert not alike, f"now the same: take them off DIFFERENT: {alike}"
    assert DIFFERENT.keys() <= both, f"DIFFERENT names what is gone: {sorted(DIFFERENT.keys() - both)}"


def test_the_twins_offer_the_same_methods() -> None:
    sync, aio = twins()

    def public(names: set[str]) -> set[str]:
        return {n for n in names if "." in n and not n.split(".")[1].startswith("_") and not n.startswith("_")}

    # Sync spells ``__iter__ = messages``; an AsyncClient is made by ``await from_socket()``
    # (no awaiting in ``__init__``), a Client by ``Client(sock)``.
    assert public(set(sync)) ^ public(set(aio)) <= {"Queue.__iter__", "Client.from_socket", "Subscription.__iter__",
                                                    "Subscription.__aiter__"}


def test_a_drift_is_seen() -> None:
    """The comparison sees a one-token change in a twin (so it cannot pass by comparing nothing)."""
    twin = textwrap.dedent("""
        class Client:
            def commit(self) -> None:
                self.run(mqi.commit(self))
    """)
    drifted = twin.replace("mqi.commit", "mqi.backout")
    tree_a, tree_b = ast.parse(twin), ast.parse(drifted)
    a, b = tree_a.body[0], tree_b.body[0]
    assert isinstance(a, ast.ClassDef) and isinstance(b, ast.ClassDef)
    fa, fb = a.body[0], b.body[0]
    assert isinstance(fa, ast.FunctionDef) and isinstance(fb, ast.FunctionDef)
    assert _shape(fa) != _shape(fb)


def test_the_sequence_call_mixins_differ_only_in_the_async_spelling() -> None:
    """client/sequence_calls.py holds both mixins in one module: once the async spelling is
    gone they are two classes of one name, whose methods must be the same."""
    tree = ast.parse(without_async((CLIENT / "sequence_calls.py").read_text()))
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert [c.name for c in classes] == ["SequenceCalls", "SequenceCalls"]
    blocking, asyncio_twin = ({sub.name: _shape(sub) for sub in c.body if isinstance(sub, ast.FunctionDef)}
                              for c in classes)
    assert blocking.keys() == asyncio_twin.keys()
    drifted = sorted(name for name in blocking if blocking[name] != asyncio_twin[name])
    assert not drifted, f"the sequence-call mixins differ beyond async/await: {drifted}"
