"""Shared fixtures of the Python conformance suite: clients pointed at a running longhaul emulator.

The vitest test `test/integration/conformance-python.test.ts` starts the emulator and runs pytest with its URLs
in the environment (LONGHAUL_GITHUB_URL, LONGHAUL_GOOGLE_APIKEYS_URL, LONGHAUL_GOOGLE_LOGGING_URL,
LONGHAUL_GOOGLE_DNS_URL, LONGHAUL_TOKEN, and LONGHAUL_GITHUB_API_VERSION: the REST API version PyGithub asks for,
2022-11-28 or 2026-03-10). Clients are used through their public methods only.
"""
import json
import os
import time
from pathlib import Path

import github
import google.oauth2.credentials
import googleapiclient
import pytest
from googleapiclient.discovery import build


def env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run this suite through test/integration/conformance-python.test.ts")
    return value


@pytest.fixture(scope="session")
def gh():
    return github.Github(auth=github.Auth.Token(env("LONGHAUL_TOKEN")), base_url=env("LONGHAUL_GITHUB_URL"), api_version=api_version(), retry=None, seconds_between_requests=None, seconds_between_writes=None)


def api_version():
    return env("LONGHAUL_GITHUB_API_VERSION")


def google_client(api, version, url_env):
    credentials = google.oauth2.credentials.Credentials(token=env("LONGHAUL_TOKEN"))
    # The emulator serves each API at the root of its own origin, as rootUrl; static discovery (no network).
    return build(api, version, credentials=credentials, client_options={"api_endpoint": env(url_env) + "/"}, static_discovery=True, cache_discovery=False)


@pytest.fixture(scope="session")
def apikeys():
    return google_client("apikeys", "v2", "LONGHAUL_GOOGLE_APIKEYS_URL")


@pytest.fixture(scope="session")
def logging_api():
    return google_client("logging", "v2", "LONGHAUL_GOOGLE_LOGGING_URL")


@pytest.fixture(scope="session")
def dns():
    return google_client("dns", "v1", "LONGHAUL_GOOGLE_DNS_URL")


def eventually(read, done, timeout_s=30.0, interval_s=0.1):
    """Reads until `done(value)` or the deadline (the emulator's operations finish on its real clock)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not done within {timeout_s} s: {value!r}")
        time.sleep(interval_s)


def parsed(obj, seen=None):
    """Reads every attribute PyGithub was given for `obj` (and the objects inside it) through its public
    properties: an attribute of the wrong type raises BadAttributeException, so every answer parses."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return obj
    seen.add(id(obj))
    if isinstance(obj, list):
        for item in obj:
            parsed(item, seen)
        return obj
    if not isinstance(obj, github.GithubObject.GithubObject):
        return obj
    # The attributes the answer carried (no completion: reading raw_data of a lazy object would fetch it).
    for name in obj._rawData:  # noqa: SLF001 - what the answer carried, to read each one through its property
        prop = getattr(type(obj), name, None)
        if isinstance(prop, property):
            parsed(getattr(obj, name), seen)
    return obj


_DISCOVERY = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def discovery(api, version):
    return json.loads((_DISCOVERY / f"{api}.{version}.json").read_text())


def schema_problems(doc, schema, value, at="$"):
    """Where `value` departs from a discovery schema: unknown fields, wrong JSON types, int64 not a string."""
    if "$ref" in schema:
        return schema_problems(doc, doc["schemas"][schema["$ref"]], value, at)
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{at} is not an object"]
        problems = []
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                problems += schema_problems(doc, props[key], item, f"{at}.{key}")
            elif extra is not None:
                problems += schema_problems(doc, extra, item, f"{at}.{key}")
            else:
                problems.append(f"{at}.{key} is not in the schema")
        return problems
    if kind == "array":
        if not isinstance(value, list):
            return [f"{at} is not an array"]
        return [p for i, item in enumerate(value) for p in schema_problems(doc, schema["items"], item, f"{at}[{i}]")]
    if kind == "string":
        # proto3 JSON: 64-bit integers travel as strings (format int64/uint64); so do times and bytes.
        return [] if isinstance(value, str) else [f"{at} is not a string ({schema.get('format', 'string')}): {value!r}"]
    if kind == "integer":
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{at} is not an integer: {value!r}"]
    if kind == "number":
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{at} is not a number: {value!r}"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{at} is not a boolean: {value!r}"]
    return []  # "any"


def method_response_schema(doc, dotted):
    """The response schema of a discovery method (`projects.locations.keys.get`)."""
    node = doc
    *resources, method = dotted.split(".")
    for name in resources:
        node = node["resources"][name]
    return node["methods"][method]["response"]


@pytest.fixture(scope="session")
def conforms():
    """Asserts that a Google answer matches its method's response schema in the API's discovery document."""
    def check(api, version, method, value):
        doc = discovery(api, version)
        problems = schema_problems(doc, method_response_schema(doc, method), value)
        assert problems == [], f"{api} {version} {method}: {problems}"
        return value
    return check
