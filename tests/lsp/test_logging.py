"""The server's log as an editor shows it: one line per record, no time stamp of its own on
a pipe (the editor adds one), routine pygls chatter only at debug level."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as T

from stinkywait_lsp.__main__ import DemoteRoutine, log_format

from .conftest import DATA


def _record(msg: str, level: int = logging.WARNING, name: str = "pygls.protocol.json_rpc") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, ("7",), None)


def test_routine_pygls_messages_are_debug_only():
    quiet, verbose = DemoteRoutine(logging.WARNING), DemoteRoutine(logging.DEBUG)
    rec = _record('Cancel notification for unknown message id "%s"')
    assert quiet.filter(rec) is False
    rec = _record('Cancel notification for unknown message id "%s"')
    assert verbose.filter(rec) is True and rec.levelname == "DEBUG"
    assert quiet.filter(_record('Received response to unknown message id "%s"')) is False
    # everything else passes untouched
    other = _record("Unable to deserialize message")
    assert quiet.filter(other) is True and other.levelname == "WARNING"
    mine = _record("Cancel notification for unknown message id", name="stinkywait_lsp.server")
    assert quiet.filter(mine) is True


def test_no_time_stamp_on_a_pipe():
    assert "asctime" not in log_format(to_file=False, tty=False)
    assert "asctime" in log_format(to_file=True, tty=False) and "asctime" in log_format(to_file=False, tty=True)
    rec = logging.LogRecord("stinkywait_lsp.snapshot", logging.WARNING, __file__, 1, "x", None, None)
    line = logging.Formatter(log_format(False, False)).format(rec)
    assert line == "WARNING stinkywait_lsp.snapshot: x"


async def test_a_cancel_for_an_answered_request_is_not_logged(nvim, capfd):
    uri, _ = nvim.open_file(DATA / "sample.s")
    await nvim.hints(uri)
    for msg_id in (1, 2, "gone"):
        nvim.client.protocol.notify(T.CANCEL_REQUEST, T.CancelParams(id=msg_id))
    assert await nvim.hints(uri)
    await asyncio.sleep(0.2)
    err = capfd.readouterr().err
    assert "Cancel notification" not in err
    assert "\n\n" not in err
