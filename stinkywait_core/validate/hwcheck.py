"""The hardware checker (issue 12): executes a function along its CFG paths with the GPU's
wait-relevant state and reports every point where it could read or keep a stale value.

Independent of the insertion pass by construction: it uses the IR, the front ends and the
per-target facts (`stinkywait_core.targets`: `Target.sem`, `decode_wait`, counters and
timelines), never `waitcnt/` (no dataflow, no per-predecessor queues, no SSA sources).  What
it runs on is a function as it would execute: the pass's output with its waits inserted, or a
hand-written kernel with its own waits.

* The state (validate/hwstate.py): dynamic op instances per timeline, retired only when the
  hardware guarantees it; register units with their in-flight late writers and source locks;
  in-flight LDS accesses with their engine and region.
* The hazards (validate/hwrules.py): raw, waw, war, lds-raw/-waw/-war between engines,
  barrier, isa-drain, return, entry (a callable function touches registers or LDS while its
  caller's operations may be in flight: `hwfacts.caller_facts`).  Each violation names the producer, the consumer, the path
  (block labels from the entry), the wait each counter needs right before the consumer and
  the last wait of that counter the path executed after the producer.
* Paths: depth first from the first block.  Loops are bounded per entry: a loop header may be
  entered at most `max_trips` times through its back edges between two entries from outside.
  Block-entry states are memoised: a state already explored at a block (same in-flight ops by
  static instruction and position, same register and drain state, no more loop budget) has the
  same future, so a loop whose header state repeats is closed without unrolling it further.
  `trip_cut` says whether some path was still cut by the trip bound, `bounded` whether the
  search stopped at `max_paths` / `max_steps`; only with neither is a clean result a proof.
* Tensor fills read back by LDS reads follow the NumWaves policy (`tensor_raw`): "num-waves"
  (the documented default: required when one wave runs per workgroup, and always at a
  barrier) or "always".
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

from ..ir import Function, Instruction, Module
from ..results import Options
from ..targets import Target, get_target
from ..targets.model import CTL_CALL
from .hwfacts import Facts, caller_facts, function_facts
from .hwrules import RULES, check_instruction
from .hwstate import Machine, State
from .lds_overlap import LdsRegionModel, TokenRegions
from .paths import Coverage, TripMemo, block_successors, enter, retreating_edges

TENSOR_RAW_POLICIES = ("num-waves", "always")


class HwViolation:
    """A hazard on at least one path (see the module docstring).

    `needs`: counter -> the largest value of a wait right before `consumer` that makes every
    path found so far safe; `present`: counter -> the last wait of that counter executed after
    the producer on `path` (None: none).  `proven`: the LDS overlap rests on tokens or ranges
    (False: an untagged side, disjointness not shown); register hazards are always proven.
    """

    __slots__ = ("rule", "consumer", "producer", "needs", "present", "path", "detail", "proven", "function")

    def __init__(self, rule: str, consumer: Instruction, producer: Instruction, needs: dict[str, int],
                 present: dict[str, int | None], path: tuple[str, ...], detail: str, proven: bool,
                 function: str) -> None:
        self.rule, self.consumer, self.producer = rule, consumer, producer
        self.needs, self.present, self.path = needs, present, path
        self.detail, self.proven, self.function = detail, proven, function

    def __repr__(self) -> str:
        return (f"<{self.rule} {self.consumer.mnemonic}@{self.consumer.line} <- "
                f"{self.producer.mnemonic}@{self.producer.line} {self.needs}>")


class HwResult(Coverage):
    """Outcome of `check_function` for one function."""

    __slots__ = ("function", "target", "violations", "paths", "states", "steps", "bounded", "trip_cut",
                 "max_trips", "max_paths", "seconds", "retiring")

    def __init__(self, function: str, target: Target, max_trips: int, max_paths: int) -> None:
        self.function = function
        self.target = target
        self.violations: list[HwViolation] = []
        self.paths = self.states = self.steps = 0
        self.bounded = self.trip_cut = False
        self.max_trips, self.max_paths = max_trips, max_paths
        self.seconds = 0.0
        #: with `watch_waits`: the wait instructions that retired something on some visit
        #: (every other wait left every state it met as it was)
        self.retiring: set[Instruction] | None = None

    def by_rule(self) -> dict[str, int]:
        out = {r: 0 for r in RULES}
        for v in self.violations:
            out[v.rule] += 1
        return {r: n for r, n in out.items() if n}


class _Walker:
    """Depth-first path execution of one function (see the module docstring)."""

    def __init__(self, func: Function, target: Target, tensor_raw_required: bool, regions: LdsRegionModel,
                 max_trips: int, max_paths: int, max_steps: int, memoize: bool, num_waves: int | None = None,
                 stop: Callable[[], bool] | None = None, cut_ends: bool = False, watch_waits: bool = False,
                 facts_memo: dict | None = None) -> None:
        self.func = func
        self.blocks = list(func.blocks)
        self.facts_by_id = function_facts(func, target, regions, facts_memo)
        facts = sorted(self.facts_by_id.values(), key=lambda f: f.sid)
        self.caller = caller_facts(len(facts), func, target)
        self.m = Machine(target, facts + ([self.caller] if self.caller is not None else []))
        self.block_facts = [[self.facts_by_id[id(i)] for i in b.instrs if not self.facts_by_id[id(i)].skip]
                            for b in self.blocks]
        self.succs = block_successors(self.blocks)
        self.retreating = retreating_edges(self.succs)
        self.headers = {v for (_, v) in self.retreating}
        self.regions = regions
        lds = getattr(regions, "facts", None)
        if lds is not None:
            from .hwpublish import WaveView
            waves = 1 if num_waves == 1 else lds.launch.waves_per_group
            self.m.waves = WaveView(func, self.succs, lds, waves)
            self.m.waves.lds_of = {id(f.inst): f.lds for f in facts if f.lds}
        #: loop exits whose stage-count dispatch the checker proves (validate/hwdispatch.py):
        #: a path through one goes on to the epilogues it selects only
        if self.m.waves is not None:
            self.ways = self.m.waves.dispatch.ways
        else:
            from .hwdispatch import ExitDispatch
            self.ways = ExitDispatch(func, self.succs).ways
        self.tensor_raw_required = tensor_raw_required
        self.max_trips, self.max_paths, self.max_steps = max_trips, max_paths, max_steps
        #: asked once per path state: true ends the search early (`bounded`: nothing proved)
        self.stop = stop
        #: end the search at the first loop trip cut (the result then proves nothing anyway)
        self.cut_ends = cut_ends
        self.memo = TripMemo(memoize)
        self.found: dict[tuple[int, int, str], HwViolation] = {}
        self.res = HwResult(func.name, target, max_trips, max_paths)
        if watch_waits:
            self.res.retiring = set()
        # the instruction being checked (read by `_report`)
        self._f: Facts | None = None
        self._st: State | None = None
        self._path: tuple[str, ...] = ()

    def _seen(self, bi: int, st: State) -> bool:
        return self.memo.seen((bi, self.m.key(st)), st.trips)

    def _report(self, rule: str, seq: int, detail: str, needs: dict[str, int], proven: bool,
                at: int | None = None, psid: int | None = None) -> None:
        """A violation at the instruction being checked (`at`: at that static instruction
        instead, for a barrier's obligation; `psid`: the producer's static id)."""
        f, st = self._f, self._st
        if at is not None:
            f = self.m.facts[at]
        pf = self.m.facts[st.sid[seq] if psid is None else psid]
        key = (f.sid, pf.sid, rule)
        old = self.found.get(key)
        if old is None:
            present = {}
            for cn in needs:
                lw = st.last_wait.get(cn)
                present[cn] = lw[0] if lw is not None and lw[1] > seq else None
            self.found[key] = HwViolation(rule, f.inst, pf.inst, dict(needs), present, self._path, detail, proven,
                                          self.func.name)
            return
        for cn, v in needs.items():
            if cn not in old.needs or v < old.needs[cn]:
                old.needs[cn] = v

    def _local_successors(self, bi: int, st: State, control: str) -> list[int]:
        """Where a call of a subroutine of the function goes (its callee; the path remembers
        the block after the call), and where its return goes (that block: the path returns
        where it was called from; every return edge when the path entered the subroutine
        without a call)."""
        succs = self.succs[bi]
        if control == CTL_CALL:
            nxt = bi + 1
            st.returns = st.returns + (nxt,)
            return [v for v in succs if v != nxt] or succs
        if st.returns and st.returns[-1] in succs:
            back = st.returns[-1]
            st.returns = st.returns[:-1]
            return [back]
        return succs

    def _dispatch_successors(self, bi: int, st: State, succs: list[int]) -> list[int]:
        """Inside a proven dispatch, the successors on the way to the path's epilogues."""
        way = self.ways.get(st.route) if st.route is not None else None
        if way is None:
            return succs
        return [v for v in succs if v in way[0] or v in way[1]]

    def _route_after(self, bi: int, v: int, route: tuple[int, int] | None) -> tuple[int, int] | None:
        """The route of a path that takes the edge bi -> v."""
        if (bi, v) in self.ways:
            return (bi, v)
        way = self.ways.get(route) if route is not None else None
        return route if way is not None and v in way[0] else None

    def run(self) -> HwResult:
        t0 = time.perf_counter()
        res = self.res
        if self.blocks:
            self._explore()
        res.violations = sorted(self.found.values(), key=lambda v: (v.consumer.line, v.producer.line,
                                                                     RULES.index(v.rule)))
        res.seconds = time.perf_counter() - t0
        return res

    def _explore(self) -> None:
        res, m = self.res, self.m
        init = State()
        if self.caller is not None:
            m.enter_callee(init, self.caller)
        if 0 in self.headers:
            init.trips[0] = 1
        work: list[tuple[int, State, tuple[str, ...]]] = [(0, init, ())]
        check = check_instruction
        regions, treq, report = self.regions, self.tensor_raw_required, self._report
        retiring = res.retiring
        while work:
            bi, st, path = work.pop()
            if self._seen(bi, st):
                res.paths += 1
                continue
            if st.trips.get(bi, 0) > self.max_trips:
                res.trip_cut = True
                res.paths += 1
                if self.cut_ends:
                    break  # the caller wants a proof only, and a cut search is none
                continue
            res.states += 1
            path = path + (self.blocks[bi].label,)
            self._st, self._path = st, path
            ended = False
            local = ""
            for f in self.block_facts[bi]:
                res.steps += 1
                if f.wait:
                    if retiring is None or f.inst in retiring:
                        m.wait(st, f)
                    else:
                        held = sum(map(len, st.tl))
                        m.wait(st, f)
                        if sum(map(len, st.tl)) != held:
                            retiring.add(f.inst)
                    continue
                m.translate_other_kind(st, f)
                self._f = f
                check(m, st, f, regions, treq, report)
                m.issue(st, f)
                if f.drain_after:
                    st.after = (f.drain_after, f.sid)
                if f.is_call:
                    m.call_returned(st)
                local = f.local
                if f.ends_path:
                    ended = True
                    break
            succs = self._local_successors(bi, st, local) if local else self.succs[bi]
            if st.route is not None or self.ways:
                succs = self._dispatch_successors(bi, st, succs)
            if ended or not succs:
                res.paths += 1
            else:
                nexts = []
                route = st.route
                for k, v in enumerate(succs):
                    nst = st if k == len(succs) - 1 else st.copy()
                    enter(nst.trips, bi, v, self.headers, self.retreating)
                    if self.ways:
                        nst.route = self._route_after(bi, v, route)
                    if regions.crosses(self.blocks[bi], self.blocks[v]):
                        nst.crossed = frozenset(nst.mask)
                        if nst.owed:
                            nst.owed = tuple(ob[:3] + (False, ob[4]) for ob in nst.owed)
                    nexts.append((v, nst, path))
                work.extend(reversed(nexts))  # first successor first: deterministic reports
            if res.paths > self.max_paths or res.steps > self.max_steps or (self.stop is not None and self.stop()):
                res.bounded = True
                break


def _target_of(options: Options, target: Target | str | None) -> Target:
    if isinstance(target, Target):
        return target
    return get_target(target or options.arch, "hw")


def check_function(func: Function, options: Options | None = None, *, target: Target | str | None = None,
                   num_waves: int | None = None, tensor_raw: str = "num-waves", max_trips: int = 2,
                   max_paths: int = 20000, max_steps: int = 5_000_000, regions: LdsRegionModel | None = None,
                   memoize: bool = True, stop: Callable[[], bool] | None = None,
                   proof_only: bool = False, watch_waits: bool = False, facts_memo: dict | None = None) -> HwResult:
    """Check `func` on every path under the hardware model of `target` (default: the
    options' arch).  `num_waves` (default: the options') and `tensor_raw` (one of
    TENSOR_RAW_POLICIES) decide the tensor-fill RAW policy; `regions` the LDS overlap model
    (memtokens by default).  `memoize=False` enumerates paths literally (for tests).  `stop`:
    asked once per path state, true ends the search early, as a spent budget does (the
    review's caller moved on, interrupt.py).  `proof_only`: the caller uses the result only if
    it is a proof, so the search ends at the first loop trip it has to cut (`trip_cut`, its
    violations incomplete).  `watch_waits`: record which waits retired anything
    (`HwResult.retiring`).  `facts_memo`: a dict kept by a caller that checks versions of one
    document parsed from each other (unchanged lines keep their objects): each instruction's
    own facts are taken from the last run that met it (hwfacts.function_facts).  The function
    is not modified."""
    opts = options or Options()
    if tensor_raw not in TENSOR_RAW_POLICIES:
        raise ValueError(f"tensor_raw must be one of {TENSOR_RAW_POLICIES}")
    waves = opts.num_waves if num_waves is None else num_waves
    treq = tensor_raw == "always" or waves == 1
    return _Walker(func, _target_of(opts, target), treq, regions or TokenRegions(), max(1, max_trips), max_paths,
                   max_steps, memoize, waves, stop, proof_only, watch_waits, facts_memo).run()


def check_module(module: Module, options: Options | None = None, lds_addresses: bool = False,
                 **kw) -> list[HwResult]:
    """`check_function` over every function of a parsed module, in file order.  With
    `lds_addresses`, LDS overlap the tokens do not decide is asked of the LDS address
    analysis (validate/lds_overlap.py `AddressRegions`)."""
    if lds_addresses and "regions" not in kw:
        from ..analysis.lds_facts import module_facts
        from .lds_overlap import AddressRegions
        opts = options or Options()
        facts = module_facts(module, _target_of(opts, kw.get("target")).name)
        return [check_function(f, options, regions=AddressRegions(facts[f]), **kw) for f in module.functions]
    return [check_function(f, options, **kw) for f in module.functions]
