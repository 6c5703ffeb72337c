"""Client settings (section `stinkywait`): the core's `Options` and how results are shown.

Settings arrive as untyped JSON from `workspace/configuration`, `didChangeConfiguration` or
`initializationOptions`, nested (`{"hints": {"label": "compact"}}`, what VS Code sends) or with
dotted keys (`{"hints.label": "compact"}`); a value of the wrong type or outside its choices is
ignored (and reported back to the caller) instead of being passed on, because bad input must
never take the server down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from stinkywait_core.findings import DEFAULT_SEVERITY, LEVELS
from stinkywait_core.results import Options

from .retention import DEFAULT_KEEP

SECTION = "stinkywait"

#: the core's defaults (an immutable value, read for the defaults below)
_CORE = Options()

#: client key -> (Settings field, expected Python type)
_KEYS: dict[str, tuple[str, type]] = {
    "numWaves": ("num_waves", int),
    "enableLoopCarriedTokenDeps": ("enable_loop_carried_token_deps", bool),
    "enableTensorDescriptorWar": ("enable_tensor_descriptor_war", bool),
    "optimize": ("optimize", bool),
    "arch": ("arch", str),
    "coalesceWindow": ("coalesce_window", int),
    "keepAnalyses": ("keep_analyses", int),
}
#: int keys that also take -1 ("the core's default")
_DEFAULTABLE = frozenset({"coalesceWindow"})

HINT_LABELS = ("detailed", "compact")
HINT_POSITIONS = ("beforeInstruction", "endOfPreviousLine")
#: client key -> (View field, allowed values)
_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "hints.label": ("hint_label", HINT_LABELS),
    "hints.position": ("hint_position", HINT_POSITIONS),
}
#: spellings of the severity levels a client may send (VS Code's own word is "information")
_LEVEL_ALIASES = {"information": "info", "none": "off"}


@dataclass(frozen=True, slots=True)
class View:
    """How results are shown (no effect on the plan): the hint label style, where hints sit,
    and the severity of each kind of review finding (`stinkywait_core.findings`)."""

    hint_label: str = "detailed"
    hint_position: str = "beforeInstruction"
    severity: tuple[tuple[str, str], ...] = tuple(sorted(DEFAULT_SEVERITY.items()))

    @property
    def severities(self) -> dict[str, str]:
        return dict(self.severity)


def _lookup(raw: dict, dotted: str) -> Any:
    """`raw["hints"]["label"]`, or `raw["hints.label"]` (None when absent)."""
    if dotted in raw:
        return raw[dotted]
    node: Any = raw
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user can change live; everything else keeps the core's defaults."""

    num_waves: int = _CORE.num_waves
    enable_loop_carried_token_deps: bool = _CORE.enable_loop_carried_token_deps
    enable_tensor_descriptor_war: bool = _CORE.enable_tensor_descriptor_war
    optimize: bool = _CORE.optimize
    arch: str = _CORE.arch
    coalesce_window: int = _CORE.coalesce_window
    #: folders searched for `.include` after the including file's own
    include_paths: tuple[str, ...] = ()
    #: `stinkywait.latencyModel`: a JSON/TOML file of latency-model overrides, or the overrides
    #: inline as an object (targets/latency.py); what it says, flattened
    latency_overrides: tuple = _CORE.latency_overrides
    view: View = field(default_factory=View)
    #: `stinkywait.keepAnalyses`: how many documents besides the one worked on keep their
    #: analysis (the others' are dropped and made again when asked about; no effect on results)
    keep_analyses: int = DEFAULT_KEEP

    def same_results(self, other: "Settings") -> bool:
        """Whether `other` differs from these settings only in what cannot change a result
        (the memory budget): no re-analysis needed."""
        return replace(self, keep_analyses=other.keep_analyses) == other

    def to_options(self) -> Options:
        return Options(num_waves=self.num_waves, arch=self.arch,
                       enable_loop_carried_token_deps=self.enable_loop_carried_token_deps,
                       enable_tensor_descriptor_war=self.enable_tensor_descriptor_war,
                       optimize=self.optimize, coalesce_window=self.coalesce_window,
                       include_paths=self.include_paths, latency_overrides=self.latency_overrides)

    def merged(self, raw: Any) -> tuple["Settings", list[str]]:
        """These settings updated from a client JSON object; returns (settings, problems).

        Unknown keys are ignored silently (other tools may share the section); known keys
        with a wrong type or an out-of-range value are skipped and listed in `problems`.
        """
        if raw is None:
            return self, []
        if not isinstance(raw, dict):
            return self, [f"settings '{SECTION}' must be an object, got {type(raw).__name__}"]
        changes: dict[str, Any] = {}
        problems: list[str] = []
        for key, (name, typ) in _KEYS.items():
            if key not in raw or raw[key] is None:
                continue
            value = raw[key]
            # bool is an int subclass: a JSON `true` is not a wave count
            if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
                problems.append(f"{SECTION}.{key}: expected {typ.__name__}, got {value!r}")
                continue
            low = -1 if key in _DEFAULTABLE else 0
            if typ is int and value < low:
                problems.append(f"{SECTION}.{key}: must be >= {low}, got {value}")
                continue
            if typ is str and not value.strip():
                problems.append(f"{SECTION}.{key}: must not be empty")
                continue
            changes[name] = value
        paths = raw.get("includePaths")
        if paths is not None:
            if isinstance(paths, list) and all(isinstance(p, str) for p in paths):
                changes["include_paths"] = tuple(os.path.expanduser(p) for p in paths if p.strip())
            else:
                problems.append(f"{SECTION}.includePaths: expected a list of folder names, got {paths!r}")
        if "latencyModel" in raw:
            overrides, problem = _latency_overrides(raw["latencyModel"])
            if problem:
                problems.append(problem)
            else:
                changes["latency_overrides"] = overrides
        view, view_problems = _merged_view(self.view, raw)
        problems.extend(view_problems)
        if view != self.view:
            changes["view"] = view
        return replace(self, **changes), problems

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {key: getattr(self, name) for key, (name, _) in _KEYS.items()}
        out["includePaths"] = list(self.include_paths)
        out["latencyModel"] = dict(self.latency_overrides)
        out["hints"] = {"label": self.view.hint_label, "position": self.view.hint_position}
        out["severity"] = self.view.severities
        return out


def _latency_overrides(value: Any) -> tuple[tuple, str | None]:
    """`stinkywait.latencyModel` -> (overrides, problem): a file path ("" or null: none), or an
    object of overrides; a bad file is reported with its location, the old overrides stay."""
    from stinkywait_core.targets.latency import LatencyModelError, load_overrides, parse_overrides
    try:
        if value is None or value == "":
            return (), None
        if isinstance(value, str):
            return load_overrides(value), None
        if isinstance(value, dict):
            import json
            return parse_overrides(json.dumps(value, indent=1), f"{SECTION}.latencyModel"), None
    except LatencyModelError as exc:
        return (), f"{SECTION}.latencyModel: {exc}"
    return (), f"{SECTION}.latencyModel: expected a file path or an object, got {value!r}"


def _merged_view(view: View, raw: dict) -> tuple[View, list[str]]:
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, (name, allowed) in _CHOICES.items():
        value = _lookup(raw, key)
        if value is None:
            continue
        if value not in allowed:
            problems.append(f"{SECTION}.{key}: expected one of {', '.join(allowed)}, got {value!r}")
            continue
        changes[name] = value
    sev = _lookup(raw, "severity")
    if sev is not None:
        if not isinstance(sev, dict):
            problems.append(f"{SECTION}.severity: expected an object, got {sev!r}")
        else:
            levels = view.severities
            for kind, value in sev.items():
                if kind not in DEFAULT_SEVERITY:
                    problems.append(f"{SECTION}.severity: unknown kind {kind!r} "
                                    f"(one of {', '.join(sorted(DEFAULT_SEVERITY))})")
                    continue
                level = _LEVEL_ALIASES.get(value, value) if isinstance(value, str) else value
                if level not in LEVELS:
                    problems.append(f"{SECTION}.severity.{kind}: expected one of "
                                    f"error, warning, information, hint, off; got {value!r}")
                    continue
                levels[kind] = level
            changes["severity"] = tuple(sorted(levels.items()))
    return (replace(view, **changes) if changes else view), problems


def section_of(raw: Any) -> Any:
    """The `stinkywait` object inside a settings payload that may or may not be wrapped in
    its section name (VS Code sends `{"stinkywait": {...}}`, others send the bare object)."""
    if isinstance(raw, dict) and SECTION in raw:
        return raw[SECTION]
    return raw
