"""A third-party platform installs like any Python package and needs no change to the core.

The test installs a throwaway plugin, "carrier pigeon", as an installer would (a package and
its `.dist-info` with an `entry_points.txt` declaring `strikebot.adapters`, and its own
catalogue of sentences beside its package), then runs the real `strikebot run`: the plugin
is found through the registry, speaks Spanish from its own catalogue, its campaign-file
admins count, it answers commands through the core and receives the update an admin posts
there.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

from tests.support import ROOT, free_port, run_env, wait_until_serving

PLUGIN = '''
"""Carrier pigeons: deliveries land in a file (the loft), commands arrive over HTTP."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from aiohttp import web
from pydantic import Field

from bot.ports import (
    Actor, ChannelRef, CommandContext, OutboundMessage, Pacing, Plugin, PluginContext,
    PluginSettings, i18n,
)


class PigeonSettings(PluginSettings):
    loft: str | None = Field(default=None, alias="PIGEON_LOFT")

    @property
    def enabled(self) -> bool:
        return self.loft is not None


class Pigeons:
    platform = "pigeon"

    def __init__(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        self.loft = Path(ctx.settings_as(PigeonSettings).loft or "loft.jsonl")

    @property
    def pacing(self) -> Pacing:
        return Pacing(global_per_second=20.0, per_channel_per_second=5.0)

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def health(self) -> Mapping[str, object]:
        return {"connected": True}

    def _land(self, event: str, channel: ChannelRef, message: OutboundMessage) -> None:
        with self.loft.open("a", encoding="utf-8") as loft:
            line = {"event": event, "channel": channel.channel, "title": message.title}
            loft.write(json.dumps(line) + "\\n")

    async def send(self, channel: ChannelRef, message: OutboundMessage, *,
                   idempotency_key: str) -> str:
        self._land("send", channel, message)
        return idempotency_key

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        self._land("edit", channel, message)

    async def delete(self, channel: ChannelRef, message_id: str) -> None: ...

    def mount(self, app: web.Application) -> None:
        app.router.add_post("/pigeon/command", self.command)

    async def command(self, request: web.Request) -> web.Response:
        data = await request.json()
        if data["text"] == "landed?":  # a sentence from the plugin's own catalogue
            words = i18n.Words("pigeon")[data.get("lang", "en")]
            return web.json_response({"ok": True, "title": words["landed"]})
        asker = CommandContext(
            platform="pigeon", actor=Actor("pigeon", data["user"]), workspace="loft",
            channel=data["channel"],
        )
        reply = await self.ctx.commands.handle(asker, data["text"])
        return web.json_response({"ok": reply.ok, "title": reply.message.title})


plugin = Plugin(
    name="pigeon", title="Carrier pigeon", create=Pigeons, settings=PigeonSettings,
    address_example="pigeon:loft/roof",
)
'''


TEMPLATE = """msgid ""
msgstr ""
"Language: en\\n"
"Content-Type: text/plain; charset=utf-8\\n"

msgctxt "pigeon.landed"
msgid "The pigeon landed."
msgstr ""
"""


def install(site: Path) -> None:
    """What pip leaves behind for a distribution: the package (with its own catalogue of
    sentences, in English and Spanish) and its metadata."""
    package = site / "pigeon_adapter"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    locales = package / "locales"
    (locales / "es" / "LC_MESSAGES").mkdir(parents=True)
    (locales / "strikebot-pigeon.pot").write_text(TEMPLATE, encoding="utf-8")
    spanish = TEMPLATE.replace("Language: en", "Language: es").replace(
        'msgstr ""\n', 'msgstr "La paloma aterrizó."\n'
    )
    (locales / "es" / "LC_MESSAGES" / "strikebot-pigeon.po").write_text(spanish, encoding="utf-8")
    info = site / "pigeon_adapter-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pigeon-adapter\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[strikebot.adapters]\npigeon = pigeon_adapter:plugin\n", encoding="utf-8"
    )
    (info / "RECORD").write_text("", encoding="utf-8")


def ask(base: str, user: str, text: str, lang: str = "en") -> dict[str, object]:
    body = json.dumps({"user": user, "channel": "roof", "text": text, "lang": lang}).encode()
    request = urllib.request.Request(  # noqa: S310 (loopback only)
        f"{base}/pigeon/command", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        answer: dict[str, object] = json.loads(response.read())
        return answer


def wait_for_lines(loft: Path, count: int, within: float = 20.0) -> list[dict[str, str]]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if loft.exists():
            lines = [json.loads(x) for x in loft.read_text(encoding="utf-8").splitlines()]
            if len(lines) >= count:
                return lines
        time.sleep(0.05)
    raise AssertionError(f"the loft got fewer than {count} messages within {within}s")


def test_strikebot_run_loads_an_installed_plugin_answers_through_it_and_delivers_to_it(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    install(site)
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(
        (ROOT / "config" / "strike.toml").read_text(encoding="utf-8")
        + textwrap.dedent(
            """
            [admins.pigeon]
            user_ids = ["coo"]
            """
        ),
        encoding="utf-8",
    )
    loft = tmp_path / "loft.jsonl"
    port = free_port()
    env = run_env(tmp_path, port) | {
        "PYTHONPATH": str(site),
        "STRIKEBOT_CONFIG": str(campaign),
        "PIGEON_LOFT": str(loft),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, f"{base}/healthz")
        assert ask(base, "someone", "landed?")["title"] == "The pigeon landed."
        assert ask(base, "someone", "landed?", "es")["title"] == "La paloma aterrizó."
        status = ask(base, "someone", "status")
        assert status["ok"] is True and "Where things stand" in str(status["title"])
        refused = ask(base, "someone", "subscribe")
        assert refused["ok"] is False
        assert ask(base, "coo", "subscribe")["ok"] is True
        posted = ask(base, "coo", 'post strike_on "Pigeons carry the news"')
        assert posted["ok"] is True
        (delivered,) = wait_for_lines(loft, 1)
        assert delivered == {
            "event": "send",
            "channel": "roof",
            "title": "Pigeons carry the news",
        }
        with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:  # noqa: S310
            assert json.loads(response.read())["adapters"]["pigeon"] == {"connected": True}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    output = proc.stdout.read().decode() if proc.stdout else ""
    assert "delivering to: console, pigeon" in output
