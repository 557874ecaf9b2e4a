"""The web plugin's modules depend one way (issue 24): no two import each other, not even
through a function-local import (grimp counts those too)."""

from __future__ import annotations

import itertools

import grimp


def test_no_two_web_modules_import_each_other() -> None:
    graph = grimp.build_graph("adapters", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m.startswith("adapters.web."))
    cycles = [
        (a, b)
        for a, b in itertools.combinations(modules, 2)
        if graph.chain_exists(importer=a, imported=b) and graph.chain_exists(importer=b, imported=a)
    ]
    assert cycles == []
