"""PyGithub against the emulator's GitHub API: migrations, source imports, hooks and deliveries, events with
pagination, the rate-limit status, and what PyGithub reads on its own (the organization, the repository, the
token's user). Every object PyGithub builds is read attribute by attribute (`parsed`)."""
import pytest
import requests

from conftest import api_version, eventually, parsed

ORG = "octo-org"


def test_who_am_i_and_what_the_client_reads_first(gh):
    me = parsed(gh.get_user())
    assert me.login == "octocat"
    assert me.total_private_repos == 0
    assert parsed(gh.get_user("octocat")).public_repos == 1
    org = parsed(gh.get_organization(ORG))
    assert (org.login, org.public_repos, org.total_private_repos) == (ORG, 3, 1)
    repo = parsed(gh.get_repo(f"{ORG}/alpha"))
    assert (repo.full_name, repo.private, repo.default_branch) == (f"{ORG}/alpha", False, "main")
    with pytest.raises(Exception) as missing:
        gh.get_organization("no-such-org")
    assert getattr(missing.value, "status", None) == 404


def test_a_renamed_repository_is_followed_to_where_it_lives_now(gh):
    # PyGithub follows a 301 on the same scheme and host (to the Location's path) and builds the repository it
    # finds there: asked by the former name, it has the current one.
    repo = parsed(gh.get_repo(f"{ORG}/alpha-legacy"))
    assert (repo.id, repo.full_name) == (2001, f"{ORG}/alpha")
    assert repo.url.endswith(f"/repos/{ORG}/alpha")
    # The address the redirect names, asked for directly (PyGithub's get_repo by id).
    assert parsed(gh.get_repo(2001)).full_name == f"{ORG}/alpha"


def test_rate_limit_status_matches_the_headers(gh):
    gh.get_organization(ORG)
    overview = parsed(gh.get_rate_limit())
    core = overview.resources.core
    assert core.limit == 5000
    assert core.used >= 1 and core.remaining == core.limit - core.used
    # 2026-03-10 removes the deprecated `rate` (a copy of resources.core); 2022-11-28 still sends it.
    if api_version() == "2022-11-28":
        assert overview.rate.remaining == core.remaining
    else:
        assert "rate" not in overview.raw_data
    # The same window the x-ratelimit-* headers of every answer describe.
    remaining, limit = gh.rate_limiting
    assert limit == 5000 and remaining == core.remaining
    assert overview.resources.search.limit == 30


def test_organization_migration_start_poll_archive_delete_unlock(gh):
    org = gh.get_organization(ORG)
    migration = parsed(org.create_migration(["alpha", "beta"], lock_repositories=True, exclude_attachments=True))
    assert migration.state == "pending"
    assert [r.full_name for r in migration.repositories] == [f"{ORG}/alpha", f"{ORG}/beta"]
    assert eventually(migration.get_status, lambda s: s in ("exported", "failed")) == "exported"
    parsed(migration)
    assert migration.id in [m.id for m in parsed(list(org.get_migrations()))]
    # PyGithub reads the URL from the body of the 302, as GitHub sends it.
    url = migration.get_archive_url()
    assert url.startswith("http://")
    archive = requests.get(url, timeout=30)
    assert archive.status_code == 200
    assert archive.content[:2] == b"\x1f\x8b"
    for header in ("Content-Type", "ETag", "Accept-Ranges", "Last-Modified"):
        assert archive.headers.get(header), header
    migration.delete()
    migration.unlock_repo("alpha")
    migration.unlock_repo("beta")


def test_source_import_start_poll_to_complete(gh):
    repo = gh.get_repo(f"{ORG}/gamma")
    started = parsed(repo.create_source_import("subversion", "https://svn.example.test/repos/happy"))
    assert started.status in ("detecting", "importing")

    def status():
        source_import = repo.get_source_import()
        parsed(source_import)
        return source_import.status

    assert eventually(status, lambda s: s in ("complete", "error")) == "complete"
    done = parsed(repo.get_source_import())
    assert done.push_percent == 100
    # A conditional refresh: unchanged since the last read.
    assert done.update() is False


def test_hooks_create_edit_ping_test_and_deliveries_through_the_cursor(gh):
    org = gh.get_organization(ORG)
    hook = parsed(org.create_hook("web", {"url": "https://receiver.example.test/hook", "content_type": "json", "secret": "s"}, events=["push"], active=True))
    assert hook.config["secret"] == "********"
    hook.edit("web", {"url": "https://receiver.example.test/other", "content_type": "json"}, events=["push", "issues"])
    assert parsed(hook).events == ["push", "issues"]
    for _ in range(35):
        hook.ping()
    deliveries = parsed(list(org.get_hook_deliveries(hook.id)))
    assert len(deliveries) == 35  # 30 a page by default, the rest through the cursor in Link
    assert [d.id for d in deliveries] == sorted((d.id for d in deliveries), reverse=True)
    one = parsed(org.get_hook_delivery(hook.id, deliveries[0].id))
    assert (one.event, one.status_code) == ("ping", deliveries[0].status_code)
    assert hook.id in [h.id for h in parsed(list(org.get_hooks()))]

    repo = gh.get_repo(f"{ORG}/alpha")
    repo_hook = parsed(repo.create_hook("web", {"url": "https://receiver.example.test/repo"}, events=["push"]))
    # PyGithub's Hook.edit always sends `name`, which GitHub ignores on repository hooks.
    repo_hook.edit("web", {"url": "https://receiver.example.test/repo2"}, add_events=["issues"])
    assert parsed(repo_hook).events == ["push", "issues"]
    repo_hook.test()
    repo_hook.ping()
    assert len(parsed(list(repo.get_hook_deliveries(repo_hook.id)))) >= 1
    repo_hook.delete()
    hook.delete()


def test_events_paginate_and_parse(gh):
    repo_events = parsed(list(gh.get_repo(f"{ORG}/alpha").get_events()))
    assert len(repo_events) > 30  # more than one page of 30
    assert len({e.id for e in repo_events}) == len(repo_events)
    org_events = parsed(list(gh.get_organization(ORG).get_events()))
    assert len(org_events) > 30
    for event in repo_events + org_events:
        assert event.type.endswith("Event")
        assert isinstance(event.payload, dict)
        if event.type == "CreateEvent":
            assert {"ref", "ref_type", "full_ref"} <= set(event.payload)
    assert len(parsed(list(gh.get_user("octocat").get_public_events()))) > 30
