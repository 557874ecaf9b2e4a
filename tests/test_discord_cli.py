"""`strikebot discord sync|invite` as a real subprocess against the fake Discord."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from tests.fakes.discord import GUILD_ID, ROOT, FakeDiscord


async def strikebot(
    fake: FakeDiscord, tmp_path: Path, *args: str, config: Path | None = None
) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "STRIKEBOT_"))}
    env |= {
        "DISCORD_TOKEN": fake.token,
        "DISCORD_API_BASE": fake.base_url,  # a bare host: /api/v10 is added
        "STRIKEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
        "STRIKEBOT_CONFIG": str(config or ROOT / "config" / "strike.toml"),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args,
        env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_sync_global_on_request_and_to_a_guild(tmp_path: Path) -> None:
    async with FakeDiscord() as fake:
        code, out, err = await strikebot(
            fake, tmp_path, "discord", "sync", "--guild", GUILD_ID, "--global", "--json"
        )

    assert code == 0, err
    assert json.loads(out) == {
        "results": {GUILD_ID: "synced 1 command(s)", "global": "synced 1 command(s)"},
        "ok": True,
    }
    assert [c["name"] for c in fake.commands[None]] == ["strike"]
    assert [c["name"] for c in fake.commands[GUILD_ID]] == ["strike"]
    assert fake.identifies == 0  # REST only: no gateway session


async def test_sync_without_a_server_says_where_to_list_one(tmp_path: Path) -> None:
    shipped = (ROOT / "config" / "strike.toml").read_text(encoding="utf-8")
    config = tmp_path / "strike.toml"
    config.write_text(re.sub(r"(?m)^guild_ids = .*$", "guild_ids = []", shipped), encoding="utf-8")
    async with FakeDiscord() as fake:
        code, _out, err = await strikebot(fake, tmp_path, "discord", "sync", config=config)

    assert code == 2
    assert "[discord] guild_ids" in err and "--global" in err
    assert fake.commands == {}


async def test_invite_prints_the_link_with_scopes_and_permissions(tmp_path: Path) -> None:
    async with FakeDiscord() as fake:
        code, out, err = await strikebot(fake, tmp_path, "discord", "invite", "--json")

    assert code == 0, err
    invite = json.loads(out)
    assert invite["url"].startswith("https://discord.com/oauth2/authorize?client_id=")
    assert fake.application_id in invite["url"]
    assert "scope=bot+applications.commands" in invite["url"]
    assert f"permissions={invite['permissions']}" in invite["url"]
