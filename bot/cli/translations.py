"""`strikebot translations`: the translators' workflow.

    strikebot translations report                  # what is missing or stale, per language
    strikebot translations report --check          # exit 1 if anything is (for CI)
    strikebot translations export es -o es.po      # the catalogue + the campaign's gaps
    strikebot translations import es.po            # back: catalogue file + campaign texts
    strikebot translations confirm update:12 es    # the Spanish still says the same

See docs/translating.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from babel.messages.pofile import write_po
from rich.markup import escape

from bot import i18n
from bot.cli import add_json_flag, open_context, out, print_json
from bot.editorial.parsing import parse_language
from bot.editorial.translations import content_gaps
from bot.editorial.translator_files import (
    apply_content,
    catalogue_status,
    export_catalog,
    import_catalogue,
    language_code,
    read_translation_file,
    write_catalog,
)
from bot.errors import InvalidInput
from bot.plugins.admins import CLI_ACTOR


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "translations",
        help="translators' workflow: report what is missing or stale, export, import, confirm",
        description="Each language is a gettext catalogue (the bot's own sentences) plus the "
        "campaign's texts in it. report says what is missing or stale per language; export "
        "writes one .po file for a translator; import takes it back; confirm says a stale "
        "translation still says the same. See docs/translating.md.",
    )
    commands = parser.add_subparsers(dest="translations_command", metavar="ACTION")
    commands.required = True

    report = commands.add_parser(
        "report", help="what is missing or stale, per language (catalogue and campaign)"
    )
    report.add_argument(
        "--lang",
        action="append",
        metavar="LANG",
        help="only this language (repeatable); default: the campaign's other languages",
    )
    report.add_argument(
        "--check", action="store_true", help="exit with status 1 if anything is missing or stale"
    )
    add_json_flag(report)
    report.set_defaults(handler=report_handler)

    export = commands.add_parser(
        "export", help="write a .po file for a translator: the catalogue and the campaign's gaps"
    )
    export.add_argument("language", metavar="LANG", help="the language to translate into")
    export.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="where to write (default: stdout)"
    )
    export.add_argument(
        "--catalogue-only", action="store_true", help="leave out the campaign's texts"
    )
    export.set_defaults(handler=export_handler)

    imp = commands.add_parser(
        "import", help="take a translated .po file back: catalogue file and campaign texts"
    )
    imp.add_argument("file", type=Path, metavar="FILE", help="a file written by export")
    imp.add_argument("--lang", metavar="LANG", help="its language, if its header does not say")
    imp.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="for a new language: the locales directory to create its catalogue in "
        f"(default: ${i18n.LOCALES_ENV}'s first, else bot/locales)",
    )
    add_json_flag(imp)
    imp.set_defaults(handler=import_handler)

    confirm = commands.add_parser(
        "confirm", help="say a stale translation still says what the edited language says"
    )
    confirm.add_argument("target", help="what: update:12 or demand:pay")
    confirm.add_argument("language", metavar="LANG", help="the stale language")
    confirm.add_argument("--note", default="", help="why it still holds (kept in the audit log)")
    add_json_flag(confirm)
    confirm.set_defaults(handler=confirm_handler)


async def report_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        languages = [language_code(v) for v in args.lang or []] or list(campaign.languages[1:])
        async with ctx.store.read() as tx:
            gaps = await content_gaps(
                tx,
                campaign,
                ctx.clock(),
                [lang for lang in languages if lang in campaign.languages],
            )
    report: dict[str, dict[str, object]] = {}
    incomplete = False
    for language in languages:
        status = catalogue_status(language)
        own = [g for g in gaps if g.language == language]
        report[language] = {
            "name": i18n.language_name(language, i18n.source_language()),
            "catalogue": status.as_json(),
            "campaign": [g.as_json() for g in own],
        }
        incomplete |= bool(status.missing or status.stale or own)
    if args.json:
        print_json({"source": i18n.source_language(), "languages": report})
        return 1 if args.check and incomplete else 0
    if not languages:
        out.print(
            f"The campaign speaks only {campaign.default_language}: nothing to translate. Add a "
            "language to [campaign] languages (docs/translating.md)."
        )
    for language in languages:
        status = catalogue_status(language)
        own = [g for g in gaps if g.language == language]
        name = i18n.language_name(language, i18n.source_language())
        where = status.path or "no catalogue file yet"
        out.print(f"[bold]{language}[/] ({escape(name)}) — {escape(str(where))}")
        out.print(
            f"  catalogue: {status.total} messages, {status.translated} translated, "
            f"{len(status.missing)} missing, {len(status.stale)} stale"
        )
        for context in (*status.missing, *status.stale)[:10]:
            what = "missing" if context in status.missing else "stale"
            out.print(f"    {escape(context)}: {what}")
        if len(status.missing) + len(status.stale) > 10:
            out.print(f"    … and {len(status.missing) + len(status.stale) - 10} more (--json)")
        if language not in campaign.languages:
            out.print("  campaign: not one of the campaign's languages")
            continue
        missing = sum(1 for g in own if g.missing)
        stale = sum(1 for g in own if g.stale is not None)
        out.print(f"  campaign: {missing} texts missing fields, {stale} stale")
        for gap in own:
            parts = []
            if gap.missing:
                parts.append("missing " + ", ".join(gap.missing))
            if gap.stale is not None:
                parts.append(
                    f"stale since {gap.stale.since:%Y-%m-%d %H:%M} UTC "
                    f"({gap.stale.edited.replace(',', ', ')} edited by {gap.stale.editor})"
                )
            where = " (in the campaign file's [families])" if gap.target == "families" else ""
            out.print(f"    {escape(gap.target)}: {escape('; '.join(parts))}{where}")
    return 1 if args.check and incomplete else 0


async def export_handler(args: argparse.Namespace) -> int:
    language = language_code(args.language)
    if language == i18n.source_language():
        raise InvalidInput(
            f"{language!r} is the language the sentences are written in; export another one."
        )
    catalog = None
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        gaps = []
        if not args.catalogue_only and language in campaign.languages:
            async with ctx.store.read() as tx:
                gaps = await content_gaps(tx, campaign, ctx.clock(), [language])
        catalog = export_catalog(language, gaps)
    if args.output is None:
        write_po(sys.stdout.buffer, catalog, width=88, sort_output=False, include_previous=True)
        sys.stdout.flush()
        return 0
    write_catalog(catalog, args.output)
    content = sum(1 for m in catalog if m.context and m.context.startswith("content:"))
    out.print(
        f"Wrote {escape(str(args.output))}: {len(catalog) - content} catalogue messages and "
        f"{content} campaign texts in {language}. Give it to a translator, then run "
        f"`strikebot translations import {escape(str(args.output))}`."
    )
    return 0


async def import_handler(args: argparse.Namespace) -> int:
    language, imported = read_translation_file(args.file, args.lang)
    into = args.into
    if into is None:
        extra = i18n.catalogue_dirs()[1:]  # the ones named in STRIKEBOT_LOCALES
        into = extra[0] if extra else None
    result = import_catalogue(language, imported, into)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        content = None
        if language in campaign.languages:
            content = await apply_content(ctx.admin, CLI_ACTOR, language, imported, ctx.clock())
        elif any(m.context and m.context.startswith("content:") for m in imported):
            raise InvalidInput(
                f"{language!r} is not one of the campaign's languages; its campaign texts "
                "cannot be imported. Add it to [campaign] languages first."
            )
    if args.json:
        print_json(
            {
                "language": language,
                "catalogue": {
                    "file": str(result.path),
                    "updated": result.updated,
                    "outdated": result.outdated,
                    "unknown": result.unknown,
                    "broken": result.broken,
                },
                "campaign": None
                if content is None
                else {
                    "applied": content.applied,
                    "outdated": content.outdated,
                    "unknown": content.unknown,
                    "fuzzy": content.fuzzy,
                },
            }
        )
        return 0
    out.print(
        f"{language}: {len(result.updated)} catalogue messages written to "
        f"{escape(str(result.path))}"
        + (
            f"; {len(result.outdated)} translated an older sentence (export again)"
            if result.outdated
            else ""
        )
        + (f"; {len(result.unknown)} unknown" if result.unknown else "")
        + (
            f"; left out, with blanks the English does not have: {', '.join(result.broken)}"
            if result.broken
            else ""
        )
        + "."
    )
    if content is not None:
        out.print(
            f"Campaign texts: {len(content.applied)} written"
            + (f" ({', '.join(content.applied)})" if content.applied else "")
            + (
                f"; {len(content.outdated)} changed since the export, left alone: "
                f"{', '.join(content.outdated)}"
                if content.outdated
                else ""
            )
            + (f"; {len(content.fuzzy)} marked unsure (fuzzy), left alone" if content.fuzzy else "")
            + (f"; unknown: {', '.join(content.unknown)}" if content.unknown else "")
            + "."
        )
    return 0


async def confirm_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        language = parse_language(args.language, ctx.admin.campaign.languages)
        target = args.target.strip()
        kind, _, ident = target.partition(":")
        if kind not in ("update", "demand") or not ident:
            raise InvalidInput(f"{target!r} is not a text; write update:12 or demand:pay.")
        done = await ctx.admin.confirm_translation(CLI_ACTOR, target, language, note=args.note)
    if args.json:
        print_json({"target": target, "language": language, "confirmed": done})
        return 0
    if done:
        out.print(f"{target}: the {language} text is current again.")
    else:
        out.print(f"{target}: the {language} text was not stale; nothing to confirm.")
    return 0
