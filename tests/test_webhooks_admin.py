"""Managing webhooks from the admin HTTP API and from `strikebot webhooks`: the same core use
cases, the secret shown once, private addresses refused, a test event that the reference
`standardwebhooks` package verifies at the receiver."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from adapters.webhooks import WebhookAdapter
from bot.cli import main
from bot.clock import FixedClock
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.store import Store
from tests.fakes.receiver import Receiver
from tests.support import ROOT, campaign_config, plugin_ctx
from tests.web_support import TOKEN, client_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
LOOPBACK = {"allowed_networks": ["127.0.0.0/8"]}


def web_ctx(store: Store, clock: FixedClock) -> Any:
    config = campaign_config(webhooks=LOOPBACK)
    return plugin_ctx("web", store, clock, env={"STRIKEBOT_ADMIN_TOKEN": TOKEN}, config=config)


async def test_admin_api_adds_lists_tests_and_removes_webhooks(
    sqlite_store: Store, clock: FixedClock
) -> None:
    ctx = web_ctx(sqlite_store, clock)
    async with Receiver() as receiver, client_for(ctx) as client:
        base = "/api/v1/admin/webhooks"
        assert (await client.get(base)).status == 401  # no token
        refused = await client.post(base, json={"url": "http://10.0.0.7/hook"}, headers=AUTH)
        assert refused.status == 422
        message = (await refused.json())["error"]["message"]
        assert "10.0.0.7 is a private address" in message and "allowed_networks" in message
        bad = await client.post(base, json={"url": receiver.url, "extra": 1}, headers=AUTH)
        assert bad.status == 422

        added = await client.post(
            base, json={"url": receiver.url, "description": "Union site"}, headers=AUTH
        )
        assert added.status == 201
        assert added.headers["Cache-Control"] == "no-store"
        body = await added.json()
        assert body["secret"].startswith("whsec_") and body["state"] == "ok"
        receiver.secret = body["secret"]
        webhook_id = body["id"]
        assert added.headers["Location"] == f"{base}/{webhook_id}"
        again = await client.post(base, json={"url": receiver.url}, headers=AUTH)
        assert again.status == 409

        listed = await (await client.get(base, headers=AUTH)).json()
        assert [w["url"] for w in listed["webhooks"]] == [receiver.url]
        assert "secret" not in json.dumps(listed)  # shown once, at creation
        one = await client.get(f"{base}/{webhook_id}", headers=AUTH)
        assert (await one.json())["description"] == "Union site"
        assert (await client.get(f"{base}/999", headers=AUTH)).status == 404
        assert (await client.get(f"{base}/abc", headers=AUTH)).status == 404

        queued = await client.post(f"{base}/{webhook_id}/test", headers=AUTH)
        assert queued.status == 202
        delivery_id = (await queued.json())["delivery_id"]
        adapter = WebhookAdapter(
            plugin_ctx("webhooks", sqlite_store, clock, config=campaign_config(webhooks=LOOPBACK))
        )
        await adapter.start()
        try:
            dispatcher = Dispatcher(
                sqlite_store,
                {"webhooks": adapter},
                ctx.campaign,
                clock,
                settings=campaign_config().delivery,
                timings=Timings(inline_retry_limit=0.0),
            )
            await dispatcher.drain()
        finally:
            await adapter.stop()
        [request] = receiver.requests
        assert request.verified and request.webhook_id == delivery_id
        assert request.event is not None and request.event["type"] == "webhook.test"

        removed = await client.delete(f"{base}/{webhook_id}", headers=AUTH)
        assert (await removed.json())["state"] == "removed"
        assert (await (await client.get(base, headers=AUTH)).json())["webhooks"] == []
    async with sqlite_store.read() as tx:
        actions = [a.action for a in await tx.list_audit() if a.actor.startswith("http:")]
    assert {"webhook.add", "webhook.test", "webhook.remove"} <= set(actions)


async def test_strikebot_webhooks_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("STRIKEBOT_CONFIG", "STRIKEBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "strike.toml"
    shipped = (ROOT / "config" / "strike.toml").read_text(encoding="utf-8")
    assert "\nallowed_networks = []\n" in shipped  # the [webhooks] section's
    config.write_text(
        shipped.replace("\nallowed_networks = []\n", '\nallowed_networks = ["127.0.0.0/8"]\n'),
        encoding="utf-8",
    )
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"

    async def strikebot(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = await asyncio.to_thread(
            main, ["--config", str(config), "--database-url", url, *args]
        )
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    async with Receiver() as receiver:
        code, out, err = await strikebot("webhooks", "add", "http://192.168.0.9/x")
        assert code != 0 and "192.168.0.9 is a private address" in err
        code, out, _ = await strikebot("webhooks", "add", receiver.url, "--json")
        assert code == 0
        created = json.loads(out)
        receiver.secret = created["secret"]
        code, out, _ = await strikebot("webhooks", "list")
        assert f"#{created['id']} {receiver.url}" in out and "ok" in out
        assert created["secret"] not in out
        code, out, _ = await strikebot("webhooks", "test", receiver.url, "--json")
        result = json.loads(out)
        assert code == 0 and result["ok"] and result["status"] == 204
        [request] = receiver.requests
        assert request.verified and request.webhook_id == result["webhook_id"]
        code, out, _ = await strikebot("webhooks", "remove", str(created["id"]))
        assert code == 0 and "Removed webhook" in out
        code, out, _ = await strikebot("webhooks", "list", "--json")
        assert json.loads(out) == []
