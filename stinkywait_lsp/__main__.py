"""`stinkywait-lsp` / `python -m stinkywait_lsp`: run the language server over stdio.

stdout belongs to JSON-RPC, so all logging goes to stderr (or `--log-file`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from . import __version__


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="stinkywait-lsp", description=__doc__)
    p.add_argument("--version", action="version", version=f"stinkywait-lsp {__version__}")
    p.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors that pass it)")
    p.add_argument("--log-file", help="write the log here instead of stderr")
    p.add_argument("-v", "--verbose", action="count", default=0, help="-v: info (analysis timings), -vv: debug")
    p.add_argument("--debounce-ms", type=float, default=0.0,
                   help="delay before re-analysing after an edit when no request is waiting "
                        "(default 0: start at once; running jobs coalesce anyway)")
    p.add_argument("--review-process", action="store_true",
                   help="review hand-written waits in a child process (default: on the server's analysis "
                        "thread, incrementally, after a quiet period; a child adds its own memory)")
    p.add_argument("--review-in-process", action="store_true", help=argparse.SUPPRESS)  # the default
    p.add_argument("--automatic-gc", action="store_true",
                   help="leave garbage collection to CPython (default: collect when a version's "
                        "pipeline is done, never between an edit and its hints)")
    return p.parse_args(argv)


#: pygls messages that are routine in any editor session (a client cancels a request the
#: server already answered; a late answer to a request we stopped waiting for): debug only
_ROUTINE = ("Cancel notification for unknown message id", "Received response to unknown message id")


class DemoteRoutine(logging.Filter):
    """Logs the routine pygls messages at DEBUG, so they appear only with -vv."""

    def __init__(self, level: int):
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("pygls") and isinstance(record.msg, str) and record.msg.startswith(_ROUTINE):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return self.level <= logging.DEBUG
        return True


def log_format(to_file: bool, tty: bool) -> str:
    """Editors stamp each stderr line with their own time (VS Code's log channel, Neovim's
    lsp.log): the server adds one only in a file or on a terminal."""
    return ("%(asctime)s " if to_file or tty else "") + "%(levelname)s %(name)s: %(message)s"


def main(argv: list[str] | None = None) -> int:
    """Parse the CLI, set up stderr/file logging, serve until `exit`."""
    args = parse_args(argv)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    handler: logging.Handler = (logging.FileHandler(args.log_file) if args.log_file
                                else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter(log_format(bool(args.log_file), sys.stderr.isatty())))
    handler.addFilter(DemoteRoutine(level))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # pygls logs every message body at INFO; keep it quiet unless debugging
    logging.getLogger("pygls").setLevel(logging.DEBUG if args.verbose >= 2 else logging.WARNING)

    from .server import create_server
    server = create_server(debounce_s=args.debounce_ms / 1000.0, review_process=args.review_process and not args.review_in_process,
                           manage_gc=not args.automatic_gc)
    server.start_io()
    # A worker thread cannot be interrupted, and interpreter shutdown would join it: after
    # `exit`, do not keep the editor waiting for a superseded analysis of a huge file.
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    logging.shutdown()
    try:
        sys.stdout.flush()
    except (ValueError, OSError):  # the transport already closed it
        pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
