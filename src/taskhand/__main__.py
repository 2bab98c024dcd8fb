"""The `taskhand` program: a signal in its first moments is already a clean stop."""

import os
import signal
import sys


def _stopped(signum: int) -> None:
    # Where a command has not set up its own handling, end at once, as the signal's default
    # would (an exception raised here could surface anywhere, even inside an import), but
    # with one line and the code a shell reports for it, never a traceback.
    sys.stderr.write(f"taskhand: stopped by {signal.Signals(signum).name}\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def entry() -> None:
    """Handle SIGTERM and SIGHUP first, before the imports that take a while (SIGINT is
    Python's KeyboardInterrupt, which the commands handle, and the imports here)."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, lambda n, _: _stopped(n))
    try:
        from taskhand.cli.main import main
    except KeyboardInterrupt:
        _stopped(signal.SIGINT)
    main()


if __name__ == "__main__":
    entry()
