"""WaitDataflow's LDS questions: which timelines carry LDS traffic, disjointness and publish answers.

The LDS timelines (and the engines each carries) bound the hardware LDS scan.  Disjointness
of two untagged LDS accesses is asked of the address analysis (analysis/lds_facts.py) once
per version; the answers a memoised walk depended on are logged with it, so a reused walk is
reused only while every answer still holds.  A previous version's answer whose addresses an
edit cannot have changed is taken as it is (waitcnt/lds_reuse.py).
"""

from __future__ import annotations

from ..ir import Instruction
from .lds_reuse import remember, reusable


class LdsQueries:
    """LDS timelines and disjointness answers (see the module doc)."""

    def _lds_timelines(self, delta: tuple | None = None) -> None:
        """`lds_cks` and `lds_engines` from how many LDS ops of each engine each timeline
        carries, counted over every instruction's facts, or, with `delta` = (the facts gone,
        the facts new) since the previous version, from the counts it left (`memo.lds_counts`,
        kept with the facts dict they count): an edit costs its instructions, not the function."""
        if not self.hw:
            return
        memo = self.memo
        kept = memo.lds_counts if memo is not None and delta is not None else None
        if kept is not None and kept[0] is memo.infos:
            counts = dict(kept[1])
            gone, new = delta
            _tally(counts, gone, -1)
            _tally(counts, new, 1)
        else:
            counts = {}
            _tally(counts, self.info.values(), 1)
        if memo is not None:
            memo.lds_counts = (self.info, counts)
        engines: dict[int, set[str]] = {}
        for (c, engine), n in counts.items():
            if n:
                engines.setdefault(c, set()).add(engine)
        self.lds_cks = tuple(c for c in self.cks if c in engines)
        #: the LDS engines whose ops each of those timelines carries (a scan for an access of
        #: engine e skips a timeline that carries e only: one engine is ordered with itself)
        self.lds_engines = {c: frozenset(e) for c, e in engines.items()}

    def _facts(self):
        if self._lds is None and self.lds_source is not None:
            self._lds = self.lds_source() or False
            if self._lds and self.memo is not None:
                self._reused = reusable(self.memo.lds_answers, self._edited, self._lds)
        return self._lds or None

    def remember_lds(self) -> None:
        """Leave this version's disjointness answers to the next (waitcnt/lds_reuse.py)."""
        if self.memo is not None:
            self.memo.lds_answers = remember(self._pairs, self._reused, self.memo.lds_answers, self._lds or None)
            if self._publish is None and self.memo.publish is not None:
                self.memo.publish.wave = None  # (no publish question this version: nothing to carry)

    def lds_disjoint(self, a: Instruction, b: Instruction, same_trip: bool) -> bool:
        """The address analysis proves the LDS accesses of `a` and `b` disjoint (the answer is
        logged for the walks being memoised)."""
        ans = self._disjoint(a, b, same_trip)
        if self._qlogs:
            q = (a, b, same_trip, ans)
            for log in self._qlogs:
                log.append(q)
        return ans

    def lds_published(self, p: Instruction, barrier: Instruction, same_trip: bool) -> bool:
        """`p` may stay in flight across `barrier`: no other wave touches its LDS bytes
        before the next barrier (waitcnt/publish.py; the answer is logged like `lds_disjoint`'s)."""
        ans = self._published(p, barrier, same_trip)
        if self._qlogs:
            q = (p, barrier, same_trip, ans, True)
            for log in self._qlogs:
                log.append(q)
        return ans

    def _published(self, p: Instruction, barrier: Instruction, same_trip: bool) -> bool:
        key = (p, barrier, same_trip, "publish")
        ans = self._pairs.get(key)
        if ans is None:
            facts = self._facts()
            if facts is None or facts.access(p) is None:
                ans = False
            else:
                if self._publish is None:
                    from .publish import Publish, PublishCache
                    cache = None
                    if self.memo is not None:
                        cache = self.memo.publish = self.memo.publish or PublishCache()
                    waves = 1 if self.options.num_waves == 1 else facts.launch.waves_per_group
                    self._publish = Publish(self.func, self.cfg, facts, self.info, cache, waves, self._edited)
                ans = self._publish.published(p, barrier, same_trip)
            self._pairs[key] = ans
        return ans

    def lds_why(self, a: Instruction, b: Instruction, same_trip: bool) -> str:
        """Why `a` and `b` could not be proven disjoint ("" without an address analysis)."""
        facts = self._facts()
        return facts.why_not_proven(a, b, same_trip) if facts is not None else ""

    def _disjoint(self, a: Instruction, b: Instruction, same_trip: bool) -> bool:
        """The analysis' answer for the pair, asked once per version (`_pairs`)."""
        key = (a, b, same_trip)
        ans = self._pairs.get(key)
        if ans is None:
            facts = self._facts()
            ans = self._reused.get(key)
            if ans is not None:
                self._pairs[key] = ans
                return ans
            # the machine model says both touch LDS: an access the address analysis does not
            # recognise is unknown, never "no LDS memory"
            ans = self._pairs[key] = (facts is not None and facts.access(a) is not None
                                      and facts.access(b) is not None and not facts.may_overlap(a, b, same_trip))
        return ans

    def queries_hold(self, queries) -> bool:
        """A memoised walk's disjointness answers are still this version's."""
        if not queries:
            return True
        pairs = self._pairs
        for q in queries:
            if len(q) == 4:  # (a disjointness answer: this version's, when already asked, inline)
                a, b, same_trip, ans = q
                got = pairs.get((a, b, same_trip))
                if (got if got is not None else self._disjoint(a, b, same_trip)) != ans:
                    return False
            elif q[3] != self._published(q[0], q[1], q[2]):
                return False
        return True

    def recording(self) -> list:
        """Start logging disjointness answers for a walk being memoised (see `done`)."""
        log: list = []
        self._qlogs.append(log)
        return log

    def done(self, log: list) -> tuple:
        for i, active in enumerate(self._qlogs):
            if active is log:  # (by identity: two logs with equal contents are different walks)
                del self._qlogs[i]
                break
        return tuple(log)

    def _relog(self, queries) -> None:
        """A reused walk's answers belong to the enclosing walks being recorded too."""
        if queries and self._qlogs:
            for log in self._qlogs:
                log.extend(queries)


def _tally(counts: dict, infos, step: int) -> None:
    """Add `step` to `counts[(timeline, engine)]` for each LDS op's timeline among `infos`."""
    for inf in infos:
        if inf.lds:
            for c in inf.results:
                counts[c, inf.engine] = counts.get((c, inf.engine), 0) + step
