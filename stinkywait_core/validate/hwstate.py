"""The hardware's wait-relevant state on one path: what is in flight, per counter and register.

Dynamic instances, not static instructions: every issued op gets a sequence number and is
appended to each timeline it is counted on (`Facts.pushes`).  It stays there until the
hardware is *guaranteed* to have retired it there:

* a wait ``C <= N`` on an in-order timeline T of counter C with outstanding o1..om (oldest
  first) retires o1..o(m-N): while oi is outstanding every younger T-op is too, and the other
  kinds counted on C only add to C.  On an out-of-order timeline only ``N == 0`` retires
  anything.  Ops the table does not push only make a real counter larger, so this stays a
  guarantee;
* retiring an op on an in-order timeline retires every older op there too (they completed
  first); an op whose every result timeline retired it is retired everywhere (a result that
  came back was translated, gfx1250 xcnt);
* gfx1250 xcnt: VMEM and SMEM translations are never pending together, so issuing one kind
  retires the other kind's translations (timelines CK_XV / CK_XS);
* a call retires everything that is not store-like (the callee waits on entry and before it
  returns, LLVM's calling convention); stores stay on their result counter, without the
  in-order closure (the callee's own ops would only make the counter larger), but their source
  locks are released: LLVM 22 counts xcnt as drained after a call and at a function's entry
  (its callees overwrite the caller's registers at once, with no ``s_wait_xcnt``).

Registers: `writers[unit]` are the in-flight ops that will still write the unit (late
destinations), `locks[unit]` the in-flight ops still reading it as a source (gfx1250
translation, expcnt).  LDS: `lds` lists the in-flight ops that access LDS; their regions and
engines are static facts; `crossed` the ops issued before the last edge that starts a new trip
for the LDS region model (validate/lds_overlap.py: ping-pong buffers move between trips).  Stale entries (retired ops) are pruned when read.

`Machine.key` gives a canonical form of a state (ops named by static instruction and position,
not by sequence number): two states with the same key have the same future.
"""

from __future__ import annotations

from ..targets.model import CK_COUNT, CK_XS, CK_XV
from ..targets.target import Target
from .hwfacts import Facts, Unit


class State:
    """One path's hardware state (see the module docstring).  `last_wait[counter]` is
    (value, sequence number when executed), for reports only (not part of `Machine.key`)."""

    __slots__ = ("tl", "sid", "mask", "writers", "locks", "lds", "next_seq", "last_wait", "after", "trips",
                 "crossed", "owed", "caller", "fenced", "returns", "route")

    def __init__(self) -> None:
        self.tl: list[list[int]] = [[] for _ in range(CK_COUNT)]
        self.sid: dict[int, int] = {}
        self.mask: dict[int, int] = {}
        self.writers: dict[Unit, tuple[int, ...]] = {}
        self.locks: dict[Unit, tuple[int, ...]] = {}
        self.lds: list[int] = []
        self.next_seq = 0
        self.last_wait: dict[str, tuple[int, int]] = {}
        #: (timelines the next instruction needs drained, the static id of the op needing it)
        self.after: tuple[tuple[int, ...], int] | None = None
        self.trips: dict[int, int] = {}
        #: in-flight ops issued before a trip-starting edge of the LDS region model was taken
        self.crossed: frozenset[int] = frozenset()
        #: accesses left in flight across a barrier (validate/hwpublish.py): tuples (producer
        #: static id, barrier static id, needs items, same trip, next barrier signalled)
        self.owed: tuple = ()
        #: the sequence number of the caller's operations at a callable function's entry (-1: none
        #: or retired): one op per timeline the caller may have left in flight, older than all
        self.caller = -1
        #: LDS accesses that were in flight at an LDS-fence barrier (it published them)
        self.fenced: frozenset[int] = frozenset()
        #: block indices the local subroutine calls on this path return to (innermost last)
        self.returns: tuple[int, ...] = ()
        #: inside a stage-count dispatch: the loop exit edge (block indices) the path came
        #: through, whose proven epilogues alone it may go on to (validate/hwdispatch.py)
        self.route: tuple[int, int] | None = None

    def copy(self) -> "State":
        n = State.__new__(State)
        n.tl = [list(x) if x else [] for x in self.tl]
        n.sid = dict(self.sid)
        n.mask = dict(self.mask)
        n.writers = dict(self.writers)
        n.locks = dict(self.locks)
        n.lds = list(self.lds)
        n.next_seq = self.next_seq
        n.last_wait = dict(self.last_wait)
        n.after = self.after
        n.trips = dict(self.trips)
        n.crossed = self.crossed
        n.owed = self.owed
        n.caller = self.caller
        n.fenced = self.fenced
        n.returns = self.returns
        n.route = self.route
        return n


class Machine:
    """The hardware rules of one target over one function's facts (`facts[sid]`)."""

    __slots__ = ("target", "facts", "in_order", "counter_of", "max_wait", "timelines", "waves")

    def __init__(self, target: Target, facts: list[Facts]) -> None:
        #: the other waves (validate/hwpublish.py WaveView), when LDS addresses are known
        self.waves = None
        self.target = target
        self.facts = facts
        self.timelines = tuple(target.timelines)
        self.in_order = [target.in_order.get(ck, True) for ck in range(CK_COUNT)]
        self.counter_of = [target.counter_of.get(ck, "") for ck in range(CK_COUNT)]
        self.max_wait = list(target.max_wait)

    # ---- queries

    def pending(self, st: State, seq: int) -> bool:
        """The op's result (register write, LDS effect) may still be outstanding."""
        m = st.mask.get(seq)
        if m is None:
            return False
        rm = self.facts[st.sid[seq]].result_mask
        return bool(m & rm) if rm else bool(m)

    def locking(self, st: State, seq: int) -> bool:
        """The op may still read its source registers."""
        m = st.mask.get(seq)
        return m is not None and bool(m & self.facts[st.sid[seq]].lock_mask)

    def need(self, st: State, seq: int, mask: int) -> dict[str, int]:
        """counter -> the largest wait value that retires `seq` on every timeline of `mask`
        still holding it (a value placed right before the current instruction)."""
        m = st.mask.get(seq, 0) & mask
        out: dict[str, int] = {}
        c = 0
        while m:
            if m & 1:
                lst = st.tl[c]
                if self.in_order[c]:
                    v = min(len(lst) - lst.index(seq) - 1, self.max_wait[c])
                else:
                    v = 0
                cn = self.counter_of[c]
                if cn not in out or v < out[cn]:
                    out[cn] = v
            m >>= 1
            c += 1
        return out

    def live(self, st: State, seqs: tuple[int, ...], lock: bool = False) -> tuple[int, ...]:
        test = self.locking if lock else self.pending
        return tuple(s for s in seqs if test(st, s))

    # ---- transitions

    def enter_callee(self, st: State, caller: Facts) -> None:
        """A callable function's entry: its caller's ops (`caller`, a pseudo instruction on every
        timeline the caller may leave in flight) are outstanding, older than anything issued
        here.  One op per timeline is exact for in-order timelines: a wait ``C <= N`` with at
        most N ops of this function behind it retires them all, however many there were."""
        seq = st.next_seq
        st.next_seq += 1
        st.sid[seq] = caller.sid
        st.mask[seq] = caller.push_mask
        for c in caller.pushes:
            st.tl[c].append(seq)
        st.caller = seq

    def _remove(self, st: State, seq: int, c: int, closure: bool) -> None:
        """Retire `seq` on timeline `c` (and, on an in-order timeline with `closure`, every
        older op there); an op whose results all retired is retired everywhere."""
        work = [(seq, c)]
        facts, sid, mask, tl = self.facts, st.sid, st.mask, st.tl
        while work:
            s, c = work.pop()
            m = mask.get(s)
            if m is None or not (m >> c) & 1:
                continue
            lst = tl[c]
            if closure and self.in_order[c]:
                i = lst.index(s)
                gone = lst[:i + 1]
                del lst[:i + 1]
            else:
                lst.remove(s)
                gone = [s]
            for r in gone:
                mr = mask[r] & ~(1 << c)
                if mr == 0:
                    del mask[r]
                    del sid[r]
                    continue
                mask[r] = mr
                rm = facts[sid[r]].result_mask
                if rm and not (mr & rm):
                    b = 0
                    while mr:
                        if mr & 1:
                            work.append((r, b))
                        mr >>= 1
                        b += 1

    def retire_one(self, st: State, seq: int, c: int) -> None:
        """Retire `seq` alone on timeline `c` (no in-order closure)."""
        self._remove(st, seq, c, False)

    def retire_all(self, st: State, c: int) -> None:
        lst = st.tl[c]
        if lst:
            if self.in_order[c]:
                self._remove(st, lst[-1], c, True)
            else:
                for s in list(lst):
                    self._remove(st, s, c, False)

    def wait(self, st: State, f: Facts) -> None:
        """Apply a wait instruction."""
        for cn, v, cks in f.wait:
            for c in cks:
                lst = st.tl[c]
                if not lst:
                    continue
                if self.in_order[c]:
                    drop = len(lst) - v
                    if drop > 0:
                        self._remove(st, lst[drop - 1], c, True)
                elif v == 0:
                    self.retire_all(st, c)
            st.last_wait[cn] = (v, st.next_seq)
        st.next_seq += 1

    def translate_other_kind(self, st: State, f: Facts) -> None:
        """gfx1250: issuing a VMEM (SMEM) op completes the pending SMEM (VMEM) translations."""
        if f.xv and st.tl[CK_XS]:
            self.retire_all(st, CK_XS)
        if f.xs and st.tl[CK_XV]:
            self.retire_all(st, CK_XV)

    def issue(self, st: State, f: Facts) -> int:
        """Issue `f` (after its hazards were checked): counters, registers, LDS."""
        seq = st.next_seq
        st.next_seq += 1
        if f.pushes:
            st.sid[seq] = f.sid
            st.mask[seq] = f.push_mask
            for c in f.pushes:
                st.tl[c].append(seq)
            if f.lds:
                st.lds.append(seq)
            if f.lock_mask:
                for u in f.srcs:
                    old = st.locks.get(u)
                    st.locks[u] = (old + (seq,)) if old else (seq,)
        if f.dsts:
            w = st.writers
            if f.late:
                for u in f.dsts:
                    old = w.get(u)
                    w[u] = (self.live(st, old) + (seq,)) if old else (seq,)
            else:
                for u in f.dsts:
                    if u in w:
                        del w[u]
        return seq

    def call_returned(self, st: State) -> None:
        """After a call: everything but store-like ops is retired, and the stores' source locks
        too (see the module docstring)."""
        for s in list(st.mask):
            f = self.facts[st.sid[s]]
            full = st.mask[s]
            gone = full & f.lock_mask if f.store_like else full
            c = 0
            m = gone
            while m:
                if m & 1:
                    st.tl[c].remove(s)
                m >>= 1
                c += 1
            if gone == full:
                del st.mask[s]
                del st.sid[s]
            else:
                st.mask[s] = full & ~gone

    # ---- memoisation

    def key(self, st: State) -> tuple:
        """Canonical form of everything in `st` that decides its future (not `trips`)."""
        canon: dict[int, int] = {}
        sid = st.sid
        rows = []
        for c in self.timelines:
            lst = st.tl[c]
            if not lst:
                rows.append(())
                continue
            seqs = lst if self.in_order[c] else sorted(lst, key=lambda s: (sid[s], s))
            row = []
            for s in seqs:
                k = canon.get(s)
                if k is None:
                    k = canon[s] = len(canon)
                row.append((sid[s], k, s in st.crossed, s in st.fenced))
            rows.append(tuple(row))
        regs = []
        for u, ws in st.writers.items():
            live = tuple(canon[s] for s in ws if s in canon and self.pending(st, s))
            if live:
                regs.append((u, live))
        regs.sort()
        return (tuple(rows), tuple(regs), st.after, tuple(sorted(st.owed)), st.returns, st.route)
