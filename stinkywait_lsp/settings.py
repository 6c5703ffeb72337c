"""Client settings (section `stinkywait`) and their translation into core `Options`.

Settings arrive as untyped JSON from `workspace/configuration`, `didChangeConfiguration` or
`initializationOptions`; a value of the wrong type is ignored (and reported back to the caller)
instead of being passed to the pass, because bad input must never take the server down.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from stinkywait_core.results import Options

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
}


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user can change live; everything else keeps the core's defaults."""

    num_waves: int = _CORE.num_waves
    enable_loop_carried_token_deps: bool = _CORE.enable_loop_carried_token_deps
    enable_tensor_descriptor_war: bool = _CORE.enable_tensor_descriptor_war
    optimize: bool = _CORE.optimize
    arch: str = _CORE.arch

    def to_options(self) -> Options:
        return Options(num_waves=self.num_waves, arch=self.arch,
                       enable_loop_carried_token_deps=self.enable_loop_carried_token_deps,
                       enable_tensor_descriptor_war=self.enable_tensor_descriptor_war,
                       optimize=self.optimize)

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
            if typ is int and value < 0:
                problems.append(f"{SECTION}.{key}: must be >= 0, got {value}")
                continue
            if typ is str and not value.strip():
                problems.append(f"{SECTION}.{key}: must not be empty")
                continue
            changes[name] = value
        return replace(self, **changes), problems

    def to_json(self) -> dict[str, Any]:
        by_field = {name: key for key, (name, _) in _KEYS.items()}
        return {by_field[f.name]: getattr(self, f.name) for f in fields(self)}


def section_of(raw: Any) -> Any:
    """The `stinkywait` object inside a settings payload that may or may not be wrapped in
    its section name (VS Code sends `{"stinkywait": {...}}`, others send the bare object)."""
    if isinstance(raw, dict) and SECTION in raw:
        return raw[SECTION]
    return raw
