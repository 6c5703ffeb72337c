"""Per-version stage records: where the time between an edit and its answer goes.

One record per (document, settings generation, version), filled by whoever does a stage:
monotonic timestamps (seconds; `time.monotonic`, the system-wide CLOCK_MONOTONIC on Linux, so
a client on the same machine can line them up with its own clock) and durations in ms.

  recv            the didChange reached the protocol (before pygls applied it)
  changed         our didChange handler ran (document text updated)
  submit          the analysis job was handed to the executor
  start, done     the worker began / finished the job
  collect_ms      a full collection the worker ran first (only when garbage piled up)
  linemap_ms, analyze_ms, analyze_cpu_ms, prepare_ms    the job's stages
  accepted        the loop took the result and released the waiting requests
  hint_recv       the first inlay-hint request answered from this version arrived
  hint_render_ms  rendering it; hint_send_ms / hint_bytes: JSON + write; hint_sent: written
  plan_publish_ms, plan_publish_bytes, plan_published    the plan tier's push (parse and
                  pass diagnostics, missing waits: right after the plan, before the review)
  review_start    the quiet period is over (the review starts or is joined)
  review_wait_ms  quiet period before the review; review_ms / review_cpu_ms: the review
                  (child process); publish_ms / publish_bytes: JSON + write of the push;
                  gc_ms: the collection at the end of the version's pipeline;
                  published: the review tier's push (the full set) was written
  free_old_ms     freeing the superseded snapshots, after this version was answered

`stinkywait/stats` (a custom request) returns them; `benchmarks/bench_lsp.py` reads them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

TraceKey = tuple[str, int, int]


class Traces:
    """The last `keep` version records (oldest dropped first)."""

    def __init__(self, keep: int = 256):
        self.keep = keep
        self._d: OrderedDict[TraceKey, dict[str, Any]] = OrderedDict()

    def of(self, uri: str, key: tuple[int, int]) -> dict[str, Any]:
        """The record of `uri` at (generation, version), created on first use."""
        k = (uri, key[0], key[1])
        rec = self._d.get(k)
        if rec is None:
            rec = self._d[k] = {"uri": uri, "generation": key[0], "version": key[1]}
            while len(self._d) > self.keep:
                self._d.popitem(last=False)
        return rec

    def get(self, uri: str, key: tuple[int, int]) -> dict[str, Any] | None:
        return self._d.get((uri, key[0], key[1]))

    def export(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._d.values()]
