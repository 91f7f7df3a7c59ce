"""A stand-in for torch, which LensKit imports at start and its list metrics (ExposureGini, ListGini) never call:
every name is an object that absorbs attribute access, calls, subscripts and decorations. On the path of
benchmarks/peers/fairness_lenskit.py only; the golden case's LensKit values were computed the same way
(tests/fixtures/fairness/expected.json, peers.lenskit)."""

from __future__ import annotations

from typing import Any


class _Anything:
    def __getattr__(self, name: str) -> _Anything:
        return _Anything()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:  # a decorator
            return args[0]
        return _Anything()

    def __getitem__(self, key: Any) -> _Anything:
        return _Anything()

    def __or__(self, other: Any) -> _Anything:
        return _Anything()

    __ror__ = __or__

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class Tensor:  # what LensKit's arrays ask isinstance() about: nothing here is one
    pass


def __getattr__(name: str) -> _Anything:
    return _Anything()
