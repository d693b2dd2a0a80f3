"""pbmserv by mail, through real SMTP: accounts, challenges and whole games played only by
mail, and every bad mail answered with what was wrong (or, for a robot's, not at all)."""

from __future__ import annotations

import random
import re
import smtplib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from games.engine import client_moves, pick_client_move
from games.rules import get_rules
from tests.mail import MailSite, mail_site, text_of

# Both passes: the mail door's locks and its once-per-Message-ID rest on the database.

ALICE = "alice@players.test"
BOB = "bob@players.test"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MailSite]:
    # Whole games by mail send hundreds of mails a minute from each player; the limit on a
    # sender has a site of its own below.
    with mail_site(Path(tmp_path_factory.mktemp("mail")), PBM_MAILS_PER_SENDER="5000/m") as running:
        yield running
    assert "Traceback" not in running.output(), running.output()


@pytest.fixture(scope="module")
def players(site: MailSite) -> dict[str, str]:
    """alice and bob, signed up by mail."""
    for name, address in (("alice", ALICE), ("bob", BOB)):
        reply = site.ask(address, f"signup {name} {name}-mailpw")
        assert str(reply["Subject"]).startswith(f"signup {name}"), text_of(reply)
    return {"alice": ALICE, "bob": BOB}


def board_of(reply: EmailMessage) -> int:
    """The board a game command's answer is about ("zigzag board 12: ...")."""
    found = re.search(r"board (\d+)", str(reply["Subject"]))
    assert found, str(reply["Subject"])
    return int(found.group(1))


def legal_moves(text: str) -> list[str]:
    found = re.search(r"^Legal moves: (.*)$", text, re.MULTILINE)
    assert found, text
    return found.group(1).split()


def test_help_and_list_answer_anyone(site: MailSite) -> None:
    reply = site.ask("someone@players.test", "help")
    assert "GAME move BOARD USERID MAILPASSWORD MOVE[#MOVENO]" in text_of(reply)
    assert reply["Auto-Submitted"] == "auto-replied"
    on_move = text_of(site.ask("someone@players.test", "help move zigzag"))
    assert "GAME move BOARD USERID MAILPASSWORD MOVE[#MOVENO]" in on_move
    assert "-pits=N" in on_move
    listing = text_of(site.ask("someone@players.test", "list"))
    for slug in ("diffusion", "four-rank-diffusion", "diffusion-chess", "zigzag"):
        assert slug in listing


def test_a_zigzag_game_played_only_by_mail_ends_by_the_rules(
    site: MailSite, players: dict[str, str]
) -> None:
    offer = site.ask(ALICE, "zigzag challenge alice bob -pits=2 -seeds=3")
    assert "waiting for bob" in text_of(offer)
    told = site.sink.wait_for(lambda m: "alice challenges you" in str(m["Subject"]))
    assert "zigzag challenge alice bob -pits=2 -seeds=3" in text_of(told)
    begun = site.ask(BOB, "zigzag challenge alice bob -pits=2 -seeds=3")
    board = board_of(begun)
    text = text_of(begun)
    seats = {"alice": ALICE, "bob": BOB}
    passwords = {"alice": "alice-mailpw", "bob": "bob-mailpw"}
    for _ in range(200):
        if "Game over" in text:
            break
        mover = re.search(r"^(\w+) \([12]\) to move; this move is #(\d+)", text, re.MULTILINE)
        assert mover, text
        name, number = mover.group(1), int(mover.group(2))
        move = legal_moves(text)[0]
        reply = site.ask(
            seats[name], f"zigzag move {board} {name} {passwords[name]} {move}#{number}"
        )
        assert "played" in str(reply["Subject"]), text_of(reply)
        text = text_of(reply)
    assert "Game over" in text, text
    # The finished game answers a move with the board and why not.
    late = site.ask(ALICE, f"zigzag move {board} alice alice-mailpw a")
    assert "refused" in str(late["Subject"]) and "Game over" in text_of(late)


def test_a_stale_or_doubled_move_is_refused_with_the_board(
    site: MailSite, players: dict[str, str]
) -> None:
    site.ask(ALICE, "diffusion challenge alice bob")
    begun = site.ask(BOB, "diffusion challenge alice bob")
    board = board_of(begun)
    move = legal_moves(text_of(begun))[0]
    played = site.ask(ALICE, f"diffusion move {board} alice alice-mailpw {move}#1")
    assert "alice played" in str(played["Subject"])
    again = site.ask(ALICE, f"diffusion move {board} alice alice-mailpw {move}#1")
    assert "refused" in str(again["Subject"])
    assert "this board is at move #2" in text_of(again)
    assert "bob (2) to move; this move is #2" in text_of(again)
    illegal = site.ask(BOB, f"diffusion move {board} bob bob-mailpw Q#2")
    assert "'Q' refused" in str(illegal["Subject"]), text_of(illegal)
    assert "bob (2) to move; this move is #2" in text_of(illegal)
    passing = site.ask(BOB, f"diffusion move {board} bob bob-mailpw pass")
    assert "Diffusion has no pass" in text_of(passing)


def test_bad_mail_gets_a_clear_answer_that_shows_the_right_form(
    site: MailSite, players: dict[str, str]
) -> None:
    unknown = site.ask(ALICE, "frobnicate now")
    assert str(unknown["Subject"]).startswith("error (bad_command)")
    assert "Commands:" in text_of(unknown) or "neither a command nor a game" in text_of(unknown)
    form = site.ask(ALICE, "zigzag move 1 alice")
    assert "The form: zigzag move BOARD USERID MAILPASSWORD MOVE[#MOVENO]" in text_of(form)
    wrong = site.ask(ALICE, "zigzag move 1 alice not-her-password a")
    assert str(wrong["Subject"]).startswith("error (")
    # Someone else's address cannot drive alice's account, even with her mail password.
    stolen = site.ask("mallory@players.test", "change password alice alice-mailpw mallory-pw")
    assert str(stolen["Subject"]).startswith("error (bad_credentials)")
    site_password = site.ask(ALICE, "signup carol short")
    assert str(site_password["Subject"]).startswith("error (bad_password)")


def test_a_mail_delivered_twice_is_answered_once(site: MailSite) -> None:
    first = site.send("twice@players.test", "list", message_id="<same-mail@players.test>")
    site.sink.reply_to(first)
    site.send("twice@players.test", "list", message_id="<same-mail@players.test>")
    marker = site.ask("twice@players.test", "help")  # answered after the second copy was stored
    assert marker is not None
    replies = [m for m in site.sink.to("twice@players.test") if str(m["In-Reply-To"]) == first]
    assert len(replies) == 1


def test_robots_are_never_answered(site: MailSite) -> None:
    robot = "robot@players.test"
    site.send(robot, "help", headers={"Auto-Submitted": "auto-replied"})
    site.send(robot, "help", headers={"List-Id": "<players.lists.test>"})
    site.send(robot, "help", envelope_sender="")
    site.ask("person@players.test", "help")  # handled after the robots' mails
    assert site.sink.to(robot) == []


def test_mail_over_the_size_limit_is_refused_at_smtp(site: MailSite) -> None:
    with pytest.raises(smtplib.SMTPException) as refused:
        site.send("big@players.test", "help", "x" * (70 * 1024))
    assert "552" in str(refused.value) or "exceeded" in str(refused.value).lower()
    assert site.sink.to("big@players.test") == []


def test_replying_to_a_your_move_mail_with_just_the_move_plays_it_once(
    site: MailSite, players: dict[str, str]
) -> None:
    site.ask(ALICE, "zigzag challenge alice bob -pits=4 -seeds=1")
    begun = site.ask(BOB, "zigzag challenge alice bob -pits=4 -seeds=1")
    board = board_of(begun)
    first = legal_moves(text_of(begun))[0]
    site.ask(ALICE, f"zigzag move {board} alice alice-mailpw {first}#1")
    # The sweeper mails bob, who is on no page of the game, with a signed reply address.
    notice = site.sink.wait_for(
        lambda m: (
            str(m["Subject"]).startswith("Your move in ZigZag")
            and f"#{board} " in str(m["Subject"])
        )
    )
    assert BOB in str(notice["X-Envelope-To"])
    reply_to = str(notice["Reply-To"])
    assert reply_to.startswith("pbm+r-") and "bob (2) to move; this move is #2." in text_of(notice)
    answer = legal_moves(text_of(notice))[0]
    # Someone else replying from another address plays nothing.
    sent = site.send("mallory@players.test", answer, to=reply_to)
    refused = site.sink.reply_to(sent)
    assert str(refused["Subject"]).startswith("error (bad_credentials)")
    sent = site.send(BOB, f"Re: {answer}", to=reply_to)
    played = site.sink.reply_to(sent)
    assert str(played["Subject"]) == f"zigzag board {board}: bob played {answer}"
    # The same reply again is stale: refused with the board.
    sent = site.send(BOB, answer, to=reply_to)
    again = site.sink.reply_to(sent)
    assert "refused: this board is at move #3" in str(again["Subject"])
    # A forged or altered address (another move number under the old signature, a changed
    # signature, the signature cut off) is answered as such, and plays nothing.
    local, _at, domain = reply_to.partition("@")
    user_id, game_id, ply, signature = local.removeprefix("pbm+r-").split("-")
    assert (int(game_id), int(ply)) == (board, 1)
    for forged in (
        f"pbm+r-{user_id}-{game_id}-2-{signature}@{domain}",
        f"pbm+r-{user_id}-{game_id}-{ply}-{signature[:-1]}{'0' if signature[-1] != '0' else '1'}"
        f"@{domain}",
        f"pbm+r-{user_id}-{game_id}-{ply}@{domain}",
    ):
        sent = site.send(BOB, answer, to=forged)
        odd = site.sink.reply_to(sent)
        assert str(odd["Subject"]).startswith("error (bad_reply_address)"), str(odd["Subject"])
        assert "not valid" in text_of(odd) and "Nothing was played" in text_of(odd)
        assert "neither a command nor a game" not in text_of(odd)
    unchanged = text_of(site.ask(BOB, f"zigzag show {board}"))
    assert "to move; this move is #3." in unchanged, unchanged


def your_move_mail(site: MailSite, game: str, board: int) -> EmailMessage:
    """The "your move" mail the sweeper sends about a board."""
    return site.sink.wait_for(
        lambda m: (
            str(m["Subject"]).startswith(f"Your move in {game}")
            and f"#{board} " in str(m["Subject"])
        )
    )


def test_a_your_move_mail_says_which_clock_the_game_has(
    site: MailSite, players: dict[str, str]
) -> None:
    # Untimed (pbmserv's games were): no clock, and the forfeit that still ends a stalled game.
    site.ask(ALICE, "zigzag challenge alice bob -pits=2 -seeds=7")
    begun = site.ask(BOB, "zigzag challenge alice bob -pits=2 -seeds=7")
    board = board_of(begun)
    site.ask(ALICE, f"zigzag move {board} alice alice-mailpw {legal_moves(text_of(begun))[0]}#1")
    untimed = text_of(your_move_mail(site, "ZigZag", board))
    assert "You have untimed" not in untimed, untimed
    assert (
        "This game has no clock, but a player who does not move for 21 days loses it by forfeit."
        in untimed
    ), untimed
    # A correspondence clock: when the move is due, and the clock's allowance.
    site.ask(ALICE, "diffusion challenge alice bob -time=3d")
    begun = site.ask(BOB, "diffusion challenge alice bob -time=3d")
    board = board_of(begun)
    site.ask(ALICE, f"diffusion move {board} alice alice-mailpw {legal_moves(text_of(begun))[0]}#1")
    timed = text_of(your_move_mail(site, "Diffusion", board))
    due = re.search(r"^Move by (\d{4}-\d\d-\d\d \d\d:\d\d) UTC \(3 days per move\)\.$", timed, re.M)
    assert due, timed
    when = datetime.strptime(due.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert abs(when - (datetime.now(UTC) + timedelta(days=3))) < timedelta(minutes=5)
    assert "You have" not in timed


def html_mail(sender: str, subject: str, html: str, *, plain: str | None = None) -> EmailMessage:
    """A mail as the mail programs that write HTML send it: HTML only, or (with `plain`)
    multipart/alternative with that plain part beside the HTML."""
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = sender, "pbm@localhost", subject
    mail["Message-ID"] = f"<{uuid.uuid4().hex}@players.test>"
    if plain is None:
        mail.set_content(html, subtype="html")
    else:
        mail.set_content(plain)
        mail.add_alternative(html, subtype="html")
    return mail


def ask_with(site: MailSite, mail: EmailMessage) -> EmailMessage:
    with smtplib.SMTP("127.0.0.1", site.port, timeout=10) as smtp:
        smtp.send_message(mail)
    return site.sink.reply_to(str(mail["Message-ID"]))


def test_an_html_only_mails_body_is_read_as_its_text(
    site: MailSite, players: dict[str, str]
) -> None:
    # Gmail's way: a <div> a line, inside a wrapping <div>, with a signature after.
    commands = (
        '<div dir="ltr"><div>zigzag help</div><div>list</div></div>'
        "<style>div { color: red }</style><script>help</script>"
    )
    several = ask_with(site, html_mail(ALICE, "multiple", commands))
    assert str(several["Subject"]) == "multiple: 2 of 2 done", text_of(several)
    assert "> zigzag help\nZigZag:" in text_of(several), text_of(several)
    assert "> list\nThe games here:" in text_of(several), text_of(several)
    site.ask(ALICE, "zigzag challenge alice bob -pits=2 -seeds=9")
    board = board_of(site.ask(BOB, "zigzag challenge alice bob -pits=2 -seeds=9"))
    # Outlook's way: paragraphs, inline markup and non-breaking spaces.
    chat = (
        '<html><body><p class="MsoNormal">Good&nbsp;<b>luck</b>, bob!<o:p></o:p></p></body></html>'
    )
    sent = ask_with(site, html_mail(ALICE, f"zigzag chat {board} alice alice-mailpw", chat))
    assert str(sent["Subject"]) == f"zigzag board {board}: chat sent", text_of(sent)
    assert "Sent to bob: Good luck, bob!" in text_of(sent)
    told = site.sink.wait_for(lambda m: str(m["Subject"]) == f"zigzag board {board}: alice says")
    assert "Good luck, bob!" in text_of(told)


def test_an_empty_plain_part_beside_the_html_one_gives_way_to_it(
    site: MailSite, players: dict[str, str]
) -> None:
    html = "<p>help zigzag<br>list</p><blockquote>signup mallory quoted-pw</blockquote>"
    several = ask_with(site, html_mail(BOB, "multiple", html, plain="\n  \n"))
    assert str(several["Subject"]) == "multiple: 2 of 2 done", text_of(several)
    assert "> help zigzag\n" in text_of(several) and "> list\n" in text_of(several)
    # The quoted text of a reply is not the sender's: no command in it is run.
    assert "mallory" not in text_of(several)
    # A plain part that says something is read, not the HTML beside it.
    plain = ask_with(site, html_mail(BOB, "multiple", "<p>list</p>", plain="help zigzag\n"))
    assert str(plain["Subject"]) == "multiple: 1 of 1 done", text_of(plain)
    assert "> help zigzag\n" in text_of(plain)


@pytest.mark.sqlite(reason="whole games: the moves' services are the web's, tested on both")
@pytest.mark.parametrize("slug", ["diffusion", "four-rank-diffusion", "diffusion-chess", "zigzag"])
def test_a_whole_game_of_each_game_is_played_by_mail_to_its_end_by_the_rules(
    site: MailSite, players: dict[str, str], slug: str
) -> None:
    """Each player keeps their own board (the rule engine) and mails moves with #MOVENO; the
    server's boards and its end agree with it."""
    rules = get_rules(slug)
    state = rules.initial_state()
    rng = random.Random(slug)
    site.ask(ALICE, f"{slug} challenge alice bob")
    begun = site.ask(BOB, f"{slug} challenge alice bob")
    board = board_of(begun)
    seats = {1: ("alice", ALICE, "alice-mailpw"), 2: ("bob", BOB, "bob-mailpw")}
    number = 0
    while rules.outcome(state) is None:
        number += 1
        name, address, password = seats[rules.to_move(state)]
        move = pick_client_move(client_moves(rules, state), rng)
        reply = site.ask(address, f"{slug} move {board} {name} {password} {move}#{number}")
        assert str(reply["Subject"]) == f"{slug} board {board}: {name} played {move}", text_of(
            reply
        )
        state = rules.play(state, move)
    outcome = rules.outcome(state)
    assert outcome is not None
    winner = seats[outcome.winner][0] if outcome.winner else None
    assert f"Game over: {winner} wins" in text_of(reply), text_of(reply)
    final = text_of(site.ask(ALICE, f"{slug} show {board}"))
    assert rules.render_text(state).rstrip("\n") in final


def test_a_sender_over_the_limit_is_told_to_try_later_and_others_are_not(tmp_path: Path) -> None:
    # Counted in fixed windows: a minute's window could end between the third mail and the
    # fourth on a busy machine and let the fourth through; an hour's is as good as never.
    with mail_site(tmp_path, PBM_MAILS_PER_SENDER="3/h") as limited:
        for _ in range(3):
            limited.ask("eager@players.test", "list")
        with pytest.raises(smtplib.SMTPDataError) as later:
            limited.send("eager@players.test", "list")
        assert later.value.smtp_code == 451
        assert limited.ask("calm@players.test", "list") is not None
        assert "Traceback" not in limited.output()


def test_a_mail_server_killed_mid_burst_answers_every_stored_mail_once_when_back(
    tmp_path: Path,
) -> None:
    with mail_site(tmp_path) as site:
        sent = site.send_many([(f"burst{n % 6}@players.test", "list") for n in range(48)])
        site.kill()  # every mail was stored (SMTP said 250); some were not answered yet
        answered_before = sum(1 for message_id in sent if message_id in site.sink.replies)
        site.restart()
        for message_id in sent:
            site.sink.reply_to(message_id)
        ids: dict[str, set[str]] = {}
        for mail in site.sink.mails:
            ids.setdefault(str(mail["In-Reply-To"]), set()).add(str(mail["Message-ID"]))
        assert all(len(ids[message_id]) == 1 for message_id in sent), ids
        assert answered_before < len(sent), "the kill came after every answer: nothing was tested"
        assert "Traceback" not in site.output()


def test_a_line_break_smuggled_into_a_subject_adds_no_header_to_the_answer(site: MailSite) -> None:
    raw = (
        "From: sly@players.test\r\nTo: pbm@localhost\r\n"
        "Message-ID: <smuggled@players.test>\r\n"
        "Subject: =?utf-8?q?zigzag_show_1=0D=0ABcc:_victim@players.test?=\r\n\r\nhi\r\n"
    )
    with smtplib.SMTP("127.0.0.1", site.port, timeout=10) as smtp:
        smtp.sendmail("sly@players.test", ["pbm@localhost"], raw.encode())
    answer = site.sink.reply_to("<smuggled@players.test>")
    assert answer["Bcc"] is None
    assert "\n" not in str(answer["Subject"])
    assert str(answer["X-Envelope-To"]) == "sly@players.test"
    assert site.sink.to("victim@players.test") == []


def test_a_rated_correspondence_game_is_challenged_and_accepted_by_mail(
    site: MailSite, players: dict[str, str]
) -> None:
    site.ask(ALICE, "diffusion challenge bob alice -rated=1 -time=3d")
    begun = site.ask(BOB, "diffusion challenge bob alice -rated=1 -time=3d")
    assert "the game against alice has begun" in str(begun["Subject"]), text_of(begun)
    assert "bob (1) vs alice (2)" in text_of(begun)
    assert "rated, 3 days per move" in text_of(begun)


def test_delete_waits_for_the_games_to_end_then_closes_the_account(site: MailSite) -> None:
    dave, erin = "dave@players.test", "erin@players.test"
    site.ask(dave, "signup dave dave-mailpw")
    site.ask(erin, "signup erin erin-mailpw")
    site.ask(dave, "zigzag challenge dave erin -pits=2 -seeds=1")
    begun = site.ask(erin, "zigzag challenge dave erin -pits=2 -seeds=1")
    board = board_of(begun)
    early = site.ask(dave, "delete dave dave-mailpw")
    assert str(early["Subject"]).startswith("error (games_going)")
    assert str(board) in text_of(early)
    site.ask(dave, f"zigzag resign {board} dave dave-mailpw")
    closed = site.ask(dave, "delete dave dave-mailpw")
    assert str(closed["Subject"]) == "delete dave: done"
    shown = re.search(r"show it as (Closed-\w+)", text_of(closed))
    assert shown is not None, text_of(closed)
    neutral = shown.group(1)
    after = site.ask(erin, f"zigzag games {neutral} all")  # its past games show the new name
    assert f"{board}" in text_of(after)
    again = site.ask("someone@players.test", "signup Dave dave-2")  # the name is nobody's
    assert str(again["Subject"]).startswith("error (name_taken)")
    refused = site.ask(dave, "change password dave dave-mailpw dave-other")
    assert str(refused["Subject"]).startswith("error (bad_credentials)")


def pictures_of(mail: EmailMessage) -> list[tuple[str, int]]:
    """The PNG pictures a mail attaches: (file name, width), each decoded."""
    import io

    from PIL import Image

    found = []
    for part in mail.iter_attachments():
        assert part.get_content_type() == "image/png", part.get_content_type()
        with Image.open(io.BytesIO(part.get_content())) as image:
            assert image.format == "PNG"
            found.append((str(part.get_filename()), image.width))
    return found


def test_a_player_who_asks_gets_the_boards_as_pictures_too(
    site: MailSite, players: dict[str, str]
) -> None:
    turned = site.ask(BOB, "change pictures bob bob-mailpw on")
    assert str(turned["Subject"]) == "change pictures bob on: done", text_of(turned)
    site.ask(ALICE, "zigzag challenge alice bob -pits=4 -seeds=3")
    begun = site.ask(BOB, "zigzag challenge alice bob -pits=4 -seeds=3")
    board = board_of(begun)
    # The reply that shows the new board attaches its picture (the start: move 0).
    assert pictures_of(begun) == [(f"game-{board}-move-0.png", 600)]
    played = site.ask(
        ALICE, f"zigzag move {board} alice alice-mailpw {legal_moves(text_of(begun))[0]}#1"
    )
    assert pictures_of(played) == []  # alice did not ask
    # bob's "your move" mail, and his `show` of the board as it stood at two moments.
    assert pictures_of(your_move_mail(site, "ZigZag", board)) == [(f"game-{board}-move-1.png", 600)]
    shown = site.ask(BOB, f"zigzag show {board}#0 {board}")
    assert "Legal moves" in text_of(shown)
    assert pictures_of(shown) == [
        (f"game-{board}-move-0.png", 600),
        (f"game-{board}-move-1.png", 600),
    ]
    # Refused: no picture; turned off: none any more.
    refused = site.ask(BOB, f"zigzag move {board} bob bob-mailpw Q#2")
    assert "refused" in str(refused["Subject"]) and pictures_of(refused) == []
    site.ask(BOB, "change pictures bob bob-mailpw off")
    assert pictures_of(site.ask(BOB, f"zigzag show {board}")) == []
    wrong = site.ask(BOB, "change pictures bob bob-mailpw maybe")
    assert "That is not the form of `change pictures`." in text_of(wrong)
