"""Encoding a PushedBatch of publication copies, for counting instructions with callgrind
(no sockets, no engine): what the server does per copy pushed to a read-ahead subscriber.

    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/pushed_batch_bench.py --batches N

Each of ``--batches`` batches holds ``--items`` copies of one publication (1 KiB of data,
a stored MQMD), each with the getter's copy of the publication's one property set
(MQTopicString, packed once as the publisher's side packs it). Run it at two counts and
divide the difference by the difference of the items for the cost per copy.
"""

from __future__ import annotations

import argparse

from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet, pack
from ferrymq.protocol.codec import _enc_message_items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--items", type=int, default=200)
    args = ap.parse_args()
    shared = PropertySet()
    shared.set("mqps.Top", "bench/fan", C.MQTYPE_STRING)
    pack(shared)
    md, data, token = bytes(C.MQMD_LENGTH_2), bytes(1024), bytes(16)
    size = 0
    for _ in range(args.batches):
        items = [(md, data, len(data), token, shared.copy()) for _ in range(args.items)]
        size += sum(map(len, _enc_message_items(items, [])))
    print(f"{args.batches} batches of {args.items} copies: {size:,} bytes")


if __name__ == "__main__":
    main()
