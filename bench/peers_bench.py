"""ferrymq side by side with RabbitMQ, NATS and Mosquitto: the same as ``ferrymq bench``.

    .venv/bin/python bench/peers_bench.py --n 20000 --rr 2000 --repeat 3
"""

from ferrymq.cli.main import main

if __name__ == "__main__":
    import sys

    sys.argv[1:1] = ["bench"]
    main()
