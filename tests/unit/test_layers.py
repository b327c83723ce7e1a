"""Imports flow downward: a module may import only from its own package or lower layers."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ferrymq"

LAYERS: dict[str, int] = {
    "mq": 0,
    "errors": 0,
    "wire": 0,
    "properties": 0,
    "pcf": 0,
    "protocol": 1,
    "store": 1,
    "tls": 1,
    "tcpopts": 1,  # the socket options of every TCP connection (client and server ends)
    "engine": 2,
    "server": 3,
    "client": 3,
    "channels": 3,
    "cluster": 3,
    "multicast": 3,
    "cli": 4,
    "admin": 4,
    "spark": 4,
    "bench": 4,
    "testing": 4,
    "pymqi": 4,
    "demo": 4,
    "api": 4,
    "console": 4,
    "__init__": 4,
    "__main__": 4,
}

# Pure-Python siblings at the same layer may not depend on each other sideways,
# except where listed here (the reason is given beside each pair).
ALLOWED_SIDEWAYS: set[tuple[str, str]] = {
    ("errors", "mq"),  # errors name reason codes
    ("wire", "mq"),
    ("wire", "errors"),
    ("properties", "mq"),  # message properties: typed values, IBM's name rules, MQRFH2 folders
    ("properties", "errors"),
    ("properties", "wire"),
    ("pcf", "mq"),  # the PCF command model: selectors, commands, MQRCCF_ reasons
    ("pcf", "errors"),
    ("pcf", "wire"),  # its messages are wire/pcf.py structures
    ("store", "errors"),
    ("store", "wire"),  # record framing helpers
    ("protocol", "store"),
}
FORBIDDEN = {("client", "engine"), ("client", "server"), ("client", "store"),
             # the Spark data source talks to queue managers over the network, as any client
             ("spark", "engine"), ("spark", "server"), ("spark", "store")}


def top_package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "ferrymq":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def own_package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def test_imports_flow_downward() -> None:
    problems: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        mine = own_package(path)
        my_layer = LAYERS.get(mine)
        assert my_layer is not None, f"{path}: package {mine!r} has no layer in this test"
        for module in imports_of(path):
            other = top_package(module)
            if other is None or other == mine:
                continue
            other_layer = LAYERS.get(other)
            assert other_layer is not None, f"{path}: imports unknown package {other!r}"
            if (mine, other) in FORBIDDEN:
                problems.append(f"{path.relative_to(SRC)} imports {module} ({mine} must never import {other})")
            elif other_layer > my_layer or (other_layer == my_layer and (mine, other) not in ALLOWED_SIDEWAYS and my_layer < 4):
                problems.append(f"{path.relative_to(SRC)} (L{my_layer}) imports {module} (L{other_layer})")
    assert not problems, "\n".join(problems)


def test_pyspark_only_under_spark() -> None:
    for path in SRC.rglob("*.py"):
        if own_package(path) == "spark":
            continue
        for module in imports_of(path):
            assert not module.startswith("pyspark"), f"{path} imports {module}"


def test_pyspark_ferrymq_is_only_the_entry_point() -> None:
    """Spark imports every pyspark_* module it finds: ours only points at ferrymq.spark."""
    path = SRC.parent / "pyspark_ferrymq" / "__init__.py"
    assert [m for m in imports_of(path) if m != "__future__"] == ["ferrymq.spark.source"]


def test_the_client_runs_without_pyspark() -> None:
    import subprocess
    import sys

    code = "import sys, ferrymq.client, ferrymq.api, ferrymq.cli.main; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_pymqi_loads_no_engine_module() -> None:
    """A pymqi program is a client: the PCF command model it builds lives in L0 (ferrymq.pcf)."""
    import subprocess
    import sys

    code = ("import sys, ferrymq.pymqi; "
            "print(sorted(m for m in sys.modules if m.startswith(('ferrymq.engine', 'ferrymq.server', 'ferrymq.store'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
