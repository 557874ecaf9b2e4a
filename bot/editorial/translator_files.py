"""The translators' files: how complete each language's catalogue is, and one .po file per
language to hand to a translator and take back.

An exported file holds the whole catalogue (the template's sentences as msgid, the
language's translation, or nothing, as msgstr; stale ones marked fuzzy) and, after it, the
campaign's texts that lack that language or are stale there, each as a message whose
context is `content:<target>:<field>` ("content:update:12:headline"). Any PO editor (Poedit,
Weblate, Lokalize) edits it. Importing writes the catalogue's messages into the language's
catalogue file and applies the campaign's texts through the admin use cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import PoFileError, read_po, write_po

from bot import i18n
from bot.editorial.admin import Admin, Changes
from bot.editorial.translations import (
    FAMILIES_TARGET,
    ContentGap,
    ContentImport,
    demand_fields,
    group_content,
    update_fields,
)
from bot.errors import InvalidInput
from bot.models import Actor, UpdateText

__all__ = [
    "CONTENT_PREFIX",
    "CatalogueImport",
    "CatalogueStatus",
    "apply_content",
    "catalogue_status",
    "content_messages",
    "export_catalog",
    "import_catalogue",
    "language_code",
    "read_translation_file",
]

CONTENT_PREFIX = "content:"
WIDTH = 88


@dataclass(frozen=True, slots=True)
class CatalogueStatus:
    """How much of the bot's own sentences a language has."""

    language: str
    path: Path | None  # None: no catalogue file yet (or the template's own language)
    total: int
    missing: tuple[str, ...]  # contexts with no translation
    stale: tuple[str, ...]  # contexts whose translation is fuzzy or of an older sentence

    @property
    def translated(self) -> int:
        return self.total - len(self.missing) - len(self.stale)

    def as_json(self) -> dict[str, object]:
        return {
            "file": str(self.path) if self.path else None,
            "total": self.total,
            "translated": self.translated,
            "missing": list(self.missing),
            "stale": list(self.stale),
        }


def _filled(message: Message) -> bool:
    forms = [message.string] if isinstance(message.string, str) else list(message.string or ())
    return bool(forms) and all(forms)


def _by_context(catalog: Catalog | None) -> dict[str, Message]:
    return {m.context: m for m in catalog or () if m.id and m.context}


def catalogue_status(language: str) -> CatalogueStatus:
    found = i18n.catalogues()
    template = [m for m in found.template if m.id and m.context]
    if language == found.source:
        return CatalogueStatus(language, found.template_path, len(template), (), ())
    own = _by_context(found.catalogs.get(language))
    missing, stale = [], []
    for message in template:
        assert message.context is not None
        mine = own.get(message.context)
        if mine is None or not _filled(mine):
            missing.append(message.context)
        elif mine.fuzzy or mine.id != message.id:
            stale.append(message.context)
    path = found.paths.get(language)
    return CatalogueStatus(language, path, len(template), tuple(missing), tuple(stale))


def _new_catalog(language: str) -> Catalog:
    return Catalog(locale=language, domain=i18n.DOMAIN, project="strikebot", fuzzy=False)


def _empty(catalog: Catalog, message: Message) -> str | tuple[str, ...]:
    return "" if isinstance(message.id, str) else ("",) * catalog.num_plurals


def content_messages(gaps: Iterable[ContentGap]) -> list[Message]:
    """The campaign's texts to translate, as messages (`content:<target>:<field>`)."""
    messages = []
    for gap in gaps:
        if gap.target == FAMILIES_TARGET:
            continue  # written in the campaign file, where the report points
        for name in gap.to_translate:
            source = gap.source.get(name, "")
            if not source:
                continue
            note = f"{gap.target} {name}"
            if gap.stale is not None:
                edited = gap.stale.edited.replace(",", ", ")
                note += f": stale since {gap.stale.since:%Y-%m-%d %H:%M} UTC ({edited} edited)"
            messages.append(
                Message(
                    source,
                    gap.current.get(name, ""),
                    context=f"{CONTENT_PREFIX}{gap.target}:{name}",
                    auto_comments=[note],
                    flags=["fuzzy"] if gap.stale is not None and gap.current.get(name) else [],
                )
            )
    return messages


def export_catalog(language: str, gaps: Iterable[ContentGap] = ()) -> Catalog:
    """The file to hand a translator for `language`: the whole catalogue, then the
    campaign's texts to translate."""
    found = i18n.catalogues()
    own = _by_context(found.catalogs.get(language))
    catalog = _new_catalog(language)
    for message in found.template:
        if not message.id or not message.context:
            continue
        mine = own.get(message.context)
        string = mine.string if mine is not None else _empty(catalog, message)
        fuzzy = mine is not None and (mine.fuzzy or mine.id != message.id)
        catalog.add(
            message.id,
            string,
            context=message.context,
            auto_comments=message.auto_comments,
            flags=[f for f in message.flags if f != "fuzzy"] + (["fuzzy"] if fuzzy else []),
            previous_id=mine.id if mine is not None and mine.id != message.id else (),
        )
    for message in content_messages(gaps):
        catalog[message.id] = message  # keyed by (id, context)
    return catalog


def write_catalog(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fp:
        write_po(fp, catalog, width=WIDTH, sort_output=False, include_previous=True)


def read_translation_file(path: Path, language: str | None = None) -> tuple[str, Catalog]:
    """The file's language (its `Language:` header, or `language`) and its messages."""
    try:
        with path.open("rb") as fp:
            catalog = read_po(fp, locale=language, domain=i18n.DOMAIN, abort_invalid=True)
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file.") from None
    except (OSError, ValueError, UnknownLocaleError, PoFileError) as exc:
        raise InvalidInput(
            f"{path}: not a gettext .po file ({exc}); export one with "
            "`strikebot translations export LANG`."
        ) from None
    # The header as written ("tl"), not Babel's reading of it ("fil_PH"): the catalogue's
    # folder is named by the code the campaign uses.
    code = language or catalog.locale_identifier or ""
    if not code:
        raise InvalidInput(
            f"{path}: the file does not say its language (no Language: header); give --lang."
        )
    return language_code(code), catalog


def language_code(value: str) -> str:
    """`value` if it is a language code CLDR knows (the catalogue folder's name), the
    catalogue's own spelling if it already has one; else `InvalidInput`."""
    known = i18n.supported(value)
    if known is not None and known.lower() == value.strip().replace("-", "_").lower():
        return known
    code = value.strip().replace("-", "_")
    try:
        Locale.parse(code)
    except (ValueError, UnknownLocaleError):
        raise InvalidInput(
            f"{value!r} is not a language code CLDR knows; use one such as 'ko', 'hy', "
            "'zh_Hant', 'tl', 'vi', 'ru' or 'fa'."
        ) from None
    return code


@dataclass(slots=True)
class CatalogueImport:
    """What importing a file did to a language's catalogue."""

    path: Path
    updated: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)  # translated an older source sentence
    unknown: list[str] = field(default_factory=list)  # no such message in the template
    broken: list[str] = field(default_factory=list)  # a blank the English does not have


def import_catalogue(language: str, imported: Catalog, into: Path | None = None) -> CatalogueImport:
    """Write the file's translations of the bot's sentences into `language`'s catalogues:
    each message into the catalogue it belongs to (the core's, or a plugin's), in its
    existing file, else under `into` (default: that catalogue's home). A message kept fuzzy
    in the file stays fuzzy (stale); empty ones change nothing."""
    found = i18n.catalogues()
    if language == found.source:
        raise InvalidInput(
            f"{language!r} is the language the sentences are written in "
            f"({found.template_path}); there is nothing to import for it."
        )
    template = _by_context(found.template)
    core = found.domain(i18n.DOMAIN)
    result = CatalogueImport(found.files.get((core.name, language)) or core.path(language, into))
    changed: dict[str, Catalog] = {}
    for message in imported:
        context = message.context
        if not message.id or not context or context.startswith(CONTENT_PREFIX):
            continue
        source = template.get(context)
        if source is None:
            result.unknown.append(context)
            continue
        if message.id != source.id:
            result.outdated.append(context)
            continue
        if not _filled(message):
            continue
        if i18n.unusable(message):
            result.broken.append(context)
            continue
        domain = found.owner[context]
        catalog = changed.get(domain) or found.domain_catalogs.get((domain, language))
        catalog = catalog or _new_catalog(language)
        mine = _by_context(catalog).get(context)
        fuzzy = message.fuzzy
        unchanged = mine is not None and (mine.id, mine.string) == (source.id, message.string)
        if unchanged and mine is not None and mine.fuzzy == fuzzy:
            continue
        if mine is not None:
            catalog.delete(mine.id, context=context)
        catalog.add(
            source.id,
            message.string,
            context=context,
            flags=[f for f in source.flags if f != "fuzzy"] + (["fuzzy"] if fuzzy else []),
        )
        changed[domain] = catalog
        result.updated.append(context)
    for domain, catalog in changed.items():
        path = found.files.get((domain, language)) or found.domain(domain).path(language, into)
        write_catalog(catalog, path)
    if changed:
        i18n.reload()
    return result


async def apply_content(
    admin: Admin, actor: Actor, language: str, imported: Catalog, now: datetime
) -> ContentImport:
    """Write the file's translations of the campaign's texts (`content:...` messages) into
    the updates and demands, through the admin use cases. A text whose source wording
    changed since the export is left alone (outdated): export again."""
    result = ContentImport()
    grouped = group_content(
        (m.context, m.id, m.string, m.fuzzy)
        for m in imported
        if m.context and isinstance(m.id, str) and isinstance(m.string, str)
    )
    first = admin.campaign.default_language
    for target, fields in grouped.items():
        sure = {name: v for name, v in fields.items() if v[1].strip() and not v[2]}
        if len(sure) < len([v for v in fields.values() if v[1].strip()]):
            result.fuzzy.append(target)
        if not sure:
            continue
        kind, _, ident = target.partition(":")
        async with admin.store.read() as tx:
            if kind == "update" and ident.isdigit():
                update = await tx.get_update(int(ident), now)
                sources = update_fields(update).get(first) if update is not None else None
            elif kind == "demand":
                demand = await tx.get_demand(ident)
                sources = demand_fields(demand).get(first) if demand is not None else None
            else:
                sources = None
        if sources is None or any(name not in sources for name in sure):
            result.unknown.append(target)
            continue
        if any(sources[name] != source for name, (source, _, _) in sure.items()):
            result.outdated.append(target)
            continue
        texts = {name: translation.strip() for name, (_, translation, _) in sure.items()}
        if kind == "update":
            assert update is not None
            base = update.texts.get(language) or UpdateText("")
            wording = replace(base, **texts)
            await admin.edit(
                actor,
                update.id,
                Changes(texts={language: wording}),
                reason=f"translation into {language} imported",
                translating=True,
            )
        else:
            await admin.translate_demand(actor, ident, language, texts)
        result.applied.append(target)
    return result
