"""Pictures of positions and games (games/pictures.py, games/picture_views.py): real PNG and
GIF bytes, decoded back with Pillow."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from PIL import Image, ImageChops

from accounts.models import User
from games import pictures, services
from games.engine import client_moves, pick_client_move, rules_for
from games.models import Game
from games.picture_cache import picture_key
from games.picture_views import ACTIVE_MAX_AGE, FINISHED_MAX_AGE
from tests.games_helpers import new_game

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("zigzag", {}),
    ("diffusion-chess", {}),
]


def decoded(body: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(body))
    image.load()
    return image


def frames(image: Image.Image) -> int:
    # Multi-frame formats (GIF) say how many frames they hold; a still picture has one.
    return int(getattr(image, "n_frames", 1))


def first_moves(rules: Any, plies: int) -> list[str]:
    """A line of `plies` legal moves, the same every run (a seeded random source)."""
    rng = random.Random(7)
    state = rules.initial_state()
    moves: list[str] = []
    for _ in range(plies):
        move = pick_client_move(client_moves(rules, state), rng)
        moves.append(move)
        state = rules.play(state, move)
    return moves


# --- drawing (no database) ---------------------------------------------------------------------


@pytest.mark.parametrize(("slug", "options"), GAMES)
def test_every_game_draws_a_png_of_the_width_asked(slug: str, options: dict[str, Any]) -> None:
    rules = rules_for(slug, options)
    body = pictures.position_png(rules, rules.initial_state(), width=480)
    assert body.startswith(b"\x89PNG\r\n\x1a\n")
    image = decoded(body)
    assert image.format == "PNG"
    assert image.width == 480
    assert 100 < image.height < 600
    # A drawing, not a blank: several of the palette's colours are used.
    assert len(image.getcolors() or []) >= 4


def test_a_pit_with_seeds_is_drawn_otherwise_than_an_empty_one() -> None:
    rules = rules_for("diffusion", {})
    full = rules.to_json(rules.initial_state())
    emptied = {**full, "rows": [[0, *full["rows"][0][1:]], list(full["rows"][1])]}
    emptied["stores"] = [4, 0]  # the seeds are somewhere: a legal position
    board = rules.board()
    a = pictures.draw(board, full, width=600)
    b = pictures.draw(board, emptied, width=600)
    assert a.size == b.size
    # Pit F is the top row's first; its cell is CELL units square after the left store.
    scale = 600 / pictures._pits_size(board, full)[0]

    def cell(column: int) -> tuple[int, int, int, int]:
        x = (pictures.STORE + 8 + column * pictures.CELL) * scale
        y = pictures.TOP * scale
        return (
            round(x),
            round(y),
            round(x + pictures.CELL * scale),
            round(y + pictures.CELL * scale),
        )

    assert ImageChops.difference(a.crop(cell(0)), b.crop(cell(0))).getbbox() is not None
    # Its neighbour E holds the same four seeds in both: drawn alike.
    assert ImageChops.difference(a.crop(cell(1)), b.crop(cell(1))).getbbox() is None


def test_the_last_move_is_marked() -> None:
    rules = rules_for("zigzag", {})
    state = rules.play(rules.initial_state(), "c")
    plain = decoded(pictures.position_png(rules, state))
    marked = decoded(pictures.position_png(rules, state, last_move="c"))
    assert ImageChops.difference(plain, marked).getbbox() is not None


def test_a_width_out_of_range_is_refused() -> None:
    rules = rules_for("diffusion", {})
    with pytest.raises(ValueError, match="width"):
        pictures.position_png(rules, rules.initial_state(), width=5000)


def test_a_games_gif_has_a_frame_per_position() -> None:
    rules = rules_for("four-rank-diffusion", {})
    moves = first_moves(rules, 12)
    body = pictures.game_gif(rules, moves, width=360, delay_ms=500, last_delay_ms=2000)
    assert body.startswith(b"GIF89a") and body.endswith(b";")
    image = Image.open(io.BytesIO(body))
    assert frames(image) == len(moves) + 1
    assert image.size[0] == 360
    assert image.info.get("loop") == 0
    durations = []
    for index in range(frames(image)):
        image.seek(index)
        durations.append(image.info["duration"])
    assert durations == [500] * len(moves) + [2000]
    # Each frame is the position: the last frame is the picture of the last position.
    image.seek(frames(image) - 1)
    last = image.convert("RGB")
    state = pictures.replay(rules, moves, len(moves))
    expected = pictures.picture(rules, state, last_move=moves[-1], width=360).convert("RGB")
    assert ImageChops.difference(last, expected).getbbox() is None


# --- the views ----------------------------------------------------------------------------------


@pytest.mark.django_db
class TestViews:
    def play(self, game: Game, count: int) -> Game:
        rules = rules_for(game.slug, game.options)
        game.refresh_from_db()
        moves = first_moves(rules, game.ply + count)[game.ply :]
        for move in moves:
            game.refresh_from_db()
            user = game.player1 if game.ply % 2 == 0 else game.player2
            services.play_move(game_id=game.pk, user=user, move=move, ply=game.ply)
        game.refresh_from_db()
        return game

    def test_the_current_position_and_any_ply(self) -> None:
        game = self.play(new_game("zigzag"), 3)
        client = Client()
        now = client.get(f"/games/{game.pk}.png")
        assert now.status_code == 200
        assert now["Content-Type"] == "image/png"
        assert decoded(now.content).width == 600
        start = client.get(f"/games/{game.pk}.png?ply=0&width=360")
        assert start.status_code == 200
        assert decoded(start.content).width == 360
        last = client.get(f"/games/{game.pk}.png?ply=3")
        assert last.content == now.content
        earlier = client.get(f"/games/{game.pk}.png?ply=2")
        assert earlier.content != now.content

    def test_a_link_to_a_moment_previews_its_picture(self) -> None:
        """Open Graph and Twitter cards: a chat or forum shows the board of the moment linked."""
        import re

        game = self.play(new_game("zigzag"), 3)
        client = Client()
        page = client.get(f"/games/{game.pk}/?ply=2").content.decode()
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', page))
        assert meta["og:image"] == f"http://testserver/games/{game.pk}.png?ply=2"
        assert meta["twitter:card"] == "summary_large_image"
        assert meta["og:url"] == f"http://testserver/games/{game.pk}/?ply=2"
        assert "After move 2 of 3." in meta["og:description"]
        picture = client.get(meta["og:image"].removeprefix("http://testserver"))
        assert picture.content == client.get(f"/games/{game.pk}.png?ply=2").content
        whole = client.get(f"/games/{game.pk}/?ply=many").content.decode()
        assert f'content="http://testserver/games/{game.pk}.png"' in whole  # the position now

    @pytest.mark.parametrize("query", ["ply=4", "ply=-1", "ply=two", "width=601", "width=x"])
    def test_a_bad_parameter_is_a_400_that_says_why(self, query: str) -> None:
        game = self.play(new_game("diffusion"), 3)
        response = Client().get(f"/games/{game.pk}.png?{query}")
        assert response.status_code == 400
        assert response["Content-Type"].startswith("text/plain")
        assert query.split("=")[0] in response.content.decode()

    def test_a_missing_game_is_a_404(self) -> None:
        client = Client()
        assert client.get("/games/999999.png").status_code == 404
        assert client.get("/games/999999.gif").status_code == 404

    def test_the_gif_has_a_frame_per_position(self) -> None:
        game = self.play(new_game("diffusion"), 5)
        response = Client().get(f"/games/{game.pk}.gif")
        assert response.status_code == 200
        assert response["Content-Type"] == "image/gif"
        assert frames(Image.open(io.BytesIO(response.content))) == 6
        assert Client().get(f"/games/{game.pk}.gif?width=1200").status_code == 400

    def test_a_picture_is_served_from_the_cache_until_the_game_changes(self) -> None:
        game = self.play(new_game("diffusion"), 2)
        client = Client()
        first = client.get(f"/games/{game.pk}.png?ply=1")
        key = picture_key(game.pk, "png", 1, game.version, 600)
        assert cache.get(key) == first.content
        # What the cache holds is what is served: no drawing on the second request.
        cache.set(key, b"from the cache")
        assert client.get(f"/games/{game.pk}.png?ply=1").content == b"from the cache"
        # A move changes the game's version: the same ply is drawn again, under a new key.
        game = self.play(game, 1)
        again = client.get(f"/games/{game.pk}.png?ply=1")
        assert again.content == first.content
        assert cache.get(picture_key(game.pk, "png", 1, game.version, 600)) == first.content
        gif = client.get(f"/games/{game.pk}.gif")
        assert cache.get(picture_key(game.pk, "gif", 3, game.version, 480)) == gif.content

    def test_a_finished_games_pictures_are_kept_a_day(self) -> None:
        game = self.play(new_game("diffusion"), 2)
        client = Client()
        active = client.get(f"/games/{game.pk}.png")
        assert f"max-age={ACTIVE_MAX_AGE}" in active["Cache-Control"]
        assert "public" in active["Cache-Control"]
        services.resign(game_id=game.pk, user=game.player2)
        finished = client.get(f"/games/{game.pk}.png")
        assert f"max-age={FINISHED_MAX_AGE}" in finished["Cache-Control"]
        assert f"max-age={FINISHED_MAX_AGE}" in client.get(f"/games/{game.pk}.gif")["Cache-Control"]

    def test_a_profile_shows_the_game_being_played_and_previews_its_picture(self) -> None:
        import re

        game = self.play(new_game("zigzag"), 3)
        client = Client()
        page = client.get(f"/@{game.player1.username}/").content.decode()
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', page))
        assert meta["og:title"] == game.player1.username
        assert meta["og:image"] == f"http://testserver/games/{game.pk}.png"
        assert meta["twitter:card"] == "summary_large_image"
        assert f"against {game.player2.username} now." in meta["og:description"]
        # The section "Playing now": the picture of the game, a link to watch it.
        assert (
            f'id="playing-now" aria-labelledby="playing-now-title" data-game-id="{game.pk}"' in page
        )
        assert f'src="/games/{game.pk}.png?width=360"' in page
        assert f'href="/games/{game.pk}/" id="playing-now-link">Watch<' in page

    def test_a_profile_with_no_game_going_previews_the_end_of_its_last(self) -> None:
        import re

        game = self.play(new_game("diffusion"), 2)
        services.resign(game_id=game.pk, user=game.player2)
        page = Client().get(f"/@{game.player2.username}/").content.decode()
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', page))
        assert meta["og:image"] == f"http://testserver/games/{game.pk}.png"
        assert meta["og:description"].startswith("Playing since ")
        assert 'id="playing-now"' not in page
        # Nobody's games at all: no picture, a small card.
        newcomer = User.objects.create_user(username="newcomer", password=None)
        page = Client().get(f"/@{newcomer.username}/").content.decode()
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', page))
        assert "og:image" not in meta and meta["twitter:card"] == "summary"

    def test_a_picture_says_its_words_in_the_readers_language(self) -> None:
        from django.utils import translation

        from games import picture_cache

        game = self.play(new_game("zigzag"), 2)
        client = Client()
        english = client.get(f"/games/{game.pk}.png")
        french = client.get(f"/games/{game.pk}.png", HTTP_ACCEPT_LANGUAGE="fr")
        assert english.status_code == french.status_code == 200
        assert "Accept-Language" in french["Vary"] and "Cookie" in french["Vary"]
        # The same position, other words: other pictures, each under its own key.
        assert decoded(french.content).size == decoded(english.content).size
        assert french.content != english.content
        for language, body in (("en", english.content), ("fr", french.content)):
            key = picture_key(game.pk, "png", 2, game.version, 600, language)
            assert cache.get(key) == body
        with translation.override("fr"):
            words = picture_cache.words()
            assert words.sides == ("Sud", "Nord")
            assert words.side_to_move % {"side": "Sud"} == "Sud (au trait)"
            assert words.moves_left(2) == "(2 coups restants ce tour-ci)"
            assert picture_cache.png_of(game.pk) == french.content


def test_pictures_are_lettered_in_a_font_with_every_letter_of_the_sites_languages() -> None:
    font = pictures._font(14)
    assert font.getname() == ("DejaVu Sans", "Book")  # `make` installs it, as the image does
    # The letters of fr, de and es, each drawn as a glyph of its own, not the missing-glyph box.
    missing = font.getmask("\uffff").getbbox()
    for letter in "éèàçüöäßñáíóú·":
        assert font.getmask(letter).getbbox() != missing, letter
