"""The site and group pickers at LAUSD's size: a thousand schools in six local districts.

Times, for a set of queries as an admin types them (a letter, a prefix, two words in
Spanish, a code, nothing matching, odd characters):
- one lookup in the index (`PlaceIndex.find`, 25 results as Discord takes, 100 as Slack);
- the same through `Commands.find_places` on a SQLite store (what both plugins call: the
  public version read once, the index from memory);
- building the index after an import (reading the sites and indexing them);
- the naive peer: fold and match every name on every lookup, with no index;
- an options request end to end through Slack's HTTP mode (signed, real slack-bolt on
  127.0.0.1, the fake Web API): what Slack's 3-second timer sees.

    .venv/bin/python -m bench.pickers [--sites 1000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.audiences import PlaceIndex, SiteFile, Sites
from bot.audiences.picker import fold, words
from bot.clock import utcnow
from bot.store import Store
from tests.fakes.slack import FakeSlack, SlackBot, interaction_body
from tests.picker_support import many_places
from tests.support import ADMIN, ADMINS

QUERIES = (
    ("", "en"),
    ("r", "en"),
    ("roos", "en"),
    ("prepa roos", "es"),
    ("jose marti acad", "en"),
    ("s05", "en"),
    ("zzzz", "en"),
    ("Roosevelt'; DROP", "en"),
)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1e6)
    return out


def naive(places: list[Any], query: str, language: str, limit: int) -> list[str]:
    wanted = words(query)
    found = []
    for place in places:
        name = " ".join(words(place.names.get(language) or next(iter(place.names.values()))))
        own = name.split() + words(place.code)
        if all(any(w.startswith(q) for w in own) for q in wanted):
            found.append((fold(name), place.code))
    return [code for _, code in sorted(found)[:limit]]


def line(label: str, micros: list[float]) -> str:
    ordered = sorted(micros)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"| {label} | {statistics.median(ordered):,.1f} µs | {p99:,.1f} µs |"


async def run(sites: int, repeat: int) -> None:
    groups, found = many_places(sites)
    index = PlaceIndex(groups, found)
    print(f"{len(found):,} sites in {len(groups)} groups; median and p99 of {repeat} lookups\n")
    print("| lookup | median | p99 |\n|---|---|---|")
    for query, lang in QUERIES:
        for limit in (25, 100):
            micros = timed(functools.partial(index.find, query, lang, limit=limit), repeat)
            n = len(index.find(query, lang, limit=limit))
            print(line(f"index, {query!r} ({lang}), {n} of at most {limit}", micros))
    everything = [*groups, *found]
    for query, lang in QUERIES[2:4]:
        scan = functools.partial(naive, everything, query, lang, 25)
        micros = timed(scan, max(repeat // 10, 5))
        print(line(f"naive scan, {query!r} ({lang})", micros))
    build = timed(lambda: PlaceIndex(groups, found), 20)
    print(line("building the index (20 builds)", build))

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with Store.open(url) as store, FakeSlack() as slack:
            await Sites(store, ADMINS, utcnow).import_file(
                ADMIN, SiteFile(tuple(groups), tuple(found))
            )
            slack.add_channel("C0GENERAL")
            slack.add_user("U0ADMIN", "alex")
            async with SlackBot(store, utcnow, slack) as bot:
                commands = bot.commands
                started = time.perf_counter()
                await commands.find_places("roos", "en")  # reads the sites, builds
                first = (time.perf_counter() - started) * 1e6
                print(line("first lookup after an import (SQLite read + build)", [first]))
                through: list[float] = []
                for i in range(repeat):
                    query, lang = QUERIES[i % len(QUERIES)]
                    started = time.perf_counter()
                    await commands.find_places(query, lang, limit=100)
                    through.append((time.perf_counter() - started) * 1e6)
                print(line("Commands.find_places (SQLite, no watcher: one version read)", through))
                assert (await bot.command("post", user="U0ADMIN")).status == 200
                form = slack.views[list(slack.views)[-1]]
                from tests.fakes.slack import block_suggestion

                bodies = [
                    interaction_body(
                        block_suggestion(form, "audience", QUERIES[i % len(QUERIES)][0])
                    )
                    for i in range(repeat)
                ]
                slack_micros: list[float] = []
                for body in bodies:
                    started = time.perf_counter()
                    response = await bot.post_signed(body)
                    slack_micros.append((time.perf_counter() - started) * 1e6)
                    assert response.status == 200
                print(line("Slack options request, signed HTTP end to end", slack_micros))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.sites, args.repeat))


if __name__ == "__main__":
    main()
