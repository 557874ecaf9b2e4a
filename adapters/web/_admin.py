"""The admin HTTP API: the same use cases (and audit log) as chat and the CLI.

Every path under /api/v1/admin/ is behind the bearer token (see `_app.admin_refusal`); the
actor recorded in the audit log is `http:admin-api`. Bodies are JSON objects validated by
the models in `_schemas`; a malformed body is a 400, a body that breaks a rule a 422.
"""

from __future__ import annotations

import json
from typing import Literal, NoReturn, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.ports import (
    Action,
    Actor,
    Audience,
    DemandResult,
    DemandWording,
    InvalidInput,
    NotFound,
    PluginContext,
    Problems,
    Proposal,
    Site,
    SiteGroup,
    TextPatch,
    Update,
    local_zone,
)

from ._app import ADMIN_PREFIX, json_response, state_of, storable
from ._schemas import (
    AdminUpdateOut,
    BadRequest,
    ConfirmTranslationIn,
    ConfirmTranslationOut,
    DemandAddIn,
    DemandChangedOut,
    DemandChangeIn,
    DemandEditIn,
    DemandRetireIn,
    DemandWordingIn,
    EditUpdateIn,
    PlaceIn,
    PlaceListOut,
    PlaceOut,
    PlacePatchIn,
    PostUpdateIn,
    PreviewOut,
    RetractIn,
    SpendOut,
    StaleOut,
    demand_event_out,
    demand_out,
    problems,
    query_flag,
    refusal,
    revisions_out,
    update_out,
)

HTTP_ACTOR = Actor(platform="http", user_id="admin-api", display_name="admin API")
MAX_ID = 2**31 - 1

M = TypeVar("M", bound=BaseModel)


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_post(f"{ADMIN_PREFIX}/updates", post_update)
    r.add_patch(f"{ADMIN_PREFIX}/updates/{{id}}", edit_update)
    r.add_post(f"{ADMIN_PREFIX}/updates/{{id}}/retract", retract_update)
    r.add_post(f"{ADMIN_PREFIX}/updates/{{id}}/approve", approve_update)
    r.add_post(f"{ADMIN_PREFIX}/demands", add_demand)
    r.add_put(f"{ADMIN_PREFIX}/demands/{{key}}", record_demand)
    r.add_patch(f"{ADMIN_PREFIX}/demands/{{key}}", edit_demand)
    r.add_post(f"{ADMIN_PREFIX}/demands/{{key}}/retire", retire_demand)
    r.add_post(f"{ADMIN_PREFIX}/translations/confirm", confirm_translation)
    r.add_get(f"{ADMIN_PREFIX}/sites", list_places)
    r.add_post(f"{ADMIN_PREFIX}/sites", add_place)
    r.add_patch(f"{ADMIN_PREFIX}/sites/{{code}}", change_place)
    r.add_delete(f"{ADMIN_PREFIX}/sites/{{code}}", remove_place)


QUERY_PARAMETERS = frozenset({"dry_run"})  # what any admin write reads from its query


async def _body(request: web.Request, model: type[M], *, optional: bool = False) -> M:
    unknown = sorted(set(request.query) - QUERY_PARAMETERS)
    if unknown:
        raise BadRequest(
            400,
            "bad_query",
            f"Unknown query parameter {unknown[0][:40]!r}; the admin API takes only "
            "dry_run=true (on POST /api/v1/admin/updates).",
        )
    raw = await request.read()
    if not raw.strip():
        if optional:
            return model()
        raise BadRequest(400, "empty_body", "Send a JSON object in the request body.")
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(
            400, "bad_json", f"The body is not valid JSON ({exc}). Send a JSON object."
        ) from None
    except RecursionError:
        raise BadRequest(
            400, "bad_json", "The body is nested too deeply to read. Send a flat JSON object."
        ) from None
    if not isinstance(data, dict):
        raise BadRequest(400, "bad_json", 'The body must be a JSON object, e.g. {"reason": "..."}.')
    where = _unstorable(data)
    if where is not None:
        raise BadRequest(
            422,
            "invalid",
            f"{where}: text may not contain NUL characters (\\u0000) or unpaired surrogates. "
            "Remove them and send the request again.",
            [{"field": where, "problem": "unstorable character"}],
        )
    try:
        return model.model_validate_json(raw)  # strict: JSON's own types (_schemas)
    except ValidationError as exc:
        found = problems(exc)
        raise BadRequest(422, "invalid", refusal(found), found) from None


def _unstorable(data: object, where: str = "") -> str | None:
    """Where (a dotted field path) the body holds text no database can store: a NUL, which
    PostgreSQL refuses, or a lone surrogate, which is not UTF-8. None when all is well."""
    if isinstance(data, str):
        return None if storable(data) else where or "(body)"
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{where}.{key}" if where else str(key)
            if not storable(key):
                return where or "(body)"
            found = _unstorable(value, path)
            if found is not None:
                return found
    if isinstance(data, list):
        for index, value in enumerate(data):
            found = _unstorable(value, f"{where}.{index}" if where else str(index))
            if found is not None:
                return found
    return None


def _update_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_ID:
        raise NotFound(f"No update #{raw}. Update ids are whole numbers; see /api/v1/updates.")
    return int(raw)


async def _admin_view(request: web.Request, update: Update) -> web.Response:
    ctx = state_of(request).ctx
    async with ctx.reads() as tx:
        notes = await tx.revision_notes([update.id]) if update.revision > 1 else {}
        stale = await tx.stale_texts(f"update:{update.id}")
    note = notes.get(update.id)
    language = ctx.campaign.default_language
    body = AdminUpdateOut(
        **update_out(update, ctx.campaign, language, note),
        revisions=revisions_out(update, note),
        author=update.author,
        approved_by=update.approved_by,
        publish_at=update.publish_at,
        stale={
            s.language: StaleOut(since=s.since, edited=s.edited.split(","), editor=s.editor)
            for s in stale
        },
    )
    return json_response(body)


async def post_update(request: web.Request) -> web.StreamResponse:
    body = await _body(request, PostUpdateIn)
    proposal = Proposal(
        Action.POST,
        texts={lang: TextPatch(t.headline, t.body, t.next_step) for lang, t in body.texts.items()},
        status=body.status,
        urgency=body.urgency,
        next_step_at=body.next_step_at,
        publish_at=body.publish_at,
        clear_next_step=body.clear_next_step,
        history=body.history,
        audience=Audience.of(body.sites, body.groups),
    )
    if query_flag(request.query, "dry_run"):
        return await _dry_run(request, proposal)
    update = await _commit(request, proposal)
    response = await _admin_view(request, update)
    response.set_status(201)
    response.headers["Location"] = f"/api/v1/updates/{update.id}"
    return response


async def edit_update(request: web.Request) -> web.StreamResponse:
    update_id = _update_id(request)
    body = await _body(request, EditUpdateIn)
    proposal = Proposal(
        Action.CORRECT if body.correction else Action.EDIT,
        update_id=update_id,
        texts={
            lang: TextPatch(p.headline, p.body, p.next_step)
            for lang, p in (body.texts or {}).items()
        },
        status=body.status,
        urgency=body.urgency,
        next_step_at=body.next_step_at,
        clear_next_step="next_step_at" in body.model_fields_set and body.next_step_at is None,
        history=body.history,
        reason=body.reason,
        reasons=_other_reasons(body.reason, body.reasons, state_of(request).ctx),
    )
    return await _admin_view(request, await _commit(request, proposal))


async def retract_update(request: web.Request) -> web.StreamResponse:
    update_id = _update_id(request)
    body = await _body(request, RetractIn)
    proposal = Proposal(
        Action.RETRACT,
        update_id=update_id,
        reason=body.reason,
        reasons=_other_reasons(body.reason, body.reasons, state_of(request).ctx),
    )
    return await _admin_view(request, await _commit(request, proposal))


def _other_reasons(
    reason: str, others: dict[str, str] | None, ctx: PluginContext
) -> dict[str, str]:
    """`reasons`: the reason in the campaign's other languages (`reason` is the first's)."""
    main = ctx.campaign.default_language
    extra = dict(others or {})
    if extra.get(main, reason) != reason:
        raise InvalidInput(
            f"`reasons` gives another {main!r} reason than `reason`; give it once, in `reason`."
        )
    return {k: v for k, v in extra.items() if k != main}


class _Empty(BaseModel):
    model_config = {"extra": "forbid", "strict": True}


async def approve_update(request: web.Request) -> web.StreamResponse:
    update_id = _update_id(request)
    await _body(request, _Empty, optional=True)
    proposal = Proposal(Action.APPROVE, update_id=update_id)
    return await _admin_view(request, await _commit(request, proposal))


async def _dry_run(request: web.Request, proposal: Proposal) -> web.StreamResponse:
    """The desk's preview of `proposal`; it refuses what the post would refuse."""
    ctx = state_of(request).ctx
    shown = await ctx.desk.preview(HTTP_ACTOR, proposal, keep=False)
    if shown.problems:
        _refuse(Problems(shown.problems))
    found, language = shown.reach, ctx.campaign.default_language
    return json_response(
        PreviewOut(
            sentence=shown.sentence(language, local_zone(None, ctx.campaign)),
            channels=found.channels,
            receivers=found.receivers,
            people={s.platform: SpendOut(messages=s.messages, units=s.units) for s in found.spends},
            preview={lang: message.to_json() for lang, message in shown.messages.items()},
        )
    )


def _refuse(exc: Problems) -> NoReturn:
    details = [
        {"field": name, "problem": problem.message} for name, problem in exc.problems.items()
    ]
    raise BadRequest(422, "invalid", exc.message, details) from None


async def _commit(request: web.Request, proposal: Proposal) -> Update:
    """Carry `proposal` out through the desk; its problems are a 422 naming each field."""
    try:
        outcome = await state_of(request).ctx.desk.commit(HTTP_ACTOR, proposal)
    except Problems as exc:
        _refuse(exc)
    return outcome.update


async def record_demand(request: web.Request) -> web.StreamResponse:
    ctx = state_of(request).ctx
    key = request.match_info["key"]
    body = await _body(request, DemandChangeIn)
    result = await ctx.admin.record_demand(
        HTTP_ACTOR,
        key,
        status=body.status,
        offer=body.offer,
        source=body.source,
        note=body.note,
        at=body.at,
        announce=body.announce,
    )
    return _demand_view(request, result)


async def edit_demand(request: web.Request) -> web.StreamResponse:
    ctx = state_of(request).ctx
    key = request.match_info["key"]
    body = await _body(request, DemandEditIn)
    result = await ctx.admin.edit_demand(
        HTTP_ACTOR,
        key,
        {lang: _wording(w) for lang, w in (body.texts or {}).items()},
        reason=body.reason,
        status=body.status,
        announce=body.announce,
    )
    return _demand_view(request, result)


async def add_demand(request: web.Request) -> web.StreamResponse:
    ctx = state_of(request).ctx
    body = await _body(request, DemandAddIn)
    result = await ctx.admin.add_demand(
        HTTP_ACTOR,
        body.key,
        {lang: _wording(w) for lang, w in body.texts.items()},
        status=body.status,
        reason=body.reason,
        announce=body.announce,
    )
    return _demand_view(request, result, status=201)


async def retire_demand(request: web.Request) -> web.StreamResponse:
    ctx = state_of(request).ctx
    key = request.match_info["key"]
    body = await _body(request, DemandRetireIn)
    result = await ctx.admin.retire_demand(
        HTTP_ACTOR, key, reason=body.reason, announce=body.announce
    )
    return _demand_view(request, result)


def _wording(body: DemandWordingIn) -> DemandWording:
    return DemandWording(
        title=body.title,
        summary=body.summary,
        union_position=body.union_position,
        employer_offer=body.employer_offer,
        facts=body.facts,
    )


def _demand_view(
    request: web.Request, result: DemandResult, *, status: int = 200
) -> web.StreamResponse:
    ctx = state_of(request).ctx
    demand = result.demand
    return json_response(
        DemandChangedOut(
            **demand_out(demand, ctx.campaign.default_language),
            history=[demand_event_out(e) for e in demand.history],
            retired_at=demand.retired_at,
            announced_update_id=None if result.announced is None else result.announced.id,
        ),
        status=status,
    )


async def confirm_translation(request: web.Request) -> web.StreamResponse:
    """A stale language's text still says what the edited language says now."""
    ctx = state_of(request).ctx
    body = await _body(request, ConfirmTranslationIn)
    done = await ctx.admin.confirm_translation(
        HTTP_ACTOR, body.target, body.language, note=body.note
    )
    return json_response(
        ConfirmTranslationOut(target=body.target, language=body.language, confirmed=done)
    )


# -- sites and groups: the same use cases (and checks) as `strikebot sites import` ---------


def _place_out(place: Site | SiteGroup, counts: dict[tuple[str, str], int]) -> PlaceOut:
    kind: Literal["site", "group"] = "site" if isinstance(place, Site) else "group"
    return PlaceOut(
        kind=kind,
        code=place.code,
        names=dict(place.names),
        group=place.group if isinstance(place, Site) else None,
        address=place.address if isinstance(place, Site) else "",
        example=place.example,
        followers=counts.get((kind, place.code), 0),
    )


async def list_places(request: web.Request) -> web.StreamResponse:
    unknown = sorted(request.query)
    if unknown:
        raise BadRequest(400, "bad_query", f"Unknown query parameter {unknown[0][:40]!r}.")
    groups, sites, counts = await state_of(request).ctx.sites.followed()
    places: list[Site | SiteGroup] = [*groups, *sites]
    items = [_place_out(p, counts) for p in places]
    return json_response(PlaceListOut(items=items))


async def add_place(request: web.Request) -> web.StreamResponse:
    body = await _body(request, PlaceIn)
    place: Site | SiteGroup
    if body.kind == "group":
        if body.group is not None or body.address:
            raise InvalidInput("A group has no `group` or `address` of its own; leave them out.")
        place = SiteGroup(body.code, dict(body.names), body.example)
    else:
        if body.group is None:
            raise InvalidInput("A site needs its `group` (a group's code).")
        place = Site(body.code, dict(body.names), body.group, body.address, body.example)
    added = await state_of(request).ctx.sites.add(HTTP_ACTOR, place)
    response = json_response(_place_out(added, {}), status=201)
    response.headers["Location"] = f"{ADMIN_PREFIX}/sites/{added.code}"
    return response


async def change_place(request: web.Request) -> web.StreamResponse:
    body = await _body(request, PlacePatchIn)
    sites = state_of(request).ctx.sites
    changed = await sites.change(
        HTTP_ACTOR, request.match_info["code"], names=body.names, group=body.group,
        address=body.address,
    )  # fmt: skip
    _, _, counts = await sites.followed()
    return json_response(_place_out(changed, counts))


async def remove_place(request: web.Request) -> web.StreamResponse:
    await _body(request, _Empty, optional=True)
    removed = await state_of(request).ctx.sites.remove(HTTP_ACTOR, request.match_info["code"])
    return json_response(_place_out(removed, {}))
