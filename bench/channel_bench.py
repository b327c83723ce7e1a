"""Messages QM1 -> QM2 through a sender/receiver channel: now the ``channel`` scenario of
``ferrymq bench`` (src/ferrymq/bench/channel.py), which also runs the single queue
manager's persistent puts and a RabbitMQ shovel beside it. Kept so that the commands of
earlier sittings in RESULTS.md still run::

    PYTHONPATH=src python bench/channel_bench.py [--count N] [--size BYTES] [--batch BATCHSZ]
"""

from __future__ import annotations

import argparse
import subprocess
import sys


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=50)
    args = ap.parse_args()
    raise SystemExit(subprocess.call([sys.executable, "-m", "ferrymq.cli", "bench", "--scenario", "channel",
                                      "--only", "ferrymq", "--channel-count", str(args.count), "--size",
                                      str(args.size), "--channel-batch", str(args.batch), "--output", "json"]))


if __name__ == "__main__":
    main()
