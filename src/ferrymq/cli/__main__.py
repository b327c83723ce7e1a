"""``python -m ferrymq.cli``: the same as the ``ferrymq`` script (``start`` uses it to spawn the server)."""

from ferrymq.cli.main import main

main()
