"""Plain slotted record classes: what `@dataclass(slots=True)` generates, without its cost.

Every `stinkywait` process imports the IR, the diagnostics and the result records before it
can do anything; generating their methods with `dataclasses` cost about half a millisecond per
class (it compiles each `__init__`/`__eq__`/`__repr__` from source).  These two bases give the
same behaviour from hand-written `__init__` methods:

* `Record`: `__eq__` compares all fields when the other object has the same class (as a
  dataclass with ``eq=True``), `__repr__` is ``Name(field=value, ...)``, instances are
  unhashable (a mutable dataclass sets ``__hash__ = None``), and pickle/copy rebuild them
  with one constructor call;
* `FrozenRecord`: the same, plus hashing by field values and no assignment after
  construction (``frozen=True``); subclasses set their fields with ``_set(self, name, v)``
  (hot ones with their slots' setters, `slot_setters`).

A subclass lists its fields, in order, as its ``__slots__``, and its `__init__` takes them in
that order.
"""

from __future__ import annotations

from operator import attrgetter

__all__ = ["Record", "FrozenRecord", "FrozenInstanceError", "record_fields", "slot_setters", "DataclassFields"]

_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Raised on assignment to a field of a frozen record (as `dataclasses.FrozenInstanceError`)."""


def slot_setters(cls: type) -> tuple:
    """The ``__set__`` of each of a record class's slots, in field order.

    What the `__init__` of a frozen record made by the thousand (registers, immediates) sets
    its fields with: calling a slot's own setter is three times faster than
    ``object.__setattr__(self, name, value)``, which looks the name up first."""
    return tuple(getattr(cls, name).__set__ for name in cls.__slots__)  # type: ignore[attr-defined]


def record_fields(cls: type) -> tuple[str, ...]:
    """The field names of a record class, in declaration order."""
    return cls.__slots__  # type: ignore[attr-defined, no-any-return]


class Record:
    """Base of mutable records compared by value (see the module docstring)."""

    __slots__ = ()
    _key = staticmethod(lambda self: ())

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        names = cls.__dict__.get("__slots__", ())
        if isinstance(names, str):
            names = (names,)
        get = attrgetter(*names) if names else None
        if len(names) == 1:
            one = get
            cls._key = staticmethod(lambda self: (one(self),))  # type: ignore[misc]
        elif names:
            cls._key = get  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key(self) == other._key(other)  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__qualname__}({inner})"

    def __reduce__(self) -> tuple:
        # pickle and copy as one constructor call with the fields in order (every subclass's
        # `__init__` takes them so): compact, and much faster to load than field by field
        return type(self), self._key(self)


class FrozenRecord(Record):
    """Base of immutable, hashable records (see the module docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _assign(self, *values: object) -> None:
        """Set every field, in `__slots__` order (for `__init__` of records made rarely; hot
        ones set their fields one by one, which is faster)."""
        for name, value in zip(self.__slots__, values):
            _set(self, name, value)


class DataclassFields:
    """A record's ``__dataclass_fields__``, made on first use.

    Lets `dataclasses.replace`, `fields`, `asdict` and `is_dataclass` treat a record that
    used to be a dataclass as one, without importing `dataclasses` (and `inspect` behind it,
    ~8 ms) at every start-up.  The fields are real `dataclasses.Field` objects with the
    defaults of the class's `__init__`; the first access replaces this descriptor with them.
    """

    def __get__(self, obj: object, cls: type) -> dict:
        import dataclasses
        import inspect
        fields = {}
        params = inspect.signature(cls.__init__).parameters
        annotations = getattr(cls, "__annotations__", {})
        for name in cls.__slots__:  # type: ignore[attr-defined]
            default = params[name].default
            f = dataclasses.field(default=dataclasses.MISSING if default is inspect.Parameter.empty else default)
            f.name = name
            f.type = annotations.get(name, "Any")
            f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what @dataclass sets
            fields[name] = f
        cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
        return fields
