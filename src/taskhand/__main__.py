"""The `taskhand` program: a signal in its first moments is already a clean stop."""

import signal
import sys


def _stopped_early(signum: int, frame: object) -> None:
    # Before a command has set up its own handling nothing is made yet: end as the signal
    # asks, with one line and the code a shell reports for it, never a traceback.
    sys.stderr.write(f"taskhand: stopped by {signal.Signals(signum).name}\n")
    sys.exit(128 + signum)


def entry() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP first, before the imports that take a while."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _stopped_early)
    from taskhand.cli.main import main

    main()


if __name__ == "__main__":
    entry()
