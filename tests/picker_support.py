"""A campaign of about a thousand schools, as LAUSD's, for the site pickers' tests and
bench: the demo's six local districts and six high schools, and numbered schools named in
English and Spanish spread over the districts."""

from __future__ import annotations

from bot.models import Site, SiteGroup

GROUPS = (
    ("central", "Local District Central", "Distrito Local Central"),
    ("east", "Local District East", "Distrito Local Este"),
    ("northeast", "Local District Northeast", "Distrito Local Noreste"),
    ("northwest", "Local District Northwest", "Distrito Local Noroeste"),
    ("south", "Local District South", "Distrito Local Sur"),
    ("west", "Local District West", "Distrito Local Oeste"),
)
DEMO_SITES = (
    ("marshall", "central", "John Marshall High School", "Preparatoria John Marshall"),
    ("roosevelt", "east", "Roosevelt High School", "Preparatoria Roosevelt"),
    ("grant", "northeast", "Grant High School", "Preparatoria Grant"),
    ("chatsworth", "northwest", "Chatsworth High School", "Preparatoria Chatsworth"),
    ("banning", "south", "Banning High School", "Preparatoria Banning"),
    ("venice", "west", "Venice High School", "Preparatoria Venice"),
)
NAMES = (
    "Adams", "Belvedere", "Budlong", "Carver", "Castelar", "Dolores Huerta", "Eastman",
    "Figueroa", "Garfield", "Hollenbeck", "Hoover", "Humphreys", "Jefferson", "King",
    "Lincoln", "Lorena", "Madison", "Malabar", "Marengo", "Murchison", "Nightingale",
    "Obama", "Pacoima", "Ramona", "Rowan", "Sheridan", "Sotomayor", "Stevenson", "Toland",
    "Union", "Valley", "Wilson", "César Chávez", "José Martí", "Ñuñoa",
)  # fmt: skip
KINDS = (
    ("Elementary School", "Primaria"),
    ("Middle School", "Secundaria"),
    ("Academy", "Academia"),
    ("Early Education Center", "Centro de Educación Temprana"),
)


def many_places(sites: int = 1000) -> tuple[list[SiteGroup], list[Site]]:
    """The six districts and `sites` schools in them (the demo's six among them)."""
    groups = [SiteGroup(code, {"en": en, "es": es}) for code, en, es in GROUPS]
    found = [Site(code, {"en": en, "es": es}, group) for code, group, en, es in DEMO_SITES]
    for n in range(sites - len(found)):
        name = NAMES[n % len(NAMES)]
        kind_en, kind_es = KINDS[(n // len(NAMES)) % len(KINDS)]
        number = n // (len(NAMES) * len(KINDS)) + 1
        found.append(
            Site(
                f"s{n + 1:04d}",
                {"en": f"{name} {kind_en} {number}", "es": f"{kind_es} {name} {number}"},
                GROUPS[n % len(GROUPS)][0],
            )
        )
    return groups, found
