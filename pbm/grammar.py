"""pbmserv's command language, read from a mail's subject (or one line of a `multiple` body).

Pure: words in, a `Command` out, or `BadCommand` saying what was wrong and the right form.
The forms are pbmserv's (docs/PBMSERV.md lists each with an example); which account and game
a command touches is for the handlers (pbm/handlers.py) to check.

    parse("zigzag move 12 alice secret c#7")
    -> Command(game="zigzag", verb="move", words=("12", "alice", "secret", "c#7"))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext as _

# A subject longer than this is not a command (pbmserv's were a line).
MAX_COMMAND_CHARS = 500

# The games by the names pbmserv and people write them; the key is the word lowercased with
# every "-" and "_" removed.
GAME_NAMES = {
    "diffusion": "diffusion",
    "fourrankdiffusion": "four-rank-diffusion",
    "diffusion4": "four-rank-diffusion",
    "diffusionchess": "diffusion-chess",
    "zigzag": "zigzag",
}

# Commands that stand alone, and the form each takes (pbmserv's, from its help pages).
GLOBAL_FORMS = {
    "help": "help [SUBJECT ...]",
    "signup": "signup USERID MAILPASSWORD [ADDRESS ...]",
    "add": "add USERID MAILPASSWORD ADDRESS",
    "change": (
        "change password USERID CURRENT NEW | change address USERID MAILPASSWORD ADDRESS"
        " | change pictures USERID MAILPASSWORD on|off"
    ),
    "signoff": "signoff USERID MAILPASSWORD",
    "delete": "delete USERID MAILPASSWORD",
    "list": "list [GAME ...]",
    "message": "message USERID MAILPASSWORD TO-USERID ...",
    "broadcast": "broadcast USERID MAILPASSWORD",
    "multiple": "multiple",
    "all": "all show USERID [next | active]",
}

# Commands of one game: `GAME verb ...`.
GAME_FORMS = {
    "help": "GAME help",
    "standings": "GAME standings",
    "ratings": "GAME ratings",
    "history": "GAME history",
    "games": "GAME games [USERID ...] [all | active | inactive | next]",
    "show": "GAME show BOARD[#MOVENO] ... | GAME show USERID ... [all | active | inactive | next]",
    "showas": "GAME showas USERID MAILPASSWORD [BOARD ... | all | active | inactive | next]",
    "challenge": "GAME challenge USERID1 USERID2 [-OPTION=VALUE ...] [-rated=1] [-time=3d]",
    "move": "GAME move BOARD USERID MAILPASSWORD MOVE[#MOVENO]",
    "queue": "GAME queue BOARD USERID MAILPASSWORD MOVE ...",
    "resign": "GAME resign BOARD USERID MAILPASSWORD",
    "chat": "GAME chat BOARD USERID MAILPASSWORD",
    "preview": "GAME preview BOARD MOVE ...",
    "submit": "GAME move BOARD USERID MAILPASSWORD MOVE[#MOVENO]",
    "confirm": "GAME move BOARD USERID MAILPASSWORD MOVE[#MOVENO]",
}

# What a form leaves to words, said after it in the reader's language (the forms themselves,
# command words and placeholders, are the protocol: English).
FORM_NOTES = {
    "message": gettext_noop("the mail's body is the message"),
    "broadcast": gettext_noop("the mail's body is the message"),
    "multiple": gettext_noop("the mail's body holds the commands, one a line"),
    "queue": gettext_noop("an empty list clears the queue"),
    "chat": gettext_noop("the mail's body is the message"),
}


def described(verb: str, form: str) -> str:
    """A command's form as the help and the refusals show it, with its note if it has one."""
    note = FORM_NOTES.get(verb)
    return f"{form} ({gettext(note)})" if note else form


_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Command:
    """One command: `game` is a site slug (None for a global command), `verb` lowercased."""

    game: str | None
    verb: str
    words: tuple[str, ...]

    @property
    def form(self) -> str:
        forms = GLOBAL_FORMS if self.game is None else GAME_FORMS
        text = described(self.verb, forms[self.verb])
        return text if self.game is None else text.replace("GAME", self.game)


class BadCommand(Exception):
    """What was wrong with a command, in words, and the form to use instead."""

    def __init__(self, code: str, message: str, form: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.form = form


def game_slug(word: str) -> str | None:
    """The site's slug for a game's name as pbmserv or a person writes it, else None."""
    return GAME_NAMES.get(word.lower().replace("-", "").replace("_", ""))


def strip_reply_prefixes(text: str) -> str:
    """Mail programs prefix replies and forwards: "Re: zigzag move ..." is the command."""
    return re.sub(r"^\s*((re|fwd?|aw|sv)\s*:\s*)+", "", text, flags=re.IGNORECASE)


def words_of(text: str) -> list[str]:
    return _WORD.findall(text)


def is_challenge(text: str) -> bool:
    """Whether `text` is a `GAME challenge ...` command (read as the lobby reads it)."""
    words = words_of(text)
    return len(words) >= 2 and words[1].lower() == "challenge"


def parse(text: str) -> Command:
    """The command in a subject line; BadCommand if there is none that pbmserv knew."""
    if len(text) > MAX_COMMAND_CHARS:
        raise BadCommand(
            "bad_command",
            _("A command is one line of at most %(count)s characters.")
            % {"count": MAX_COMMAND_CHARS},
        )
    words = words_of(strip_reply_prefixes(text))
    if not words:
        raise BadCommand(
            "bad_command", _("The subject is empty: put the command there (try `help`).")
        )
    first = words[0].lower()
    slug = game_slug(first)
    if slug is not None:
        if len(words) < 2:
            raise BadCommand(
                "bad_command",
                _("Say what to do in %(game)s: one of %(commands)s.")
                % {"game": slug, "commands": ", ".join(sorted(GAME_FORMS))},
                f"{slug} help",
            )
        verb = words[1].lower()
        if verb not in GAME_FORMS:
            raise BadCommand(
                "bad_command",
                _("%(game)s has no command %(word)s; its commands: %(commands)s.")
                % {
                    "game": slug,
                    "word": repr(words[1])[:40],
                    "commands": ", ".join(sorted(GAME_FORMS)),
                },
                f"{slug} help",
            )
        return Command(slug, verb, tuple(words[2:]))
    if first in GLOBAL_FORMS:
        return Command(None, first, tuple(words[1:]))
    raise BadCommand(
        "bad_command",
        _("%(word)s is neither a command nor a game. Commands: %(commands)s; games: %(games)s.")
        % {
            "word": repr(words[0])[:40],
            "commands": ", ".join(sorted(GLOBAL_FORMS)),
            "games": ", ".join(sorted(set(GAME_NAMES.values()))),
        },
        "help",
    )


def split_move_number(word: str) -> tuple[str, int | None]:
    """`c#7` -> ("c", 7): a move and the number it is to have in the game's list."""
    move, hash_sign, number = word.rpartition("#")
    if not hash_sign:
        return word, None
    if not re.fullmatch(r"[0-9]{1,6}", number) or not move:
        raise BadCommand(
            "bad_move_number",
            _("After '#' comes the move's number, as in c#7, not %(word)s.")
            % {"word": repr(word)[:40]},
        )
    return move, int(number)


def board_number(word: str) -> int:
    if not re.fullmatch(r"[0-9]{1,12}", word):
        raise BadCommand(
            "bad_board",
            _("A board is its number, as in 12, not %(word)s.") % {"word": repr(word)[:40]},
        )
    return int(word)
