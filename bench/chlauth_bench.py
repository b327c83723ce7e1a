"""What choosing a channel authentication record costs a CONNECT (issue 20):
``engine.chlauth.resolve`` for one SVRCONN client, as CPU microseconds per call, on IBM's
three default records and on tables of 1,000 more (generic USERMAP profiles that do not
match the channel; ADDRESSMAP records on the channel itself, each an address pattern to try).

Run: ``PYTHONPATH=src .venv/bin/python bench/chlauth_bench.py [--output json]``
"""

from __future__ import annotations

import argparse
import json
import time

from ferrymq.engine import chlauth as X
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C


def per_call(records: list[X.Record], partner: X.Partner, calls: int) -> float:
    X.resolve(records, partner, lambda user: False)  # patterns compiled once, as after the first CONNECT
    start = time.process_time()
    for _ in range(calls):
        X.resolve(records, partner, lambda user: False)
    return (time.process_time() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", choices=("text", "json"), default="text")
    args = parser.parse_args()
    defaults = X.with_defaults("")
    partner = X.Partner("APP.SVRCONN", F.MQCHT_SVRCONN, "10.1.2.3", "alice")
    usermaps = [X.check(X.Record(f"APP{i}.*", X.USERMAP, clntuser=f"user{i}", usersrc=C.MQUSRC_MAP, mcauser="u"),
                        F.MQACT_ADD) for i in range(1000)]
    addresses = [X.check(X.Record("APP.SVRCONN", X.ADDRESSMAP, address=f"10.{i // 250}.{i % 250}.*",
                                  usersrc=C.MQUSRC_MAP, mcauser="u"), F.MQACT_ADD) for i in range(1000)]
    figures = {"3 default records": per_call(defaults, partner, 20_000),
               "+1000 USERMAP on other profiles": per_call(defaults + usermaps, partner, 500),
               "+1000 ADDRESSMAP on the channel": per_call(defaults + addresses, partner, 200)}
    if args.output == "json":
        print(json.dumps({k: round(v, 1) for k, v in figures.items()}))
    else:
        for name, us in figures.items():
            print(f"{name:34s} {us:9.1f} us CPU per CONNECT")


if __name__ == "__main__":
    main()
