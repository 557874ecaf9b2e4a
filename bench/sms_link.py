"""What a preferences link in every text would cost: each update of the demo campaign
(`config/strike.toml`), in each of its languages, rendered as the SMS plugin sends it, with
and without a person's preferences link on a line of its own (`https://<host>/p/<20
characters>`, `/es/p/...` in Spanish). It prints, per language, how many texts would take
another segment (uncut, `--budget 0`) or lose words to the cut (`[sms] max_segments`), and
the segments a link adds on average. docs/email-sms.md ("The preferences link in texts")
gives the figures and the decision they led to.

    .venv/bin/python -m bench.sms_link [--host https://strike.utla.net] [--budget 2]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from datetime import UTC, datetime

from adapters.sms import count, render_text
from bot.config import load_config
from bot.messages.compose import page_url, update_message
from bot.models import Update, UpdateState, UpdateText

TOKEN = "AbCdEfGhIjKlMnOpQrSt"  # a token's length: 20 URL-safe characters


def measure(host: str, budget: int) -> dict[str, dict[str, object]]:
    config = load_config("config/strike.toml")
    campaign = config.to_campaign()
    campaign = replace(campaign, public_url=host)
    sender = "UTLA"
    found: dict[str, dict[str, object]] = {}
    for lang in campaign.languages:
        link = "\n" + page_url(campaign, lang, f"/p/{TOKEN}")
        more, cut, added, natural = 0, 0, [], []
        lost: list[int] = []
        flashes: list[tuple[int, int]] = []
        seeded = config.updates
        for number, entry in enumerate(seeded, 1):
            update = Update(
                id=number,
                status=entry.status,
                urgency=entry.urgency,
                texts=entry.texts(),
                author="admin",
                created_at=entry.published_at or datetime(2019, 1, 1, tzinfo=UTC),
                state=UpdateState.PUBLISHED,
                next_step_at=entry.next_step_at,
                published_at=entry.published_at,
            )
            message = update_message(update, lang, campaign)
            flash = update_message(replace(update, texts=_headlines(update)), lang, campaign)
            short = render_text(flash, sender=sender, max_segments=budget or 99)
            flashes.append((count(short).count, count(short + link).count))
            whole = render_text(message, sender=sender, max_segments=99)
            alone, linked = count(whole).count, count(whole + link).count
            added.append(linked - alone)
            more += linked > alone
            natural.append(alone)
            if budget:  # the link as part of the tail the cut keeps: what it costs in words
                sent = render_text(message, sender=sender, max_segments=budget)
                tail = replace(message, url=f"{message.url}{link}")
                with_link = render_text(tail, sender=sender, max_segments=budget)
                cut += with_link.removesuffix(link) != sent
                lost.append(len(sent) - len(with_link.removesuffix(link)))
        found[lang] = {
            "texts": len(seeded),
            "another_segment": more,
            "segments_without_link": natural,
            "words_cut_at_budget": cut,
            "segments_added_mean": round(statistics.mean(added), 2),
            "characters_of_news_lost_mean": round(statistics.mean(lost), 1) if lost else 0,
            # A headline alone (an urgent flash): its segments without and with the link.
            "headline_only_segments": flashes,
            "link_characters": len(link) - 1,
        }
    return found


def _headlines(update: Update) -> dict[str, UpdateText]:
    return {lang: UpdateText(text.headline) for lang, text in update.texts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="https://strike.utla.net")
    parser.add_argument("--budget", type=int, default=2)
    args = parser.parse_args()
    for lang, figures in measure(args.host, args.budget).items():
        print(lang, figures)


if __name__ == "__main__":
    main()
