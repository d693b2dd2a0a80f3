"""The Docker production shape. No Docker engine runs here, so this checks what can be
checked: the files parse, they fit together, and every setting they pass is one the project
reads."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DOCKER / "compose.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def settings_variables() -> set[str]:
    """Every environment variable the settings read."""
    source = (ROOT / "config" / "settings.py").read_text()
    return set(
        re.findall(r'(?:os\.environ\.get|env_bool|env_list)\(\s*"([A-Z_]+)"', source)
        + re.findall(r'env="([A-Z_]+)"', source)
    )


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_compose_has_the_production_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {
        "db",
        "redis",
        "migrate",
        "web1",
        "web2",
        "web3",
        "sweeper",
        "bots",
        "mail",
        "proxy",
        "prometheus",
        "grafana",
    }
    assert compose["services"]["sweeper"]["command"] == ["python", "manage.py", "sweeper"]
    assert compose["services"]["mail"]["command"][:3] == ["python", "manage.py", "mailserver"]
    assert compose["services"]["bots"]["command"] == ["python", "manage.py", "bots"]
    assert compose["services"]["db"]["image"].startswith("postgres:")
    assert compose["services"]["redis"]["image"].startswith("redis:")
    assert compose["services"]["migrate"]["command"] == [
        "python",
        "manage.py",
        "migrate",
        "--noinput",
    ]
    assert compose["services"]["migrate"]["restart"] == "no"
    # The spare slot of an upgrade (docs/DEPLOY.md): not started by `up`.
    assert compose["services"]["web3"]["profiles"] == ["spare"]


def test_both_web_processes_wait_for_the_migration(compose: dict[str, Any]) -> None:
    for name in ("web1", "web2", "web3"):
        depends = compose["services"][name]["depends_on"]
        assert depends["migrate"] == {"condition": "service_completed_successfully"}
        assert depends["db"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_every_variable_compose_passes_is_one_the_settings_read(compose: dict[str, Any]) -> None:
    known = settings_variables()
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG"} <= known
    for name in ("web1", "web2", "migrate"):
        passed = set(compose["services"][name]["environment"])
        assert passed <= known, f"{name} passes settings nobody reads: {passed - known}"
        assert compose["services"][name]["environment"]["DATABASE_URL"].startswith("postgres://")
        assert compose["services"][name]["environment"]["REDIS_URL"].startswith("redis://redis")


def test_compose_builds_from_the_project_with_the_dockerfile(compose: dict[str, Any]) -> None:
    build = compose["services"]["web1"]["build"]
    assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == DOCKER / "Dockerfile"
    for name in ("proxy", "prometheus", "grafana"):
        for volume in compose["services"][name]["volumes"]:
            source = volume.split(":")[0]
            if source.startswith("."):  # a file of ours, not a named volume
                assert (DOCKER / source).exists(), f"{name} mounts a missing file: {source}"


def test_the_image_copies_files_that_exist_and_runs_daphne_safely() -> None:
    instructions = dockerfile_instructions()
    assert instructions[0][0] == "FROM"
    for kind, argument in instructions:
        if kind == "COPY" and not argument.startswith("--from="):  # a stage's, not ours
            *sources, _ = argument.split()
            for source in sources:
                found = list(ROOT.glob(source)) if "*" in source else [ROOT / source]
                assert found and all(path.exists() for path in found), (
                    f"COPY of a missing path: {source}"
                )
    runs = " ".join(argument for kind, argument in instructions if kind == "RUN")
    assert "collectstatic" in runs
    command = json.loads(next(argument for kind, argument in instructions if kind == "CMD"))
    # The project's Daphne launcher, listening on every interface of the container.
    assert command[:3] == ["python", "-m", "config.serve"]
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert "--proxy-headers" in command  # nginx in front passes the client's address


def test_the_tooling_builds_the_endgame_database_in_a_stage_and_stays_out_of_the_image() -> None:
    instructions = dockerfile_instructions()
    stages = [i for i, (kind, _) in enumerate(instructions) if kind == "FROM"]
    assert len(stages) == 2 and instructions[stages[0]][1].endswith("AS endgames")
    builder, image = instructions[: stages[1]], instructions[stages[1] :]
    assert any("diffusion_solve" in argument for kind, argument in builder if kind == "RUN")
    copied = [argument for kind, argument in image if kind == "COPY"]
    assert not any("devtools" in argument for argument in copied)
    assert "--from=endgames /build/endgames ./endgames" in copied
    from django.conf import settings

    assert settings.ENDGAMES_DIR == ROOT / "endgames"  # /app/endgames in the image


def test_the_image_holds_every_file_the_site_reads_as_it_runs() -> None:
    # Pages made from documents, in every language, and the compiled catalogs: a file left
    # out of the image is a 500 (or English) in production only.
    from django.conf import settings

    from games.rules_pages import RULES_DIR

    read = [
        *RULES_DIR.rglob("*.md"),
        *(ROOT / "docs").glob("PBMSERV*.md"),
        *(ROOT / "docs").glob("NOTATION*.md"),
        *Path(settings.LOCALE_PATHS[0]).rglob("*.mo"),
    ]
    assert len(read) > 20
    sources = [
        source
        for kind, argument in dockerfile_instructions()
        if kind == "COPY"
        for source in argument.split()[:-1]
    ]
    for path in read:
        relative = path.relative_to(ROOT).as_posix()
        assert any(
            fnmatch.fnmatch(relative, source) or relative.startswith(source.rstrip("/") + "/")
            for source in sources
        ), f"the image lacks {relative}"


def test_the_image_and_the_package_hold_every_app_of_the_product() -> None:
    from django.conf import settings

    apps = {
        name.split(".")[0]
        for name in settings.INSTALLED_APPS
        if (ROOT / name.split(".")[0]).is_dir() and not name.startswith("devtools")
    }
    copied = {
        argument.split()[0]
        for kind, argument in dockerfile_instructions()
        if kind == "COPY" and len(argument.split()) == 2
    }
    missing = sorted(app for app in apps if app not in copied)
    assert not missing, f"the image does not copy {missing}"
    packaged = re.search(r"include = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.S)
    assert packaged is not None
    unpackaged = sorted(app for app in apps if f'"{app}*"' not in packaged.group(1))
    assert not unpackaged, f"pyproject.toml does not package {unpackaged}"


def test_the_proxy_upgrades_websockets_and_balances_both_processes(
    compose: dict[str, Any],
) -> None:
    conf = (DOCKER / "nginx.conf").read_text()
    # The site's part is its own file, mounted where the upstream's file includes it.
    mounted = compose["services"]["proxy"]["volumes"]
    assert "./nginx-site.conf:/etc/nginx/diffusion-site.conf:ro" in mounted
    assert re.search(r"^include /etc/nginx/diffusion-site\.conf;$", conf, re.M)
    conf += (DOCKER / "nginx-site.conf").read_text()
    upstream = re.search(r"upstream diffusion \{(.*?)\}", conf, re.S)
    assert upstream is not None
    # Each slot is looked up again as containers start and stop (`resolve`); web3 is the
    # spare an upgrade starts first.
    for slot in ("web1", "web2", "web3"):
        assert f"server {slot}:8000 resolve;" in upstream.group(1)
    assert "zone diffusion" in upstream.group(1)
    assert re.search(r"^resolver 127\.0\.0\.11 ", conf, re.M)
    ws = re.search(r"location /ws/ \{(.*?)\}", conf, re.S)
    assert ws is not None
    block = ws.group(1)
    assert "proxy_set_header Upgrade $http_upgrade;" in block
    assert "proxy_set_header Connection $connection_upgrade;" in block
    assert "proxy_http_version 1.1;" in block
    assert conf.count("{") == conf.count("}")


def test_the_readme_says_how_to_start_the_production_shape() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docker compose -f docker/compose.yml up" in readme
    assert "DJANGO_SECRET_KEY" in readme


def metered_services(compose: dict[str, Any]) -> dict[str, str]:
    """The long-running services that serve metrics: name -> METRICS_PORT."""
    return {
        name: str(service["environment"]["METRICS_PORT"])
        for name, service in compose["services"].items()
        if "METRICS_PORT" in (service.get("environment") or {})
        and service.get("restart") != "no"  # the one-shot migration serves nothing
    }


def test_prometheus_scrapes_every_process_that_serves_metrics(compose: dict[str, Any]) -> None:
    metered = metered_services(compose)
    assert set(metered) == {"web1", "web2", "web3", "sweeper", "bots", "mail"}
    config = yaml.safe_load((DOCKER / "prometheus.yml").read_text())
    targets = {
        target
        for job in config["scrape_configs"]
        for static in job["static_configs"]
        for target in static["targets"]
    }
    assert targets == {f"{name}:{port}" for name, port in metered.items()}
    assert "prometheus" in compose["services"]["grafana"]["depends_on"]


def test_the_metrics_ports_are_not_public(compose: dict[str, Any]) -> None:
    """Served on the internal network only: no service publishes them, nginx never names them,
    and Prometheus and Grafana are published on this machine's loopback only."""
    ports = set(metered_services(compose).values())
    for name, service in compose["services"].items():
        for published in service.get("ports", []):
            assert not any(str(published).endswith(f":{port}") for port in ports), name
    conf = (DOCKER / "nginx.conf").read_text() + (DOCKER / "nginx-site.conf").read_text()
    assert not any(port in conf for port in ports)
    for name in ("prometheus", "grafana"):
        assert all(p.startswith("127.0.0.1:") for p in compose["services"][name]["ports"])
