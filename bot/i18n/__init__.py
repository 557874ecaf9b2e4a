"""Every language is data: gettext catalogues, read and compiled with Babel, plus CLDR.

The sentences live in `bot/locales/`: `strikebot.pot` is the template, written in the source
language its header names (`Language:`); each other language is one file,
`<code>/LC_MESSAGES/strikebot.po`, found in `bot/locales/` or in any directory listed in
`STRIKEBOT_LOCALES` (separated like PATH). Adding a language is adding that file: nothing in
code names one. Each message is identified by its context (`msgctxt`, "<table>.<key>", such
as `commands.bad_time`); its `msgid` is the source sentence. A translation marked fuzzy is
stale and not used: the source sentence is shown until a translator updates or confirms it.

Dates, times, numbers, language names and plurals come from Babel (CLDR), so a new language
gets them from its code. Shared vocabulary (status names, demand statuses, urgencies,
family words) is here; feature modules keep their own tables (`Words("briefings")`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import pickle
import re
import string
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import babel
from babel import Locale, UnknownLocaleError
from babel import dates as babel_dates
from babel import lists as babel_lists
from babel import numbers as babel_numbers
from babel import units as babel_units
from babel.support import Translations

from bot.models import DemandStatus, Status, Urgency

if TYPE_CHECKING:
    # Parsing and compiling catalogues: only translators' tools and a changed file need it.
    from babel.messages.catalog import Catalog, Message

__all__ = [
    "DOMAIN",
    "LOCALES_ENV",
    "STATUS_COLOURS",
    "Catalogues",
    "Domain",
    "Phrase",
    "Term",
    "Words",
    "catalogue_dirs",
    "catalogues",
    "date_term",
    "datetime_term",
    "day_names",
    "day_of_strike",
    "demand_status_label",
    "demand_status_term",
    "family_word",
    "format_date",
    "format_datetime",
    "format_duration",
    "format_list",
    "format_number",
    "format_time",
    "language_name",
    "languages",
    "local",
    "phrase",
    "pick",
    "plural",
    "say",
    "sentence_language",
    "source_language",
    "status_label",
    "status_term",
    "supported",
    "text",
    "translate_source",
    "translated",
    "urgency_label",
]

log = logging.getLogger("strikebot.i18n")
_FORMATTER = string.Formatter()

DOMAIN = "strikebot"
LOCALES_ENV = "STRIKEBOT_LOCALES"
PLUGIN_GROUP = "strikebot.adapters"  # where `bot.plugins` finds the plugins too
PACKAGE_LOCALES = Path(__file__).parent / "locales"

# Hex colours per status, shared by Discord embeds, Slack attachments and the web page.
STATUS_COLOURS: dict[Status, int] = {
    Status.BARGAINING: 0x1F6FB2,
    Status.STRIKE_VOTE: 0x7A3DB8,
    Status.STRIKE_NOTICE: 0xE67700,
    Status.STRIKE_ON: 0xC8102E,
    Status.LOCKOUT: 0x862E9C,
    Status.TALKS_SCHEDULED: 0xD9480F,
    Status.TENTATIVE_AGREEMENT: 0x2B8A3E,
    Status.RATIFICATION_VOTE: 0x5C940D,
    Status.STRIKE_SUSPENDED: 0x868E96,
    Status.STRIKE_OVER: 0x2F9E44,
}


class CatalogueError(ValueError):
    """A catalogue file that cannot be used; the message names the file and the fix."""


@dataclass(frozen=True)
class Domain:
    """One catalogue of sentences: the core's (`strikebot`) or a plugin's, named by its
    template (`locales/strikebot-pigeon.pot` beside the plugin's package), with its home:
    where its template and its languages' files live."""

    name: str
    home: Path

    @property
    def template_path(self) -> Path:
        return self.home / f"{self.name}.pot"

    def path(self, language: str, root: Path | None = None) -> Path:
        """Where `language`'s file of this catalogue goes (under `root`, default home)."""
        return (root or self.home) / language / "LC_MESSAGES" / f"{self.name}.po"


@dataclass(frozen=True)
class Parsed:
    """The catalogues as the translators' tools read them: every domain's template merged
    (`template`), every language's files merged (`catalogs`), and each file by (domain,
    language)."""

    template: Catalog
    catalogs: Mapping[str, Catalog]
    files: Mapping[tuple[str, str], Catalog]


@dataclass
class Catalogues:
    """Every catalogue — the core's and each installed plugin's, merged — compiled (for
    lookups) and, when the translators' tools first ask (`template`, `catalogs`), parsed.
    `owner` says which domain a message's context is in; `files` where each (domain,
    language) file is."""

    template_path: Path
    source: str
    paths: Mapping[str, Path]
    compiled: Mapping[str, Translations]
    source_texts: Mapping[str, str | tuple[str, ...]]
    # The source language first, then the others in alphabetical order.
    languages: tuple[str, ...] = ()
    # Lower-case code -> code, for `supported` (called for every message rendered).
    known: Mapping[str, str] = field(default_factory=dict)
    domains: tuple[Domain, ...] = ()
    owner: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[tuple[str, str], Path] = field(default_factory=dict)
    parsed: Parsed | None = None

    @property
    def template(self) -> Catalog:
        return self._parsed().template

    @property
    def catalogs(self) -> Mapping[str, Catalog]:
        return self._parsed().catalogs

    @property
    def domain_catalogs(self) -> Mapping[tuple[str, str], Catalog]:
        return self._parsed().files

    def domain(self, name: str) -> Domain:
        return next(d for d in self.domains if d.name == name)

    def _parsed(self) -> Parsed:
        if self.parsed is None:
            self.parsed = _parse(self.domains, self.files)[0]
            for catalog in self.parsed.files.values():
                _mark_unusable(catalog)
        return self.parsed


def catalogue_dirs() -> list[Path]:
    """Where the languages' files are looked for beyond each catalogue's home (the core's
    `bot/i18n/locales/`, a plugin's `locales/`): each directory in `STRIKEBOT_LOCALES`
    (a later directory's file for a language wins)."""
    extra = [Path(p) for p in os.environ.get(LOCALES_ENV, "").split(os.pathsep) if p.strip()]
    return [PACKAGE_LOCALES, *extra]


@cache
def plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The installed plugins' entry points (group `strikebot.adapters`), read once per
    process: the catalogues and the plugin registry (`bot.plugins`) both need them, and
    each reading goes through every installed package's metadata."""
    return tuple(entry_points(group=PLUGIN_GROUP))


def plugin_homes() -> list[Path]:
    """`locales/` beside each installed plugin's package (the `strikebot.adapters` entry
    points), found without importing the plugin or its platform's library."""
    homes = []
    for point in plugin_entry_points():
        module = point.value.partition(":")[0]
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            continue  # the registry says why a plugin cannot load
        if spec is None or spec.origin is None:
            continue
        home = Path(spec.origin).parent / "locales"
        if home.is_dir() and home not in homes:
            homes.append(home)
    return homes


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    from babel.messages.pofile import PoFileError, read_po

    try:
        with path.open("rb") as fp:
            return read_po(fp, locale=locale, domain=DOMAIN, abort_invalid=True)
    except (OSError, ValueError, UnknownLocaleError, PoFileError) as exc:
        raise CatalogueError(f"{path}: cannot be read as a gettext catalogue ({exc})") from exc


def blanks(text: str) -> set[str] | None:
    """The `{name}` blanks of a format string, or None if it is not a valid one."""
    try:
        return {
            name.split(".")[0].split("[")[0] for _, name, _, _ in _FORMATTER.parse(text) if name
        }
    except ValueError:
        return None


def unusable(message: Message) -> bool:
    """A translation that would break the sentence: a blank the source does not have, or
    braces that are not a format string."""
    sources = [message.id] if isinstance(message.id, str) else list(message.id)
    allowed = set().union(*(blanks(s) or set() for s in sources))
    forms = [message.string] if isinstance(message.string, str) else list(message.string or ())
    for form in forms:
        found = blanks(form) if form else set()
        if found is None or not found <= allowed:
            return True
    return False


def _mark_unusable(catalog: Catalog) -> list[str]:
    """Mark fuzzy each translation that would break its sentence; their contexts."""
    found = []
    for message in catalog:
        if message.id and message.string and not message.fuzzy and unusable(message):
            message.flags.add("fuzzy")
            found.append(str(message.context))
    return found


def _compiled_mo(catalog: Catalog, path: Path | None) -> tuple[bytes, list[str]]:
    """(the .mo bytes, the warnings logged for its unusable translations)."""
    warnings = [
        f"{path or catalog.locale}: the translation of {context} uses blanks the English does "
        "not have; the English is shown until it is fixed"
        for context in _mark_unusable(catalog)
    ]
    for warning in warnings:
        log.warning("%s", warning)
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue(), warnings


def _translations(mo: bytes) -> Translations:
    return Translations(fp=io.BytesIO(mo), domain=DOMAIN)


@cache
def catalogues() -> Catalogues:
    """Every catalogue, read once per process: the core's, then each plugin's. Compiling
    them costs a command ~0.1 s; what the packages ship alone (no `STRIKEBOT_LOCALES`) is
    kept compiled in `locales/__pycache__/`, by a digest of the files, and read from there
    next time."""
    domains = [Domain(DOMAIN, PACKAGE_LOCALES)]
    for home in plugin_homes():
        domains += [Domain(p.stem, home) for p in sorted(home.glob("*.pot"))]
    files: dict[tuple[str, str], Path] = {}
    for domain in domains:
        for root in (domain.home, *catalogue_dirs()[1:]):
            if root.is_dir():
                for po in sorted(root.glob(f"*/LC_MESSAGES/{domain.name}.po")):
                    files[(domain.name, po.parent.parent.name)] = po
    kept = _kept_path(domains, files)
    found = _read_kept(kept, domains, files) if kept is not None else None
    if found is not None:
        return found
    return _read_catalogues(domains, files, kept)


_KEPT_FORMAT = 2


def _kept_path(domains: list[Domain], files: Mapping[tuple[str, str], Path]) -> Path | None:
    """Where the compiled catalogues are kept, or None when they are not (extra directories
    are translators' work in progress, read afresh each time)."""
    if os.environ.get(LOCALES_ENV, "").strip():
        return None
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{_KEPT_FORMAT}|{babel.__version__}".encode())
    try:
        for path in (*(d.template_path for d in domains), *files.values()):
            digest.update(str(path).encode())
            digest.update(path.read_bytes())
    except OSError:
        return None
    return PACKAGE_LOCALES / "__pycache__" / f"catalogues-{digest.hexdigest()}.pickle"


def _read_kept(
    kept: Path, domains: list[Domain], files: Mapping[tuple[str, str], Path]
) -> Catalogues | None:
    try:
        raw = pickle.loads(kept.read_bytes())  # noqa: S301 - our own file, named by a digest
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None
    for warning in raw["warnings"]:
        log.warning("%s", warning)
    return _assembled(domains, files, raw["source"], raw["texts"], raw["owner"], raw["mo"])


def _parse(domains: Iterable[Domain], files: Mapping[tuple[str, str], Path]) -> tuple[Parsed, str]:
    """Every template and file parsed and merged, and the source language."""
    from babel.messages.catalog import Catalog

    merged: Catalog | None = None
    source = ""
    owner: dict[str, str] = {}
    for domain in domains:
        template = read_catalog(domain.template_path)
        if merged is None:
            source = str(template.locale) if template.locale else ""
            if not source:
                raise CatalogueError(
                    f"{domain.template_path}: the header must name its language (Language:)"
                )
            merged = Catalog(locale=source, domain=DOMAIN)
        for message in template:
            if not (message.id and message.context):
                continue
            if message.context in owner:
                raise CatalogueError(
                    f"{domain.template_path}: {message.context!r} is already a message of "
                    f"{owner[message.context]}; give it a context of the plugin's own table"
                )
            owner[message.context] = domain.name
            merged[message.id] = message
    assert merged is not None
    parsed: dict[tuple[str, str], Catalog] = {}
    catalogs: dict[str, Catalog] = {}
    for (name, code), path in files.items():
        try:
            Locale.parse(code)
        except (ValueError, UnknownLocaleError) as exc:
            raise CatalogueError(
                f"{path}: {code!r} is not a language code CLDR knows; name the folder with "
                "a code such as 'ko', 'hy', 'zh_Hant', 'tl', 'vi', 'ru' or 'fa'"
            ) from exc
        catalog = parsed[(name, code)] = read_catalog(path, locale=code)
        whole = catalogs.setdefault(code, Catalog(locale=code, domain=DOMAIN))
        for message in catalog:
            if message.id:
                whole[message.id] = message
    return Parsed(merged, catalogs, parsed), source


def _read_catalogues(
    domains: list[Domain], files: Mapping[tuple[str, str], Path], kept: Path | None
) -> Catalogues:
    parsed, source = _parse(domains, files)
    texts: dict[str, str | tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for domain in domains:  # a second read: the merged template no longer says which is whose
        for message in read_catalog(domain.template_path):
            if message.id and message.context:
                texts[message.context] = (
                    message.id if isinstance(message.id, str) else tuple(message.id)
                )
                owner[message.context] = domain.name
    made = {key: _compiled_mo(c, files[key]) for key, c in parsed.files.items()}
    if kept is not None:
        _keep(kept, source, texts, owner, made)
    found = _assembled(
        domains, files, source, texts, owner, {key: mo for key, (mo, _) in made.items()}
    )
    found.parsed = parsed
    return found


def _assembled(
    domains: list[Domain],
    files: Mapping[tuple[str, str], Path],
    source: str,
    texts: Mapping[str, str | tuple[str, ...]],
    owner: Mapping[str, str],
    mo: Mapping[tuple[str, str], bytes],
) -> Catalogues:
    """The catalogues from their compiled files: each language's domains merged into one
    `Translations` (the core's first, each plugin's merged in)."""
    compiled: dict[str, Translations] = {}
    for (_, code), data in sorted(mo.items(), key=lambda kv: kv[0][0] != DOMAIN):
        if code in compiled:
            compiled[code].merge(_translations(data))
        else:
            compiled[code] = _translations(data)
    codes = (source, *sorted(code for code in compiled if code != source))
    return Catalogues(
        template_path=domains[0].template_path,
        source=source,
        paths={code: path for (name, code), path in files.items() if name == DOMAIN},
        compiled=compiled,
        source_texts=texts,
        languages=codes,
        known={code.lower(): code for code in codes},
        domains=tuple(domains),
        owner=owner,
        files=files,
    )


def _keep(
    kept: Path,
    source: str,
    texts: Mapping[str, str | tuple[str, ...]],
    owner: Mapping[str, str],
    made: Mapping[tuple[str, str], tuple[bytes, list[str]]],
) -> None:
    """Write the compiled catalogues for the next process; nothing if the package is
    read-only."""
    data = {
        "source": source,
        "texts": dict(texts),
        "owner": dict(owner),
        "mo": {key: mo for key, (mo, _) in made.items()},
        "warnings": [w for _, warnings in made.values() for w in warnings],
    }
    try:
        kept.parent.mkdir(exist_ok=True)
        for old in kept.parent.glob("catalogues-*.pickle"):
            old.unlink(missing_ok=True)
        partial = kept.with_name(f".{kept.name}.{os.getpid()}")
        partial.write_bytes(pickle.dumps(data))
        partial.replace(kept)
    except OSError:
        pass


def reload() -> None:
    """Forget the catalogues read so far (after `strikebot translations import`)."""
    catalogues.cache_clear()
    _locale.cache_clear()
    _by_source.cache_clear()
    _translated.cache_clear()


def source_language() -> str:
    return catalogues().source


def languages() -> tuple[str, ...]:
    """Every language the bot can speak: the template's and each catalogue's."""
    return catalogues().languages


def _normal(code: str) -> str:
    return code.strip().replace("-", "_")


def supported(language: str | None) -> str | None:
    """The language the bot speaks for `language` (a code or a locale such as es-MX or
    es_419), or None."""
    if language:
        known = catalogues().known
        tag = _normal(language).lower()
        if tag in known:
            return known[tag]
        return known.get(tag.split("_")[0])
    return None


def pick(language: str | None) -> str:
    """The language the bot speaks for `language` (see `supported`), else the source
    language."""
    return supported(language) or source_language()


def _source(context: str) -> str | tuple[str, ...]:
    try:
        return catalogues().source_texts[context]
    except KeyError:
        raise KeyError(f"no message {context!r} in {catalogues().template_path}") from None


def text(language: str, context: str) -> str:
    """The message `context` in `language`; the source sentence when it has no (current)
    translation there."""
    source = _source(context)
    singular = source if isinstance(source, str) else source[0]
    found = catalogues().compiled.get(pick(language))
    return str(found.pgettext(context, singular)) if found is not None else singular


@cache
def _translated(language: str) -> frozenset[str]:
    found = catalogues()
    if language == found.source:
        return frozenset(found.source_texts)
    catalog = found.catalogs.get(language)
    if catalog is None:
        return frozenset()
    done = set()
    for message in catalog:
        forms = message.string if isinstance(message.string, tuple | list) else [message.string]
        if message.context and not message.fuzzy and forms and all(forms):
            done.add(message.context)
    return frozenset(done)


def translated(language: str, context: str) -> bool:
    """True when `language` has a current translation of message `context` (the source
    language has every message)."""
    return context in _translated(pick(language))


class Term:
    """A piece put into another sentence that depends on the language: a catalogue phrase
    (`phrase`) or a CLDR value (`local`). `say` renders it in the language the whole
    sentence is said in, so a sentence never mixes two languages."""

    __slots__ = ("contexts", "render")

    def __init__(self, render: Callable[[str], str], contexts: Iterable[str] = ()) -> None:
        self.render = render
        self.contexts = tuple(contexts)

    def __str__(self) -> str:  # a Term formatted outside `say` speaks the source language
        return self.render(source_language())


def phrase(context: str, /, **values: object) -> Term:
    """Message `context` (with `values`) as a piece of another sentence."""

    def render(language: str) -> str:
        return say(language, context, **values)

    nested = [c for v in values.values() if isinstance(v, Term) for c in v.contexts]
    return Term(render, (context, *nested))


def local(render: Callable[[str], str]) -> Term:
    """A value CLDR renders in any language (a date, a language's name, a number)."""
    return Term(render)


def sentence_language(language: str, contexts: Iterable[str], fallback: Iterable[str] = ()) -> str:
    """The language a sentence made of messages `contexts` is said in: `language` if it
    translates them all, else the first of `fallback` that does, else the source language.
    A half-translated catalogue so shows a sentence whole in one language, never mixed."""
    needed = tuple(contexts)
    for candidate in (language, *fallback):
        lang = pick(candidate)
        if all(translated(lang, c) for c in needed):
            return lang
    return source_language()


def say(language: str, context: str, /, **values: object) -> str:
    """Message `context` in `language` with `values` filled in (str.format fields), said
    whole in one language: `Term` values are rendered in the language the sentence is said
    in (see `sentence_language`, whose fallback here is the source language); other values
    are put in as they are."""
    terms = [v for v in values.values() if isinstance(v, Term)]
    lang = pick(language)
    if lang != source_language():
        lang = sentence_language(lang, (context, *(c for t in terms for c in t.contexts)))
    filled = {k: v.render(lang) if isinstance(v, Term) else v for k, v in values.items()}
    return text(lang, context).format_map(filled)


def plural(language: str, context: str, n: int) -> str:
    """The plural message `context` for the number `n`, by `language`'s plural rules."""
    source = _source(context)
    if isinstance(source, str):
        raise KeyError(f"message {context!r} has no plural form")
    found = catalogues().compiled.get(pick(language))
    if found is None:
        return source[0] if n == 1 else source[1]
    return str(found.npgettext(context, source[0], source[1], n))


def translate_source(language: str, table: str, sentence: str) -> str | None:
    """The translation of the source `sentence` of a message in `table` (for libraries
    that hand back the source text, such as Discord's command descriptions), or None."""
    context = _by_source(table).get(sentence)
    return text(language, context) if context is not None else None


@cache
def _by_source(table: str) -> dict[str, str]:
    prefix = table + "."
    texts = catalogues().source_texts
    return {v: c for c, v in texts.items() if c.startswith(prefix) and isinstance(v, str)}


def has_message(context: str) -> bool:
    return context in catalogues().source_texts


class _Sentences(Mapping[str, str]):
    def __init__(self, table: str, language: str) -> None:
        self._prefix = table + "."
        self._language = language

    def __getitem__(self, key: str) -> str:
        context = self._prefix + key
        if not has_message(context):
            raise KeyError(key)
        return text(self._language, context)

    def __iter__(self) -> Iterator[str]:
        n = len(self._prefix)
        return (c[n:] for c in catalogues().source_texts if c.startswith(self._prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Words(Mapping[str, Mapping[str, str]]):
    """One table of the catalogue, read like `{language: {key: sentence}}`: the messages
    whose context is "<table>.<key>". Any language code is accepted (see `pick`)."""

    def __init__(self, table: str) -> None:
        self.table = table

    def __getitem__(self, language: str) -> Mapping[str, str]:
        return _Sentences(self.table, pick(language))

    def __iter__(self) -> Iterator[str]:
        return iter(languages())

    def __len__(self) -> int:
        return len(languages())

    def say(self, language: str, key: str, /, **values: object) -> str:
        """Sentence `key` in `language` with `values` filled in (str.format fields), whole
        in one language (see `bot.i18n.say`)."""
        context = f"{self.table}.{key}"
        if not has_message(context):
            raise KeyError(key)
        return say(language, context, **values)

    def term(self, key: str, /, **values: object) -> Term:
        """Sentence `key` as a piece of another sentence (see `phrase`)."""
        return phrase(f"{self.table}.{key}", **values)


class Phrase(Mapping[str, str]):
    """One message, read like `{language: sentence}` (a plugin's "your user id")."""

    def __init__(self, context: str) -> None:
        self.context = context

    def __getitem__(self, language: str) -> str:
        return text(language, self.context)

    def __iter__(self) -> Iterator[str]:
        return iter(languages())

    def __len__(self) -> int:
        return len(languages())


def status_label(status: Status, language: str) -> str:
    return text(language, f"status.{status.value}")


def demand_status_label(status: DemandStatus, language: str) -> str:
    return text(language, f"demand_status.{status.value}")


def urgency_label(urgency: Urgency, language: str) -> str:
    return text(language, f"urgency.{urgency.value}")


def family_word(key: str, language: str, **values: object) -> str:
    return say(language, f"families.{key}", **values)


@cache
def _locale(language: str) -> Locale:
    return Locale.parse(pick(language))


def _plain(value: str) -> str:
    # CLDR puts narrow no-break spaces in times ("6:00\u202fAM"); one of them turns a text
    # message from GSM-7 into UCS-2 and halves what a segment holds.
    return value.replace("\u202f", " ").replace("\u00a0", " ")


def format_date(day: date, language: str, today: date | None = None) -> str:
    """'Monday, January 14' / 'lunes, 14 de enero' (CLDR); with the year ('Monday, January
    14, 2019' / 'lunes, 14 de enero de 2019') when `today` is given and in another year."""
    locale = _locale(language)
    if today is not None and day.year != today.year:
        return _plain(babel_dates.format_date(day, "full", locale=locale))
    skeleton = locale.datetime_skeletons.get("MMMMEd")
    if skeleton is None:
        return _plain(babel_dates.format_skeleton("MMMMEEEEd", day, locale=locale))
    pattern = re.sub(r"E+", "EEEE", str(skeleton.pattern))
    return _plain(babel_dates.format_date(day, pattern, locale=locale))


def format_time(moment: datetime, language: str) -> str:
    """'6:00 AM' / '6:00' (CLDR's short time; local time already applied by the caller)."""
    return _plain(
        babel_dates.format_time(moment, "short", tzinfo=moment.tzinfo, locale=_locale(language))
    )


def format_datetime(moment: datetime, language: str, today: date | None = None) -> str:
    """'Monday, January 21, 6:00 AM PST' / 'lunes, 21 de enero, 6:00 PST' (the year too
    when `today` is given and in another year)."""
    pattern = str(_locale(language).datetime_formats["medium"])
    joined = pattern.replace("{1}", format_date(moment.date(), language, today)).replace(
        "{0}", format_time(moment, language)
    )
    return f"{joined} {moment.tzname() or ''}".strip()


def day_names(language: str, width: Literal["wide", "abbreviated"] = "wide") -> dict[int, str]:
    """0 (Monday) ... 6 (Sunday) -> the day's name in `language` (CLDR)."""
    names = babel_dates.get_day_names(width, locale=_locale(language))
    return {int(number): str(name) for number, name in names.items()}


def format_number(n: int, language: str) -> str:
    """'10,000' / '10.000' (CLDR grouping)."""
    return _plain(babel_numbers.format_decimal(n, locale=_locale(language)))


def format_amount(x: float, language: str) -> str:
    """'1,000' / '1.000', '0.5' / '0,5': a number with up to two decimals (CLDR)."""
    return _plain(babel_numbers.format_decimal(round(x, 2), locale=_locale(language)))


def format_list(
    items: list[str], language: str, style: Literal["standard", "unit"] = "standard"
) -> str:
    """'a, b, and c' / 'a, b y c' (CLDR); style "unit" for amounts ('2 days, 20 hours')."""
    try:
        return str(babel_lists.format_list(items, style=style, locale=_locale(language)))
    except KeyError:  # a locale whose CLDR data lacks that style's patterns
        return str(babel_lists.format_list(items, locale=_locale(language)))


def format_duration(n: int, unit: str, language: str) -> str:
    """'20 hours' / '20 horas' for a unit of 'day', 'hour', 'minute' (CLDR)."""
    return _plain(babel_units.format_unit(n, f"duration-{unit}", locale=_locale(language)))


def language_name(code: str, in_language: str | None = None) -> str:
    """`code`'s name in `in_language` ('Spanish', 'español'), or in its own words when
    `in_language` is None ('Español'), from CLDR."""
    own = in_language is None
    locale = Locale.parse(pick(code) if code in languages() else _normal(code))
    name = locale.get_display_name(locale if own else _locale(in_language or code)) or code
    return name[:1].upper() + name[1:] if own else name


def date_term(day: date, today: date | None = None) -> Term:
    """`format_date` as a piece of a sentence, in the sentence's language."""
    return local(lambda language: format_date(day, language, today))


def datetime_term(moment: datetime, today: date | None = None) -> Term:
    """`format_datetime` as a piece of a sentence, in the sentence's language."""
    return local(lambda language: format_datetime(moment, language, today))


def status_term(status: Status) -> Term:
    """A status's catalogue label as a piece of a sentence."""
    return phrase(f"status.{status.value}")


def demand_status_term(status: DemandStatus) -> Term:
    return phrase(f"demand_status.{status.value}")


def day_of_strike(strike_start: date, today: date) -> int:
    """Day 1 is the day the strike began."""
    return (today - strike_start).days + 1
