"""Where the sandbox finds its importable third-party modules."""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import os
import re
from functools import lru_cache

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution) -> list[str]:
    """Names of the distributions ``dist`` needs at run time (extras are skipped)."""
    names = []
    for req in dist.requires or []:
        if "extra" in req.partition(";")[2]:
            continue
        match = _NAME.match(req)
        if match:
            names.append(match.group(1))
    return names


@lru_cache(maxsize=16)
def module_locations(distributions: tuple[str, ...]) -> dict[str, str]:
    """Top-level import name -> directory holding it, for ``distributions`` and their dependencies.

    Distributions that are not installed are skipped (the program then gets a normal
    ``ModuleNotFoundError``); a name that is not a distribution but an importable top-level module
    is accepted as is.
    """
    tops_of: dict[str, set[str]] = {}
    for top, dists in metadata.packages_distributions().items():
        for dist in dists:
            tops_of.setdefault(_normalise(dist), set()).add(top)
    seen: set[str] = set()
    pending = list(distributions)
    tops: set[str] = set()
    while pending:
        name = _normalise(pending.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            tops.add(name.replace("-", "_"))
            continue
        tops |= tops_of.get(name, set())
        pending.extend(_requirements(dist))
    locations = {}
    for top in sorted(tops):
        if not top.isidentifier():
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        if spec.submodule_search_locations:
            locations[top] = os.path.dirname(list(spec.submodule_search_locations)[0])
        else:
            locations[top] = os.path.dirname(spec.origin)
    return locations
