"""What each pbmserv command does: one function per command, each calling the same services
as the web (so the same rules, versions, throttles and broadcasts) and answering in text.

`answer(subject, body, sender)` is the door: it parses, runs and returns the reply's subject
and text, plus notices for other players. A refused command changes nothing and its reply says
what was wrong and the right form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from accounts import services as account_services
from accounts.language import for_user
from accounts.models import User
from games import services as game_services
from games.engine import rules_for
from games.messages import described_games, translated
from games.models import Game
from games.reply_address import looks_like_reply_address, read_reply_address
from games.rules import IllegalMove, available_games, game_info
from lobby.models import Challenge
from lobby.services.challenges import accept_challenge, create_challenge, parse_pbm_command
from pbm import board, identity
from pbm.grammar import (
    GAME_FORMS,
    GLOBAL_FORMS,
    BadCommand,
    Command,
    board_number,
    described,
    game_slug,
    parse,
    split_move_number,
    strip_reply_prefixes,
    words_of,
)
from privacy import closure
from ratings import selectors as rating_selectors
from realtime.errors import ServiceError

# Commands a `multiple` mail may hold.
MAX_COMMANDS_PER_MAIL = 20


@dataclass
class Notice:
    """A mail to another player (told of a challenge, a message, a chat line)."""

    user: User
    subject: str
    body: str


@dataclass
class Reply:
    subject: str
    text: str
    notices: list[Notice] = field(default_factory=list)
    ok: bool = True


@dataclass(frozen=True)
class Mail:
    sender: str
    body: str


Handler = Callable[[Command, Mail], Reply]


def _words(command: Command, count: int, *, at_least: bool = False) -> tuple[str, ...]:
    have = len(command.words)
    if have < count or (have > count and not at_least):
        raise BadCommand("bad_command", _not_the_form(command.verb), command.form)
    return command.words


def _game(command: Command, word: str) -> Game:
    number = board_number(word)
    game = Game.objects.select_related("player1", "player2").filter(pk=number).first()
    if game is None or game.slug != command.game:
        raise ServiceError(
            "no_such_game",
            _("There is no %(game)s board %(number)s.") % {"game": command.game, "number": number},
        )
    return game


def _user(name: str) -> User:
    user = User.objects.filter(username__iexact=name).first()
    if user is None:
        raise ServiceError(
            "unknown_user", _("There is no user called %(name)s.") % {"name": repr(name)[:40]}
        )
    return user


def _not_the_form(command: str) -> str:
    return _("That is not the form of `%(command)s`.") % {"command": command}


def _board_subject(game: Game, said: str) -> str:
    return _("%(game)s board %(number)s: %(said)s") % {
        "game": game.slug,
        "number": game.pk,
        "said": said,
    }


def _game_reply(game: Game, said: str) -> Reply:
    game.refresh_from_db()
    return Reply(_board_subject(game, said), f"{said}\n\n{board.board(game)}")


def _done(command: str) -> str:
    """A reply's subject: the command, and that it was done."""
    done = pgettext("mail subject", "done")
    return f"{command}: {done}"


# --- global commands --------------------------------------------------------------------------


def help_(command: Command, mail: Mail) -> Reply:
    if command.words:
        return _help_on(command.words)
    # The forms (the command words, USERID, MAILPASSWORD, ...) are the protocol: English.
    lines = [_("Commands (put one in the subject of a mail to this address):"), ""]
    lines += [f"  {described(verb, form)}" for verb, form in GLOBAL_FORMS.items()]
    lines += [
        "",
        _("Commands of a game (GAME is one of: %(games)s):") % {"games": ", ".join(_slugs())},
        "",
    ]
    lines += [
        f"  {described(verb, form)}"
        for verb, form in GAME_FORMS.items()
        if verb not in {"submit", "confirm"}
    ]
    footer = _(
        "MAILPASSWORD is your mail password (set it on your profile page, or by signup),\n"
        "never your site password; commands must come from your account's address.\n"
        "`help COMMAND` or `help GAME` says more about one.\n"
        "Every command, with an example and its answer: %(link)s"
    ) % {"link": f"{_site()}/help/mail/"}
    lines += ["", *footer.split("\n")]
    return Reply("help", "\n".join(lines))


def _help_on(subjects: tuple[str, ...]) -> Reply:
    """pbmserv's `help SUBJECT ...`: a game's help, or the forms of the commands named."""
    parts = []
    for word in subjects[:10]:
        slug = game_slug(word)
        verb = word.lower()
        if slug is not None:
            parts.append(game_help(Command(slug, "help", ()), Mail("", "")).text)
        elif verb in GLOBAL_FORMS or verb in GAME_FORMS:
            forms = [GLOBAL_FORMS.get(verb), GAME_FORMS.get(verb)]
            parts.append("\n".join(f"  {described(verb, form)}" for form in forms if form))
        else:
            parts.append(
                _("No help on %(word)s: try `help` for every command.") % {"word": repr(word)[:40]}
            )
    return Reply(f"help {' '.join(subjects[:10])}", "\n\n".join(parts))


def list_(command: Command, mail: Mail) -> Reply:
    lines = [f"{g['slug']:22} {g['name']}: {g['summary']}" for g in described_games()]
    return Reply("list", _("The games here:") + "\n\n" + "\n".join(lines))


def signup(command: Command, mail: Mail) -> Reply:
    words = _words(command, 2, at_least=True)
    if len(words) > 3:
        raise BadCommand("bad_command", _("Name one address at most."), command.form)
    address = identity.address_of(words[2]) if len(words) == 3 else identity.address_of(mail.sender)
    if "@" not in address:
        raise BadCommand("bad_address", _not_an_address(words[2]), command.form)
    user = identity.sign_up(words[0], words[1], address)
    welcome = pgettext("mail subject", "welcome")
    return Reply(
        f"signup {user.username}: {welcome}",
        _(
            "Welcome, %(name)s. Your account plays by mail from %(address)s;\n"
            "your mail password is the one you sent. Try `list`, then `GAME challenge`."
        )
        % {"name": user.username, "address": address},
    )


def _not_an_address(word: str) -> str:
    return _("%(word)s is not an e-mail address.") % {"word": repr(word)[:60]}


def change(command: Command, mail: Mail) -> Reply:
    words = _words(command, 1, at_least=True)
    what = words[0].lower()
    if what == "password":
        if len(words) != 4:
            raise BadCommand("bad_command", _not_the_form("change password"), command.form)
        user = identity.authenticate(words[1], words[2], mail.sender)
        identity.set_mail_password(user, words[3])
        return Reply(_done(f"change password {user.username}"), _("Your mail password is changed."))
    if what == "address":
        if len(words) != 4:
            raise BadCommand("bad_command", _not_the_form("change address"), command.form)
        user = identity.authenticate(words[1], words[2], mail.sender)
        address = identity.address_of(words[3])
        if "@" not in address:
            raise BadCommand("bad_address", _not_an_address(words[3]), command.form)
        # The mail password proved the account; the new address is used at once (as on
        # pbmserv) but counts as unconfirmed until the site's link confirms it.
        User.objects.filter(pk=user.pk).update(
            email=address, email_confirmed_at=None, pending_email=""
        )
        return Reply(
            _done(f"change address {user.username}"),
            _("Mail for %(name)s now goes to %(address)s, and commands must come from it.")
            % {"name": user.username, "address": address},
        )
    if what == "pictures":
        if len(words) != 4 or words[3].lower() not in {"on", "off"}:
            raise BadCommand("bad_command", _not_the_form("change pictures"), command.form)
        user = identity.authenticate(words[1], words[2], mail.sender)
        on = words[3].lower() == "on"
        account_services.do_set_mail_pictures(user=user, on=on)
        said = (
            _("The mails that show a board now attach its picture too.")
            if on
            else _("The mails that show a board no longer attach its picture.")
        )
        return Reply(_done(f"change pictures {user.username} {words[3].lower()}"), said)
    raise BadCommand(
        "bad_command", _("Change what: `password`, `address` or `pictures`?"), command.form
    )


def add(command: Command, mail: Mail) -> Reply:
    raise ServiceError(
        "not_here",
        _("An account here has one address. Use `change address USERID MAILPASSWORD ADDRESS`."),
    )


def signoff(command: Command, mail: Mail) -> Reply:
    words = _words(command, 2)
    user = identity.authenticate(words[0], words[1], mail.sender)
    user.email_on_move = False
    user.save(update_fields=["email_on_move"])
    return Reply(
        _done(f"signoff {user.username}"),
        _('You will get no more "your move" mail. Your games go on; resign any you leave.'),
    )


def delete(command: Command, mail: Mail) -> Reply:
    """Close the account, as closing it on the site does (privacy/closure.py): it can no
    longer sign in or mail commands, its past games show a neutral name, and its name is
    nobody's again. Refused while it has games going (resign them first), so no opponent is
    left waiting on a closed account."""
    words = _words(command, 2)
    user = identity.authenticate(words[0], words[1], mail.sender)
    going = Game.objects.filter(Q(player1=user) | Q(player2=user), status=Game.Status.ACTIVE)
    if going.exists():
        boards = ", ".join(str(pk) for pk in going.values_list("pk", flat=True)[:20])
        raise ServiceError(
            "games_going",
            _("Finish or resign your games first (boards %(boards)s); then delete.")
            % {"boards": boards},
        )
    name = user.username
    with transaction.atomic():
        identity.forget_mail_password(user)
        closure.close_account(user=user, reason="closed by its player by mail (delete)")
    return Reply(
        _done(f"delete {name}"),
        _(
            "The account %(name)s is closed: it signs in and takes mail commands no more. Its "
            "past games show it as %(neutral)s, and nobody can take the name %(name)s."
        )
        % {"name": name, "neutral": user.username},
    )


def message(command: Command, mail: Mail) -> Reply:
    words = _words(command, 3, at_least=True)
    user = identity.authenticate(words[0], words[1], mail.sender)
    text = mail.body.strip()
    if not text:
        raise BadCommand(
            "bad_message", _("The message is the mail's body, and it is empty."), command.form
        )
    targets = [_user(name) for name in words[2:]]
    notices = []
    for target in targets:
        if target.email and not target.is_bot:
            with translation.override(for_user(target)):  # the reader's language
                notices.append(
                    Notice(
                        target,
                        _("message from %(name)s") % {"name": user.username},
                        _("%(name)s writes:") % {"name": user.username} + f"\n\n{text[:4000]}",
                    )
                )
    names = ", ".join(t.username for t in targets)
    sent = pgettext("mail subject", "sent")
    return Reply(
        f"message {user.username}: {sent}",
        _("Sent to %(names)s.") % {"names": names},
        notices,
    )


def broadcast(command: Command, mail: Mail) -> Reply:
    raise ServiceError(
        "not_here", _("There is no mail to every player here; the lobby's pages list who plays.")
    )


def multiple(command: Command, mail: Mail) -> Reply:
    raise BadCommand(
        "bad_command",
        _("`multiple` takes no words: the commands are the body's lines."),
        command.form,
    )


def all_show(command: Command, mail: Mail) -> Reply:
    words = _words(command, 2, at_least=True)
    if words[0].lower() != "show" or len(words) > 3:
        raise BadCommand("bad_command", _not_the_form("all show"), command.form)
    user = _user(words[1])
    which = words[2].lower() if len(words) == 3 else "active"
    return Reply(f"all show {user.username} {which}", _boards(_games_of([user], which, None)))


# --- a game's commands ------------------------------------------------------------------------


def game_help(command: Command, mail: Mail) -> Reply:
    info = game_info(command.game or "")
    lines = [f"{info.name}: {info.summary}", "", _("Commands:")]
    lines += [
        f"  {form.replace('GAME', info.slug)}"
        for verb, form in GAME_FORMS.items()
        if verb not in {"submit", "confirm"}
    ]
    if info.options:
        lines += ["", _("Challenge options:")]
        lines += [f"  -{o.name}=N  {o.describe()['help']}" for o in info.options]
    lines += ["", _("The rules: %(link)s") % {"link": f"{_site()}/rules/{info.slug}/"}]
    return Reply(f"{info.slug} help", "\n".join(lines))


def standings(command: Command, mail: Mail) -> Reply:
    lines = []
    for speed, label in rating_selectors.SPEEDS:
        rows = rating_selectors.standings(command.game or "", speed)
        lines += [f"{label}:"]
        lines += [f"{r['rank']:4d}. {r['username']:20} {r['rating']:6.0f}" for r in rows] or [
            "  " + _("no rated games yet")
        ]
        lines += [""]
    return Reply(f"{command.game} standings", "\n".join(lines))


def history(command: Command, mail: Mail) -> Reply:
    games = Game.objects.filter(slug=command.game).exclude(status=Game.Status.ACTIVE)
    games = games.select_related("player1", "player2").order_by("-ended_at")[:50]
    lines = [_game_line(game) for game in games] or [_("No finished games yet.")]
    return Reply(f"{command.game} history", "\n".join(lines))


def games_(command: Command, mail: Mail) -> Reply:
    games = _games_of(*_users_and_which(command.words), command.game)
    lines = [_game_line(game) for game in games] or [_("No boards.")]
    return Reply(f"{command.game} games {' '.join(command.words)}".strip(), "\n".join(lines))


def show(command: Command, mail: Mail) -> Reply:
    words = _words(command, 1, at_least=True)
    if all(w.split("#")[0].isdigit() for w in words):
        parts = []
        for word in words[:20]:
            number, at = split_move_number(word)
            parts.append(board.board(_game(command, number), at=at))
        return Reply(f"{command.game} show {' '.join(words)}", "\n\n".join(parts))
    return _show_users(command)


def _show_users(command: Command) -> Reply:
    games = _games_of(*_users_and_which(command.words), command.game)
    return Reply(f"{command.game} show {' '.join(command.words)}", _boards(games))


def showas(command: Command, mail: Mail) -> Reply:
    words = _words(command, 2, at_least=True)
    user = identity.authenticate(words[0], words[1], mail.sender)
    rest = list(words[2:]) or ["active"]
    if rest[0].isdigit():
        games = [_game(command, word) for word in rest[:20]]
    else:
        games = _games_of([user], rest[0].lower(), command.game)
    return Reply(f"{command.game} showas {user.username}", _boards(games))


def challenge(command: Command, mail: Mail) -> Reply:
    try:  # the lobby's reading of pbmserv's challenge, which `manage.py pbm` uses too
        _game, options, *names = parse_pbm_command(
            f"{command.game} challenge {' '.join(command.words)}"
        )
    except ServiceError as error:
        raise BadCommand(error.code, error.message, command.form) from None
    # The site's own options beside the game's: -rated=1 (pbmserv rated every game) and
    # -time=3d (a correspondence clock; untimed by default, as pbmserv's games were).
    rated = str(options.pop("rated", 0)).lower() in {"1", "yes", "true"}
    time_control = str(options.pop("time", ""))
    first, second = _user(names[0]), _user(names[1])
    sender = identity.address_of(mail.sender)
    me = next((u for u in (first, second) if u.email.strip().lower() == sender), None)
    if me is None:
        raise ServiceError(
            "not_yours", _("Send a challenge from the address of one of its two users.")
        )
    other = second if me == first else first
    # The other side's challenge, the same game: this command accepts it (both sent it).
    waiting = Challenge.objects.filter(
        challenger=other, challenged=me, slug=command.game, status=Challenge.Status.PENDING
    ).order_by("pk")
    for pending in waiting:
        if pending.rated == rated and _same_options(pending.options, options, command.game or ""):
            game = accept_challenge(user=me, challenge_id=pending.pk)
            with translation.override(for_user(other)):  # the reader's language
                notice = Notice(
                    other,
                    _board_subject(game, _("%(name)s accepted") % {"name": me.username}),
                    board.board(game),
                )
            reply = _game_reply(
                game, _("the game against %(name)s has begun") % {"name": other.username}
            )
            reply.notices.append(notice)
            return reply
    made = create_challenge(
        challenger=me,
        challenged=other.username,
        slug=command.game or "",
        options=options,
        side=Challenge.Side.FIRST if me == first else Challenge.Side.SECOND,
        time_control=time_control,
        rated=rated,
    )
    form = f"{command.game} challenge {first.username} {second.username}"
    form += "".join(f" -{k}={v}" for k, v in sorted(options.items()))
    form += (" -rated=1" if rated else "") + (f" -time={time_control}" if time_control else "")
    words = {
        "name": me.username,
        "game": command.game,
        "first": first.username,
        "form": form,
        "site": f"{_site()}/",
    }
    with translation.override(for_user(other)):  # the reader's language
        notice = Notice(
            other,
            _("%(game)s: %(name)s challenges you") % words,
            _(
                "%(name)s challenges you to %(game)s; %(first)s moves first.\n"
                "To accept, send: %(form)s\n(or answer on the site: %(site)s)"
            )
            % words,
        )
    return Reply(
        _("%(game)s challenge: sent to %(name)s") % {"game": command.game, "name": other.username},
        _(
            "Challenge %(number)s is waiting for %(name)s, who accepts by sending\n%(form)s\n"
            "It lapses at %(when)s UTC."
        )
        % {
            "number": made.pk,
            "name": other.username,
            "form": form,
            "when": f"{made.expires_at:%Y-%m-%d %H:%M}",
        },
        [notice],
    )


def _same_options(stored: dict[str, object], given: dict[str, int | str], slug: str) -> bool:
    info = game_info(slug)
    full = {o.name: o.default for o in info.options}
    return {**full, **stored} == {**full, **given}


def move(command: Command, mail: Mail) -> Reply:
    words = _words(command, 4)
    game = _game(command, words[0])
    user = identity.authenticate(words[1], words[2], mail.sender)
    text, number = split_move_number(words[3])
    word = text.lower()
    if word == "resign":
        game_services.resign(game_id=game.pk, user=user)
        return _game_reply(game, _resigned(user))
    if word in {"propose", "undo", "accept", "reject"}:
        return _offer(game, user, word)
    ply = game.ply if number is None else number - 1
    return _play(game, user, text, ply)


def _play(game: Game, user: User, text: str, ply: int) -> Reply:
    """Play `text` as move number ply + 1; refused (with the board) if the game is elsewhere."""
    if ply != game.ply:
        reply = _game_reply(
            game,
            _("move #%(number)s refused: this board is at move #%(now)s")
            % {"number": ply + 1, "now": game.ply + 1},
        )
        reply.ok = False
        return reply
    try:
        game_services.play_move(game_id=game.pk, user=user, move=text, ply=ply)
    except ServiceError as error:
        if error.code in {"illegal_move", "stale_ply", "not_your_turn", "game_over"}:
            why = error.message
            if text.lower() in {"pass", "swap"} and error.code == "illegal_move":
                why = _("%(game)s has no %(move)s: a player to move must move") % {
                    "game": game_info(game.slug).name,
                    "move": text.lower(),
                }
            reply = _game_reply(
                game, _("%(move)s refused: %(why)s") % {"move": repr(text)[:40], "why": why}
            )
            reply.ok = False
            return reply
        raise
    return _game_reply(game, _("%(name)s played %(move)s") % {"name": user.username, "move": text})


def _offer(game: Game, user: User, word: str) -> Reply:
    """propose (a draw), undo (ask to take back), accept / reject (whichever is offered)."""
    if word == "propose":
        game_services.offer_draw(game_id=game.pk, user=user)
        return _game_reply(game, _("%(name)s proposes a draw") % {"name": user.username})
    if word == "undo":
        game_services.offer_takeback(game_id=game.pk, user=user)
        return _game_reply(
            game, _("%(name)s asks to take back the last move") % {"name": user.username}
        )
    accept = word == "accept"
    opponent = 3 - (game.player_number(user) or 0)
    # game.offers: {"draw": seat, "takeback": seat}, each by the seat that offered it.
    if (game.offers or {}).get("takeback") == opponent:
        game_services.answer_takeback(game_id=game.pk, user=user, accept=accept)
        said = _("%(name)s accepted the takeback") if accept else _("%(name)s refused the takeback")
        return _game_reply(game, said % {"name": user.username})
    game_services.answer_draw(game_id=game.pk, user=user, accept=accept)
    said = _("%(name)s accepted the draw") if accept else _("%(name)s refused the draw")
    return _game_reply(game, said % {"name": user.username})


def resign(command: Command, mail: Mail) -> Reply:
    words = _words(command, 3)
    game = _game(command, words[0])
    user = identity.authenticate(words[1], words[2], mail.sender)
    game_services.resign(game_id=game.pk, user=user)
    return _game_reply(game, _resigned(user))


def _resigned(user: User) -> str:
    return _("%(name)s resigned") % {"name": user.username}


def queue(command: Command, mail: Mail) -> Reply:
    words = _words(command, 3, at_least=True)
    game = _game(command, words[0])
    user = identity.authenticate(words[1], words[2], mail.sender)
    stored = game_services.set_queue(game_id=game.pk, user=user, moves=list(words[3:]))
    said = _("queued: %(moves)s") % {"moves": " ".join(stored)} if stored else _("queue cleared")
    return _game_reply(game, said)


def chat(command: Command, mail: Mail) -> Reply:
    words = _words(command, 3)
    game = _game(command, words[0])
    user = identity.authenticate(words[1], words[2], mail.sender)
    text = " ".join(mail.body.split())
    game_services.post_chat(game_id=game.pk, user=user, room="players", text=text)
    opponent = game.player2 if game.player_number(user) == 1 else game.player1
    with translation.override(for_user(opponent)):  # the reader's language
        notice = Notice(
            opponent, _board_subject(game, _("%(name)s says") % {"name": user.username}), text
        )
    return Reply(
        _board_subject(game, _("chat sent")),
        _("Sent to %(name)s: %(text)s") % {"name": opponent.username, "text": text},
        [notice],
    )


def preview(command: Command, mail: Mail) -> Reply:
    words = _words(command, 2, at_least=True)
    game = _game(command, words[0])
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    for word in words[1:]:
        try:
            state = rules.play(state, word)
        except IllegalMove as error:
            raise ServiceError(
                "illegal_move",
                _("%(move)s: %(error)s") % {"move": repr(word)[:40], "error": translated(error)},
            ) from None
    moves = " ".join(words[1:])
    return Reply(
        _board_subject(game, _("preview of %(moves)s") % {"moves": moves}),
        _("Board %(number)s after %(moves)s (nothing was played):")
        % {"number": game.pk, "moves": moves}
        + "\n\n"
        + rules.render_text(state),
    )


def reply_move(signed: tuple[int, int, int], subject: str, mail: Mail) -> Reply:
    """A reply to a "your move" mail: its subject (or, left as it was, the body's first line)
    is the move, played as the move number the mail was sent for."""
    user_id, game_id, ply = signed
    user = User.objects.filter(pk=user_id, is_active=True).first()
    shown = _("reply about game %(game)s") % {"game": game_id}
    if user is None or user.email.strip().lower() != identity.address_of(mail.sender):
        return refusal(
            "bad_credentials", _('Reply from the address the "your move" mail went to.'), shown
        )
    words = words_of(strip_reply_prefixes(subject))
    # The subject left as "Re: Your move in ... #12 against ...", in whichever language the
    # mail was written: its game number, a word no move is, tells it.
    if not words or words[0].lower() == "your" or f"#{game_id}" in words:
        lines = [line for line in mail.body.splitlines() if line.strip() and line[0] != ">"]
        words = words_of(lines[0]) if lines else []
    if not words:
        return refusal("bad_command", _("Put your move in the subject of the reply."), shown)
    game = Game.objects.select_related("player1", "player2").filter(pk=game_id).first()
    if game is None:
        return refusal("no_such_game", _("There is no game %(game)s.") % {"game": game_id}, shown)
    text = words[0]
    with transaction.atomic():
        return _play(game, user, text, ply)


def two_step(command: Command, mail: Mail) -> Reply:
    raise ServiceError(
        "not_here",
        _("Moves here are one step: `%(form)s` (the #MOVENO guards against a stale mail).")
        % {"form": command.form},
    )


# --- the table and the door -------------------------------------------------------------------

GLOBAL: dict[str, Handler] = {
    "help": help_,
    "signup": signup,
    "add": add,
    "change": change,
    "signoff": signoff,
    "delete": delete,
    "list": list_,
    "message": message,
    "broadcast": broadcast,
    "multiple": multiple,
    "all": all_show,
}
GAME: dict[str, Handler] = {
    "help": game_help,
    "standings": standings,
    "ratings": standings,
    "history": history,
    "games": games_,
    "show": show,
    "showas": showas,
    "challenge": challenge,
    "move": move,
    "queue": queue,
    "resign": resign,
    "chat": chat,
    "preview": preview,
    "submit": two_step,
    "confirm": two_step,
}


def refusal(code: str, message: str, command: str, form: str = "") -> Reply:
    """The answer to a refused command: the code (docs/PROTOCOL.md), what was wrong, the form."""
    more = "\n\n" + _("The form: %(form)s") % {"form": form} if form else ""
    return Reply(f"error ({code}): {command[:80]}", f"{message}{more}", ok=False)


# The commands that only read (boards, lists, help): anyone may send them, and the API's
# `POST /api/command` answers them too (pbm/views.py). The others act for an account that
# only its mail password and address prove: they are the mail's.
GLOBAL_READS = frozenset({"help", "list", "all"})
GAME_READS = frozenset({"help", "standings", "ratings", "history", "games", "show", "preview"})


def _execute(command: Command, mail: Mail) -> Reply:
    """Run one parsed command; BadCommand or ServiceError if it is refused (nothing changed)."""
    handler = (GLOBAL if command.game is None else GAME)[command.verb]
    with transaction.atomic():
        return handler(command, mail)


def run(text: str, mail: Mail) -> Reply:
    """One command: its reply, or an error reply that changed nothing."""
    try:
        return _execute(parse(text), mail)
    except BadCommand as error:
        return refusal(error.code, error.message, text, error.form)
    except ServiceError as error:
        return refusal(error.code, error.message, text)


def read(text: str) -> Reply:
    """A read command's reply, as the mail door answers it (the API's door): BadCommand or
    ServiceError as `run` would answer them, `mail_only` for a command that acts for an
    account."""
    command = parse(text)
    if command.verb not in (GLOBAL_READS if command.game is None else GAME_READS):
        raise ServiceError(
            "mail_only",
            _(
                "`%(command)s` acts for an account that its mail password proves: send it by "
                "mail. Here: %(reads)s, and `GAME challenge`."
            )
            % {"command": command.verb, "reads": ", ".join(_read_forms())},
        )
    return _execute(command, Mail(sender="", body=""))


def _read_forms() -> list[str]:
    verbs = ["all show" if verb == "all" else verb for verb in sorted(GLOBAL_READS)]
    return [f"`{verb}`" for verb in verbs] + [f"`GAME {verb}`" for verb in sorted(GAME_READS)]


def answer(subject: str, body: str, sender: str, recipient: str = "") -> Reply:
    """A mail's reply: a move sent to a signed reply address, the subject's command, or each
    line of a `multiple` body."""
    mail = Mail(sender=sender, body=body)
    signed = read_reply_address(recipient)
    if signed is not None:
        return reply_move(signed, subject, mail)
    if looks_like_reply_address(recipient):
        # Altered or forged (a changed number, signature or none): the subject is a move meant
        # for a game, not a command to read.
        return refusal(
            "bad_reply_address",
            _(
                "This reply address is not valid: it is not one this site sent, or it was "
                'changed. Nothing was played. Reply to the "your move" mail as it came, or '
                "mail the move as a command."
            ),
            subject or recipient,
            GAME_FORMS["move"],
        )
    if words_of(subject)[:1] != ["multiple"] or len(words_of(subject)) != 1:
        return run(subject, mail)
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if len(lines) > MAX_COMMANDS_PER_MAIL:
        return refusal(
            "too_many_commands",
            _("A `multiple` mail holds at most %(count)s commands, one a line.")
            % {"count": MAX_COMMANDS_PER_MAIL},
            "multiple",
        )
    replies = [run(line, Mail(sender=sender, body="")) for line in lines]
    text = "\n\n".join(
        f"> {line}\n{reply.text}" for line, reply in zip(lines, replies, strict=True)
    )
    notices = [notice for reply in replies for notice in reply.notices]
    done = sum(reply.ok for reply in replies)
    return Reply(
        "multiple: " + _("%(done)s of %(total)s done") % {"done": done, "total": len(replies)},
        text or _("The body held no commands."),
        notices,
    )


# --- helpers ----------------------------------------------------------------------------------


def _site() -> str:
    return str(settings.SITE_URL).rstrip("/")


def _slugs() -> list[str]:
    return [g["slug"] for g in available_games()]


def _game_line(game: Game) -> str:
    states = {
        Game.Status.ACTIVE: _("move #%(number)s") % {"number": game.ply + 1},
        Game.Status.FINISHED: pgettext("a game", "finished"),
        Game.Status.ABORTED: pgettext("a game", "aborted"),
    }
    state = states.get(game.status, game.status)
    players = _("%(first)s vs %(second)s") % {
        "first": game.player1.username,
        "second": game.player2.username,
    }
    return f"{game.pk:8d}  {game.slug:20} {players}  ({state})"


WHICH = {"all", "active", "inactive", "next"}
MAX_BOARDS = 20  # boards in one answer


def _users_and_which(words: tuple[str, ...]) -> tuple[list[User], str]:
    """`USERID ... [all | active | inactive | next]`: the users, and which of their games."""
    names, which = list(words), "active"
    if names and names[-1].lower() in WHICH:
        which = names.pop().lower()
    return [_user(name) for name in names], which


def _boards(games: list[Game]) -> str:
    return "\n\n".join(board.board(game) for game in games[:MAX_BOARDS]) or _("No boards.")


def _games_of(users: list[User], which: str, slug: str | None) -> list[Game]:
    games = Game.objects.select_related("player1", "player2").order_by("-updated_at")
    if slug is not None:
        games = games.filter(slug=slug)
    for user in users:
        games = games.filter(Q(player1=user) | Q(player2=user))
    if which in {"active", "next"}:
        games = games.filter(status=Game.Status.ACTIVE)
    elif which == "inactive":
        games = games.exclude(status=Game.Status.ACTIVE)
    found = list(games[:100])
    if which == "next" and users:
        found = [g for g in found if _to_move(g) in {users[0].pk}]
    return found


def _to_move(game: Game) -> int | None:
    rules = rules_for(game.slug, game.options)
    seat = rules.to_move(rules.from_json(game.state))
    return game.player1_id if seat == 1 else game.player2_id
