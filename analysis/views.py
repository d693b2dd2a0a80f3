"""The analysis board's doors: the JSON API (docs/PROTOCOL.md, "Analysis") and its pages.
Each decodes, calls one service (analysis/services.py) and answers with the analysis."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import markdown
import msgspec
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.language import in_language
from accounts.tokens import ANY_SCOPE, accepts_tokens
from analysis import endgame_lookup, explorer_lookup, reviews, selectors, services
from analysis.models import Analysis
from analysis.protocol import NodeBody, PlayBody, ReviewBody, StartBody
from bots import searches
from bots.models import SearchJob
from games.messages import described_games
from games.models import Game
from games.selectors import title_for
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder

START_BODY = decoder(StartBody)
PLAY_BODY = decoder(PlayBody)
NODE_BODY = decoder(NodeBody)
REVIEW_BODY = decoder(ReviewBody)


def _signed_in(request: HttpRequest) -> Any:
    if not request.user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in (or play as a guest) to analyse."))
    return request.user


@require_http_methods(["GET", "POST"])
def api_analyses(request: HttpRequest) -> JsonResponse:
    """GET: your analyses, the latest first. POST: a new one."""
    try:
        user = _signed_in(request)
        if request.method == "GET":
            return JsonResponse({"analyses": selectors.listed(user)})
        body = decode(request.body or b"{}", START_BODY)
        analysis = services.start(
            user=user,
            game_id=body.game,
            ply=body.ply,
            copy=body.copy,
            slug=body.slug,
            options=dict(body.options),
            position=body.position,
            moves=body.moves,
        )
    except ServiceError as error:
        return refuse(error)
    return JsonResponse({"analysis": selectors.analysis_json(analysis)}, status=201)


@require_GET
def api_analysis(request: HttpRequest, key: str) -> JsonResponse:
    """Anyone with the link may look: the analysis at its current node, or at ?node=."""
    try:
        node = request.GET.get("node")
        if node is not None and not node.isdigit():
            raise ServiceError("no_such_node", _("node is a node's number."))
        analysis = selectors.load(key)
        return JsonResponse(
            {"analysis": selectors.analysis_json(analysis, None if node is None else int(node))}
        )
    except ServiceError as error:
        return refuse(error)


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_explorer(request: HttpRequest) -> JsonResponse:
    """The opening explorer: the moves played from a position in the finished games, with how
    each went for its player (docs/API.md, "The opening explorer"). Public, as the game
    database is: any token, or none."""
    try:
        lookup = explorer_lookup.lookup_from(request.GET)
        return JsonResponse(explorer_lookup.explore(lookup))
    except ServiceError as error:
        return refuse(error)


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_endgame(request: HttpRequest) -> JsonResponse:
    """The endgame database: a position's exact result with best play, and each move's
    (docs/API.md, "Endgames"). Public: any token, or none."""
    try:
        return JsonResponse(endgame_lookup.answer(request.GET))
    except ServiceError as error:
        return refuse(error)


def _change(
    reader: msgspec.json.Decoder[Any], act: Callable[[Any, str, Any], tuple[Analysis, int]]
) -> Callable[[HttpRequest, str], JsonResponse]:
    @require_POST
    def serve(request: HttpRequest, key: str) -> JsonResponse:
        try:
            user = _signed_in(request)
            body = decode(request.body or b"{}", reader)
            analysis, node = act(user, key, body)
            return JsonResponse({"analysis": selectors.analysis_json(analysis, node)})
        except ServiceError as error:
            return refuse(error)

    return serve


def _played(user: Any, key: str, body: PlayBody) -> tuple[Analysis, int]:
    return services.play(user=user, key=key, node=body.node, move=body.move)


def _deleted(user: Any, key: str, body: NodeBody) -> tuple[Analysis, int]:
    analysis = services.delete_line(user=user, key=key, node=body.node)
    return analysis, analysis.current


def _promoted(user: Any, key: str, body: NodeBody) -> tuple[Analysis, int]:
    return services.promote(user=user, key=key, node=body.node), body.node


def _went(user: Any, key: str, body: NodeBody) -> tuple[Analysis, int]:
    return services.go(user=user, key=key, node=body.node), body.node


api_play = _change(PLAY_BODY, _played)
api_delete = _change(NODE_BODY, _deleted)
api_promote = _change(NODE_BODY, _promoted)
api_go = _change(NODE_BODY, _went)


@require_http_methods(["GET", "POST"])
def api_eval(request: HttpRequest, key: str) -> JsonResponse:
    """POST {"node"}: the computer is asked for its view of the node's position (it deepens
    in rounds). GET ?node=: the latest view asked for there, as far as it got."""
    try:
        analysis = selectors.load(key)
        job: SearchJob | None
        if request.method == "POST":
            user = _signed_in(request)
            node = decode(request.body or b"{}", NODE_BODY).node
            job = services.ask_computer(user=user, analysis=analysis, node=node)
        else:
            node_text = request.GET.get("node", "")
            if not node_text.isdigit():
                raise ServiceError("no_such_node", _("node is a node's number."))
            job = selectors.computer_view(analysis, int(node_text))
        return JsonResponse({"search": None if job is None else searches.progress(job)})
    except ServiceError as error:
        return refuse(error)


@require_http_methods(["GET", "POST"])
def api_review(request: HttpRequest, game_id: int) -> JsonResponse:
    """POST: the game's review is asked for (once over). GET: the review as far as it got."""
    try:
        if request.method == "POST":
            decode(request.body or b"{}", REVIEW_BODY)
            review = reviews.request(user=_signed_in(request), game_id=game_id)
            return JsonResponse({"review": reviews.review_json(review)}, status=202)
        if not Game.objects.filter(pk=game_id).exists():
            raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
        return JsonResponse({"review": reviews.review_json(reviews.of_game(game_id))})
    except ServiceError as error:
        return refuse(error)


@require_POST
def api_remove(request: HttpRequest, key: str) -> JsonResponse:
    try:
        services.remove(user=_signed_in(request), key=key)
    except ServiceError as error:
        return refuse(error)
    return JsonResponse({"removed": key})


@require_GET
def api_board(request: HttpRequest) -> JsonResponse:
    """?slug=&option-<name>=: how a game's board is drawn and its start written (the
    position editor builds itself from these; the rules engine checks what it makes)."""
    try:
        slug = request.GET.get("slug", "")
        return JsonResponse(selectors.board_of(slug, _options(request.GET)))
    except ServiceError as error:
        return refuse(error)


def _options(fields: Any) -> dict[str, str]:
    """A game's options as forms and links carry them: `option-<name>`, empty ones left out."""
    return {
        name[len("option-") :]: value
        for name, value in fields.items()
        if name.startswith("option-") and value != ""
    }


# --- pages ---------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def analysis_index(request: HttpRequest) -> HttpResponse:
    """A new analysis (a game's start, a pasted position or game, or a game of the site at a
    move), and the list of yours."""
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"/accounts/login/?next={request.path}")
        form = request.POST
        try:
            slug = form.get("slug") or None
            game = form.get("game", "")
            ply = form.get("ply", "")
            analysis = services.start(
                user=request.user,
                game_id=int(game) if game.isdigit() else None,
                ply=int(ply) if ply.isdigit() else None,
                copy=form.get("copy") or None,
                slug=slug,
                options=_options(form),
                position=form.get("position", "").strip() or None,
                moves=form.get("moves", "").strip() or None,
            )
        except ServiceError as error:
            messages.error(request, f"{error.message} ({error.code})")
            return redirect("analysis-index")
        target = reverse("analysis", kwargs={"key": analysis.key})
        # From a review's marked move: the board names the move the search preferred.
        hint = {name: form[name][:100] for name in ("suggest", "played") if form.get(name)}
        return redirect(f"{target}?{urlencode(hint)}" if hint else target)
    mine = selectors.listed(request.user) if request.user.is_authenticated else []
    # A shared position's link opens this form filled in (analysis.js makes such links).
    given = {name: request.GET.get(name, "") for name in ("slug", "position", "moves")}
    given["options"] = _options(request.GET)
    return render(
        request,
        "analysis/index.html",
        {"games": described_games(), "mine": mine, "title": _("Analysis board"), "given": given},
    )


@require_GET
def notation_page(request: HttpRequest) -> HttpResponse:
    """docs/NOTATION.md, the notation's own description, as a page of the site (its
    translation, docs/NOTATION.<language>.md, in the page's language)."""
    text = in_language(Path(settings.BASE_DIR) / "docs" / "NOTATION.md").read_text()
    html = markdown.markdown(text, extensions=["tables", "fenced_code"])
    # Trusted: our own Markdown, from the repository.
    return render(
        request, "analysis/notation.html", {"body": mark_safe(html), "title": _("Notation")}
    )


@require_GET
def analysis_page(request: HttpRequest, key: str) -> HttpResponse:
    try:
        analysis = selectors.load(key)
    except ServiceError:
        return render(request, "404.html", status=404)
    return render(
        request,
        "analysis/board.html",
        {
            "analysis": analysis,
            "title": _("Analysis: %(game)s") % {"game": title_for(analysis.slug, analysis.options)},
            "name": title_for(analysis.slug, {}),
            "mine": request.user.is_authenticated and request.user.pk == analysis.owner_id,
        },
    )
