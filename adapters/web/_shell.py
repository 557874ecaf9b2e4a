"""The page shell every HTML answer shares: its language from the address, what base.html
needs, a template rendered as an answer, and the short message pages (not found,
unavailable). Apart from the application and the page handlers, so both use it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import jinja2

from bot.ports import Campaign, i18n

from ._cache import Rendered
from ._present import TEXT, page_prefix, say

HTML = "text/html; charset=utf-8"


def language_of_path(path: str, campaign: Campaign) -> str:
    first = path.strip("/").split("/", 1)[0]
    return first if first in campaign.languages else campaign.default_language


def base_context(
    campaign: Campaign, lang: str, suffix: str, status_css: str, **extra: Any
) -> dict[str, Any]:
    """What base.html needs: wording, links to the same page in other languages, CSS."""
    t = TEXT[lang]
    prefix = page_prefix(lang, campaign)
    alternates = [
        {"lang": other, "href": f"{campaign.public_url}{page_prefix(other, campaign)}{suffix}"}
        for other in campaign.languages
    ]
    feeds = [
        {
            "lang": other,
            "atom": f"{page_prefix(other, campaign)}/feed.atom",
            "ics": f"{page_prefix(other, campaign)}/calendar.ics",
            "atom_title": say(lang, "feed_in", language=_name(other)),
            "ics_title": say(lang, "calendar_in", language=_name(other)),
        }
        for other in sorted(campaign.languages, key=lambda code: code != lang)  # its own first
    ]
    switch = [
        {
            "lang": other,
            "href": f"{page_prefix(other, campaign)}{suffix}",
            "name": i18n.language_name(other),  # each in its own words (CLDR)
        }
        for other in campaign.languages
        if other != lang
    ]
    context: dict[str, Any] = {
        "lang": lang,
        "t": t,
        "campaign": campaign,
        "prefix": prefix,
        "title": say(lang, "title", union=campaign.union),
        "description": say(lang, "description", union=campaign.union),
        "canonical": f"{campaign.public_url}{prefix}{suffix}",
        "alternates": alternates,
        "switch": switch,
        "feeds": feeds,
        "status_css": status_css,
        "with_employer": say(lang, "with", employer=campaign.employer),
        "last_updated": "",
    }
    context.update(extra)
    return context


def _name(code: str) -> i18n.Term:
    """A language's name as a piece of a sentence (CLDR, in the sentence's language)."""
    return i18n.local(lambda shown_in: i18n.language_name(code, shown_in))


def render_page(
    templates: jinja2.Environment,
    template: str,
    context: dict[str, Any],
    status: int = 200,
    modified: datetime | None = None,
) -> Rendered:
    """`template` rendered with `context` as an HTML answer in the context's language."""
    body = templates.get_template(template).render(context)
    return Rendered(body.encode(), HTML, status, modified, context["lang"])


def message_rendered(
    templates: jinja2.Environment,
    campaign: Campaign,
    status_css: str,
    path: str,
    status: int,
    title_key: str,
    text_key: str,
) -> Rendered:
    """A short page (not found, unavailable) in the language of `path`; no store read."""
    lang = language_of_path(path, campaign)
    context = base_context(campaign, lang, "/", status_css)
    context["title"] = f"{TEXT[lang][title_key]} — {campaign.union}"
    context["heading"] = TEXT[lang][title_key]
    context["message"] = TEXT[lang][text_key]
    return render_page(templates, "message.html", context, status)
