"""Shared by the web tests: the web plugin's context, a served app, a small HTML tree.

The strike week they read is `tests.strike_week`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.web import build_app
from bot.clock import FixedClock
from bot.models import Campaign
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.support import CAMPAIGN, plugin_ctx

TOKEN = "test-admin-token-0123456789abcdef"


def web_context(
    store: Store,
    clock: FixedClock,
    *,
    admin_token: str | None = TOKEN,
    campaign: Campaign = CAMPAIGN,
    trusted_proxies: str | None = None,
) -> PluginContext:
    """The web plugin's context, as `strikebot run` builds it."""
    env = {"STRIKEBOT_ADMIN_TOKEN": admin_token} if admin_token else {}
    if trusted_proxies is not None:
        env["STRIKEBOT_TRUSTED_PROXIES"] = trusted_proxies
    return plugin_ctx("web", store, clock, env=env, campaign=campaign)


@asynccontextmanager
async def client_for(
    ctx: PluginContext, *others: object
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    """The real app on 127.0.0.1 (a free port), with an aiohttp client pointed at it."""
    server = TestServer(build_app(ctx, *others), host="127.0.0.1", port=0)
    client: TestClient[web.Request, web.Application] = TestClient(server)
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


# -- a small HTML tree, enough to assert on landmarks, tables and struck-through text ----------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}  # fmt: skip


@dataclass(slots=True)
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str]

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split())

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Descendants with this tag whose attributes include `attrs` (class_ = one class)."""
        found: list[Node] = []
        for child in self.children:
            if isinstance(child, Node):
                if _matches(child, tag, attrs):
                    found.append(child)
                found.extend(child.all(tag, **attrs))
        return found

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"expected one <{tag} {attrs}>, found {len(found)}"
        return found[0]


def _matches(node: Node, tag: str | None, attrs: dict[str, str]) -> bool:
    if tag is not None and node.tag != tag:
        return False
    for key, value in attrs.items():
        if key == "class_":
            if value not in node.attrs.get("class", "").split():
                return False
        elif node.attrs.get(key) != value:
            return False
    return True


def parse_html(html: str) -> Node:
    from html.parser import HTMLParser

    root = Node("#document", {}, [])
    stack = [root]

    class Builder(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            node = Node(tag, {k: v or "" for k, v in attrs}, [])
            stack[-1].children.append(node)
            if tag not in _VOID:
                stack.append(node)

        def handle_endtag(self, tag: str) -> None:
            for i in range(len(stack) - 1, 0, -1):
                if stack[i].tag == tag:
                    del stack[i:]
                    return

        def handle_data(self, data: str) -> None:
            stack[-1].children.append(data)

    Builder(convert_charrefs=True).feed(html)
    return root
