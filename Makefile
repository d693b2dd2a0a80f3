# The two commands of the README: `make run` and `make test`. Everything they need is set up here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Daphne refuses bigger websocket messages (the application refuses them too).
WS_MAX_BYTES ?= 65536
# The PostgreSQL pass of `make test` uses this database (127.0.0.1:5432, trust auth).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: run test lint format check venv dev clean chromium gettext fonts endgames messages chaos screenshots cluster-packages

$(VENV)/bin/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps: reinstall only when pyproject.toml changes, so a second `make run` just starts.
$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# A local secret for the embedded default; production passes DJANGO_SECRET_KEY.
.secret_key: | $(VENV)/bin/python
	$(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))' > $@
	chmod 600 $@

# A development VAPID key pair for push notices (push/keys.py); production passes
# VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT (docs/DEPLOY.md).
.vapid_keys: | $(VENV)/.installed
	$(BIN)/python -m push.keys $@ >/dev/null

# The server and, beside it, the sweeper that ends games whose clocks ran out and the worker
# that plays the computer's moves. With METRICS_PORT=N each serves its metrics (docs/METRICS.md):
# the server on N, the sweeper on N+1, the worker on N+2, the mail door on N+3.
run: $(VENV)/.installed .secret_key .vapid_keys fonts
	@test -s .vapid_keys || $(BIN)/python -m push.keys .vapid_keys >/dev/null  # an emptied file
	@export DJANGO_SECRET_KEY="$${DJANGO_SECRET_KEY:-$$(cat .secret_key)}"; \
	export VAPID_PUBLIC_KEY="$${VAPID_PUBLIC_KEY:-$$(sed -n 's/^public=//p' .vapid_keys)}"; \
	export VAPID_PRIVATE_KEY="$${VAPID_PRIVATE_KEY:-$$(sed -n 's/^private=//p' .vapid_keys)}"; \
	export VAPID_SUBJECT="$${VAPID_SUBJECT:-mailto:noreply@localhost}"; \
	$(BIN)/python manage.py migrate --noinput && \
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0 && \
	{ METRICS_PORT=$${METRICS_PORT:+$$((METRICS_PORT + 1))} $(BIN)/python manage.py sweeper & SWEEPER=$$!; \
	  METRICS_PORT=$${METRICS_PORT:+$$((METRICS_PORT + 2))} $(BIN)/python manage.py bots & BOTS=$$!; \
	  METRICS_PORT=$${METRICS_PORT:+$$((METRICS_PORT + 3))} $(BIN)/python manage.py mailserver & MAIL=$$!; \
	  trap 'kill $$SWEEPER $$BOTS $$MAIL 2>/dev/null' EXIT; trap 'exit 143' TERM INT; \
	  echo "Serving on http://$(HOST):$(PORT)/ (mail commands: SMTP on 127.0.0.1:$${PBM_SMTP_PORT:-8025})"; \
	  WS_MAX_BYTES=$(WS_MAX_BYTES) $(BIN)/python -m config.serve --host $(HOST) --port $(PORT); }

# One suite in two passes, each test once on the database it is about (tests/conftest.py):
# pass 1 on the embedded default (SQLite, in-memory layer) runs what touches no database, the
# browser tests (their servers on the embedded default) and the real-Redis tests; pass 2 on the
# real PostgreSQL runs every test that touches the database or starts servers (the production
# shape: PostgreSQL + Redis). A test bound to one database carries the marker `postgres` or
# `sqlite`, one run on both (`make run`'s two shapes) `both_databases`, with a reason. Each
# pass runs on TEST_JOBS workers (pytest-xdist: the long tests handed out first, the files
# sharing a started stack whole to one worker, see tests/conftest.py). No test runs alone: a
# time limit is a benchmark's to judge (the fault-injection suite's figures are `make chaos`'s).
TEST_JOBS ?= 4
# The browser tests drive Debian's Chromium: its headless shell, and the whole browser where a
# test needs it (Playwright's own download does not work here).
chromium:
	@test -x /usr/bin/chromium -a -x /usr/bin/chromium-headless-shell || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian's chromium and chromium-headless-shell for the browser tests"; \
	    (apt-get install -y -q chromium chromium-headless-shell >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && \
	      apt-get install -y -q chromium chromium-headless-shell >/dev/null)); \
	  fi; \
	  test -x /usr/bin/chromium -a -x /usr/bin/chromium-headless-shell || { \
	    echo "The browser tests need Debian's Chromium: run 'apt-get install chromium" \
	      "chromium-headless-shell' as root"; \
	    exit 1; }; }

# Debian's DejaVu fonts: the letters of the pictures of positions (games/pictures.py), in
# every language the site speaks.
fonts:
	@test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian's fonts-dejavu-core for the pictures of positions"; \
	    (apt-get install -y -q fonts-dejavu-core >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && apt-get install -y -q fonts-dejavu-core >/dev/null)); \
	  fi; \
	  test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || { \
	    echo "The pictures need Debian's DejaVu fonts: run 'apt-get install fonts-dejavu-core'" \
	      "as root"; \
	    exit 1; }; }

# The cluster drill's services (devtools/cluster/, docs/SCALING.md): nginx in front and
# PgBouncer before PostgreSQL, from Debian (PostgreSQL and Redis are the machine's own
# packages; Sentinel is redis-server's own mode); Node.js for its second players.
cluster-packages:
	@test -x /usr/sbin/nginx -a -x /usr/sbin/pgbouncer || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian's nginx and pgbouncer for the cluster drill"; \
	    (apt-get install -y -q nginx pgbouncer >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && apt-get install -y -q nginx pgbouncer >/dev/null)); \
	  fi; \
	  test -x /usr/sbin/nginx -a -x /usr/sbin/pgbouncer || { \
	    echo "The cluster drill needs Debian's nginx and pgbouncer: run 'apt-get install" \
	      "nginx pgbouncer' as root"; \
	    exit 1; }; }
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian's nodejs and npm for the cluster drill's Node.js players"; \
	    (apt-get install -y -q nodejs npm >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && apt-get install -y -q nodejs npm >/dev/null)); \
	  fi; \
	  command -v npm >/dev/null || { \
	    echo "The cluster drill's Node.js players need node and npm: run 'apt-get install" \
	      "nodejs npm' as root"; \
	    exit 1; }; }
	@# Its second checker (devtools/cluster/node): the versions package-lock.json names.
	@test devtools/cluster/node/node_modules/.package-lock.json -nt devtools/cluster/node/package-lock.json || \
	  npm ci --prefix devtools/cluster/node --no-audit --no-fund --loglevel=error

# The endgame databases (docs/ENDGAMES.md): every Diffusion position with at most
# ENDGAME_STONES stones on the board, every Four-rank one with FOUR_RANK_STONES, ZigZag's
# default set (6 pits x 5 seeds) with ZIGZAG_SEEDS seeds and its 4x3 and 2x7 sets whole, into
# endgames/ (ENDGAMES_DIR), where the site reads them. Not in git: reproducible (each build
# prints its SHA-256); about 3 minutes and 236 MB for 20 stones, 2 minutes and 154 MB for 8,
# 4 minutes and 973 MB for ZigZag's 15 seeds (17, the most this machine's memory allows, takes
# 6 minutes, 2.9 GB and 20 GB of memory to build), 1.5 minutes and 368 MB for 4x3.
ENDGAME_STONES ?= 20
FOUR_RANK_STONES ?= 8
ZIGZAG_SEEDS ?= 15
endgames: $(VENV)/.installed-dev
	$(BIN)/python -m devtools endgames build --most $(ENDGAME_STONES) --out endgames/diffusion.bin
	$(BIN)/python -m devtools endgames build --game four-rank-diffusion \
		--most $(FOUR_RANK_STONES) --out endgames/four-rank-diffusion.bin
	$(BIN)/python -m devtools endgames build --game zigzag --options pits=6,seeds=5 \
		--most $(ZIGZAG_SEEDS) --out endgames/zigzag-6x5.bin
	$(BIN)/python -m devtools endgames build --game zigzag --options pits=4,seeds=3 \
		--most 24 --out endgames/zigzag-4x3.bin
	$(BIN)/python -m devtools endgames build --game zigzag --options pits=2,seeds=7 \
		--most 28 --out endgames/zigzag-2x7.bin

# GNU gettext (xgettext, msgmerge, msgfmt): `make messages`, and the test that the catalogs
# hold every string the source marks (tests/test_translations.py).
gettext:
	@command -v xgettext >/dev/null && command -v msgfmt >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian's gettext for the translation catalogs"; \
	    (apt-get install -y -q gettext >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null && apt-get install -y -q gettext >/dev/null)); \
	  fi; \
	  command -v xgettext >/dev/null || { \
	    echo "The translation catalogs need GNU gettext: run 'apt-get install gettext' as root"; \
	    exit 1; }; }

# The translation catalogs (docs/TRANSLATING.md): every marked string of the pages, e-mails and
# Python into locale/<language>/LC_MESSAGES/django.po, the client's into djangojs.po, then
# compiled (.mo, committed beside them). Translate what is new, then run it again.
MESSAGE_IGNORES := --ignore=.venv --ignore=tests --ignore=devtools --ignore=docs \
	--ignore=staticfiles --ignore=docker --ignore=test-artifacts --ignore='*.egg-info'
messages: $(VENV)/.installed-dev gettext
	$(BIN)/python manage.py makemessages -l fr -l de -l es -d django --no-obsolete \
		--add-location=file $(MESSAGE_IGNORES)
	$(BIN)/python manage.py makemessages -l fr -l de -l es -d djangojs --no-obsolete \
		--add-location=file $(MESSAGE_IGNORES)
	$(BIN)/python manage.py compilemessages --ignore=.venv

# Python keeps the bytecode of what it compiles (__pycache__/, ignored by git) even where the
# machine's environment says not to (PYTHONDONTWRITEBYTECODE): every test worker and every
# server a test starts would otherwise compile the project again, and pytest rewrite every
# test module again (about 7 s of CPU for each worker's collection, 0.4 s for each process).
test screenshots chaos: export PYTHONDONTWRITEBYTECODE :=
test: $(VENV)/.installed-dev chromium gettext fonts cluster-packages lint
	$(BIN)/pytest -m "not postgres" -n $(TEST_JOBS) --dist loadscope $(PYTEST_ARGS)
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
		$(BIN)/pytest -m "not sqlite" --ignore=tests/rules -n $(TEST_JOBS) --dist loadscope $(PYTEST_ARGS)

# The browser tests, with a picture of every board and page they visit in test-artifacts/.
screenshots: $(VENV)/.installed-dev chromium
	SCREENSHOTS=1 $(BIN)/pytest -m "browser and not postgres" -n $(TEST_JOBS) --dist loadscope $(PYTEST_ARGS)
	SCREENSHOTS=1 DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
		$(BIN)/pytest -m "browser and not sqlite" -n $(TEST_JOBS) --dist loadscope $(PYTEST_ARGS)

# The fault-injection suite against two server processes (about 20 minutes; `make test` runs
# its quick form). It runs its own Redis, since it kills it, and its own database.
CHAOS_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/chaos
chaos: $(VENV)/.installed-dev
	DATABASE_URL="$(CHAOS_DATABASE_URL)" \
	DJANGO_SECRET_KEY="$${DJANGO_SECRET_KEY:-chaos-only-secret-key-not-for-production-0123456789}" \
		$(BIN)/python -m devtools chaos $(CHAOS_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict games/rules tournaments/pairing
	$(BIN)/mypy config realtime accounts games ratings bots lobby tournaments follows pbm privacy moderation analysis puzzles push botapi devtools

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .ruff_cache .mypy_cache
