"""The Linear client: auth headers, GraphQL errors at any status, rate limits, timeouts, URLs."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from nxs.errors import NotFoundError, UpstreamError, ValidationError
from nxs.linear.client import DEFAULT_URL, LinearClient, api_url
from nxs.linear.connections import Connection

KEY = "lin_api_SECRET0123456789"
TEAMS = {"data": {"teams": {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}}}


def client(handler: Any, *, oauth: bool = False, sleeps: list[float] | None = None, **kw: Any):
    conn = Connection(label="AV", key=KEY, oauth=oauth)
    sleeper = sleeps.append if sleeps is not None else (lambda s: None)
    return LinearClient(
        conn, "https://linear.test/graphql", transport=httpx.MockTransport(handler),
        sleep=sleeper, clock=lambda: 1_000.0, **kw,
    )  # fmt: skip


def reply(status: int, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, content=orjson.dumps(body), headers=headers or {})


def test_personal_key_is_sent_bare_and_oauth_token_as_bearer() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        payload = orjson.loads(request.content)
        assert payload["operationName"] == "Teams"
        assert payload["variables"] == {"first": 250, "after": None}
        return reply(200, TEAMS)

    client(handler).run("Teams", {"first": 250, "after": None})
    client(handler, oauth=True).run("Teams", {"first": 250, "after": None})
    assert seen == [KEY, f"Bearer {KEY}"]


def test_graphql_errors_are_read_whatever_the_status_presentable_message_first() -> None:
    body = {
        "errors": [
            {
                "message": "Argument Validation Error",
                "extensions": {
                    "code": "INVALID_INPUT",
                    "userPresentableMessage": "Title is too long.",
                },
            }
        ]
    }
    for status in (200, 400):
        with pytest.raises(UpstreamError) as caught:
            client(lambda r, s=status: reply(s, body)).run("Teams", {"first": 1})
        assert caught.value.message == "Linear: Title is too long."
        assert caught.value.code == "LINEAR_ERROR"
        assert caught.value.details == {"linear_code": "INVALID_INPUT"}
        assert caught.value.suggestion.startswith("Linear refused the request as sent: check")


OUTAGE = {"errors": [{"message": "Service unavailable", "extensions": {
    "code": "SERVICE_UNAVAILABLE", "userPresentableMessage": "Linear is down for a moment."}}]}  # fmt: skip


def test_5xx_with_a_graphql_errors_body_is_unavailable_and_reads_are_retried() -> None:
    sleeps: list[float] = []
    c = client(lambda r: reply(503, OUTAGE), sleeps=sleeps)
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert caught.value.to_dict() == {
        "error": True, "kind": "upstream", "code": "LINEAR_UNAVAILABLE",
        "message": "Linear answered HTTP 503: Linear is down for a moment.",
        "suggestion": "try again in a minute; https://linearstatus.com has news",
        "details": {"http_status": 503, "linear_code": "SERVICE_UNAVAILABLE"},
    }  # fmt: skip
    assert sleeps == [1.0, 2.0] and c.sent == ["Teams"] * 3  # bounded, exponential
    answers = iter(
        [reply(500, OUTAGE), reply(503, OUTAGE, {"Retry-After": "7"}), reply(200, TEAMS)]
    )
    sleeps.clear()
    c = client(lambda r: next(answers), sleeps=sleeps)
    assert c.run("Teams", {"first": 1}) == TEAMS["data"]
    assert sleeps == [1.0, 7.0]  # Retry-After when it is near


def test_5xx_on_a_mutation_is_never_retried() -> None:
    sleeps: list[float] = []
    c = client(lambda r: reply(503, OUTAGE), sleeps=sleeps)
    with pytest.raises(UpstreamError) as caught:
        c.run("IssueCreate", {"input": {"teamId": "t", "title": "x"}})
    assert caught.value.code == "LINEAR_UNAVAILABLE" and c.sent == ["IssueCreate"]
    assert sleeps == []
    assert caught.value.message.endswith("; the change may or may not have been applied")
    assert caught.value.suggestion.startswith("read the state back with linear_query")


def test_entity_not_found_is_not_found_and_auth_errors_name_the_label() -> None:
    missing = {"errors": [{"message": "Entity not found: Issue", "extensions": {"code": "INPUT_ERROR",
               "userPresentableMessage": "Could not find referenced Issue."}}]}  # fmt: skip
    with pytest.raises(NotFoundError) as caught:
        client(lambda r: reply(200, missing)).run("Issue", {"id": "NC-9"})
    assert caught.value.code == "LINEAR_NOT_FOUND"
    assert caught.value.message == "Linear: Could not find referenced Issue."
    auth = {"errors": [{"message": "Authentication required, not authenticated",
            "extensions": {"code": "AUTHENTICATION_ERROR"}}]}  # fmt: skip
    with pytest.raises(UpstreamError) as caught:
        client(lambda r: reply(400, auth)).run("Teams", {"first": 1})
    assert caught.value.code == "LINEAR_AUTH"
    assert caught.value.message == (
        "Linear refused the API key of workspace AV: Authentication required, not authenticated"
    )


def test_the_key_never_appears_in_an_error_even_when_the_server_echoes_it() -> None:
    body = {"errors": [{"message": f"bad key {KEY}", "extensions": {"code": "X"}}]}
    with pytest.raises(UpstreamError) as caught:
        client(lambda r: reply(400, body)).run("Teams", {"first": 1})
    assert KEY not in repr(caught.value.to_dict())
    assert caught.value.message == "Linear: bad key [redacted]"
    assert KEY not in repr(Connection(label="AV", key=KEY))


RATELIMITED = {
    "errors": [{"message": "Rate limit exceeded", "extensions": {"code": "RATELIMITED"}}]
}


def test_ratelimited_with_http_400_is_retried_until_the_advertised_reset() -> None:
    answers = iter(
        [
            reply(
                400,
                RATELIMITED,
                {"X-RateLimit-Requests-Remaining": "0", "X-RateLimit-Requests-Reset": "1002500"},
            ),  # fmt: skip
            reply(200, TEAMS),
        ]
    )
    sleeps: list[float] = []
    c = client(lambda r: next(answers), sleeps=sleeps)
    assert c.run("Teams", {"first": 1}) == TEAMS["data"]
    assert sleeps == [2.5]  # reset (ms epoch) minus the clock (1,000 s)
    assert c.sent == ["Teams", "Teams"]


def test_rate_limit_is_recognised_by_headers_alone_and_backs_off_exponentially() -> None:
    sleeps: list[float] = []
    headers = {"X-RateLimit-Complexity-Remaining": "0"}
    c = client(lambda r: reply(400, {"errors": [{"message": "slow down"}]}, headers), sleeps=sleeps)
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert caught.value.code == "RATE_LIMITED"
    assert caught.value.message == "Linear rate limit reached for workspace AV"
    assert sleeps == [1.0, 2.0] and len(c.sent) == 3  # bounded: three attempts


def test_a_distant_reset_fails_fast_instead_of_sleeping() -> None:
    sleeps: list[float] = []
    headers = {"X-RateLimit-Requests-Remaining": "0", "X-RateLimit-Requests-Reset": "1600000"}
    c = client(lambda r: reply(400, RATELIMITED, headers), sleeps=sleeps)
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert sleeps == [] and len(c.sent) == 1
    assert caught.value.details == {"retry_after_seconds": 601}


def test_timeouts_are_retried_for_queries_but_never_for_mutations() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    sleeps: list[float] = []
    query = client(handler, sleeps=sleeps)
    with pytest.raises(UpstreamError) as caught:
        query.run("Teams", {"first": 1})
    assert caught.value.code == "LINEAR_UNREACHABLE" and len(query.sent) == 3
    mutation = client(handler)
    with pytest.raises(UpstreamError) as caught:
        mutation.run("IssueCreate", {"input": {"teamId": "t", "title": "x"}})
    assert len(mutation.sent) == 1
    assert caught.value.message == (
        "Linear at linear.test did not answer in time (one call may take 30 s: [linear] timeout); "
        "the change may or may not have been applied"
    )


def test_a_hanging_linear_holds_one_call_at_most_its_timeout_retries_included() -> None:
    now = [1_000.0]

    def hang(request: httpx.Request) -> httpx.Response:
        now[0] += request.extensions["timeout"]["read"]  # waited until httpx gave up
        raise httpx.ReadTimeout("slow", request=request)

    conn = Connection(label="AV", key=KEY)
    c = LinearClient(conn, "https://linear.test/graphql", transport=httpx.MockTransport(hang),
                     sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])  # fmt: skip
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert now[0] - 1_000.0 <= 30.0 and len(c.sent) == 1  # before: 3 x 30 s + 3 s of backoff
    assert "(one call may take 30 s: [linear] timeout)" in caught.value.message


def test_non_json_answers_and_server_errors_are_upstream_errors() -> None:
    c = client(lambda r: httpx.Response(502, content=b"<html>bad gateway</html>"))
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert caught.value.code == "LINEAR_UNAVAILABLE" and len(c.sent) == 3
    c = client(lambda r: httpx.Response(200, content=b"not json"))
    with pytest.raises(UpstreamError) as caught:
        c.run("Teams", {"first": 1})
    assert caught.value.code == "LINEAR_BAD_RESPONSE"


def test_api_url_precedence_and_untrusted_workspace_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = Connection(label="AV", key=KEY)
    proxied = Connection(label="AV", key=KEY, api_url="https://proxy.example/graphql")
    assert api_url(plain, {}) == DEFAULT_URL
    assert api_url(plain, {"api_url": "http://127.0.0.1:9/graphql"}) == "http://127.0.0.1:9/graphql"
    assert api_url(proxied, {"api_url": "http://127.0.0.1:9/graphql"}) == (
        "https://proxy.example/graphql"
    )
    with pytest.raises(ValidationError) as caught:
        api_url(plain, {"api_url": "https://evil.example/graphql"})
    assert caught.value.code == "UNTRUSTED_LINEAR_URL"
    monkeypatch.setenv("LINEAR_API_URL", "https://10.0.0.5:4000/graphql")
    assert api_url(proxied, {"api_url": "https://evil.example/graphql"}) == (
        "https://10.0.0.5:4000/graphql"
    )
    monkeypatch.setenv("LINEAR_API_URL", "ftp://x")
    with pytest.raises(ValidationError):
        api_url(plain, {})


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://[bad", "BAD_LINEAR_URL"),
        ("https://api.linear.app:99999/graphql", "BAD_LINEAR_URL"),
        ("https://api.linear.app:x/graphql", "BAD_LINEAR_URL"),
        ("api.linear.app/graphql", "BAD_LINEAR_URL"),
        ("http://api.linear.app/graphql", "INSECURE_LINEAR_URL"),
        ("http://10.0.0.5:4000/graphql", "INSECURE_LINEAR_URL"),
    ],
)
def test_a_malformed_or_clear_text_url_is_a_validation_error_wherever_it_comes_from(
    url: str, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = Connection(label="AV", key=KEY)
    for conn, section, env in (
        (plain, {}, url),
        (Connection(label="AV", key=KEY, api_url=url), {}, None),
        (plain, {"api_url": url}, None),
    ):
        if env:
            monkeypatch.setenv("LINEAR_API_URL", env)
        else:
            monkeypatch.delenv("LINEAR_API_URL", raising=False)
        with pytest.raises(ValidationError) as caught:
            api_url(conn, section)
        assert caught.value.code == code and caught.value.suggestion


@pytest.mark.parametrize(
    ("url", "trusted"),
    [
        ("https://api.linear.app/graphql", True),
        ("https://API.linear.app:443/graphql", True),
        ("http://127.0.0.1:8123/graphql", True),
        ("https://127.0.0.1:8123/graphql", True),
        ("http://localhost:9/graphql", True),
        ("http://[::1]:9/graphql", True),
        ("http://127.0.0.2:9/graphql", True),
        ("https://api.linear.app:8443/graphql", False),
        ("https://api.linear.app.evil.example/graphql", False),
        ("https://api.linear.app@evil.example/graphql", False),
        ("https://linear.app/graphql", False),
    ],
)
def test_a_committed_url_may_name_only_https_linear_or_loopback(url: str, trusted: bool) -> None:
    plain = Connection(label="AV", key=KEY)
    if trusted:
        assert api_url(plain, {"api_url": url}) == url
    else:
        with pytest.raises(ValidationError) as caught:
            api_url(plain, {"api_url": url})
        assert caught.value.code == "UNTRUSTED_LINEAR_URL"
    # the user's own settings may name any https proxy
    if url.startswith("https"):
        assert api_url(Connection(label="AV", key=KEY, api_url=url), {}) == url


@pytest.mark.parametrize(
    "errors",
    ["boom", {"message": "boom"}, 5, ["boom"], [None], [{"message": "boom", "extensions": "x"}],
     [{"message": "boom", "extensions": ["RATELIMITED"]}], [{"extensions": None}]],
)  # fmt: skip
def test_a_malformed_errors_field_is_a_linear_error_not_a_crash(errors: Any) -> None:
    for status in (200, 400):
        with pytest.raises(UpstreamError) as caught:
            client(lambda r, s=status: reply(s, {"data": None, "errors": errors})).run("Teams")
        assert caught.value.code == "LINEAR_ERROR" and caught.value.message.startswith("Linear: ")


def test_a_mutation_with_success_beside_errors_returns_its_data_a_query_does_not() -> None:
    body = {"data": {"issueCreate": {"success": True, "issue": {"id": "i"}}},
            "errors": [{"message": "Internal", "extensions": {"code": "INTERNAL"}}]}  # fmt: skip
    c = client(lambda r: reply(200, body))
    assert c.run("IssueCreate", {"input": {}}) == body["data"] and c.beside == ["Internal"]
    with pytest.raises(UpstreamError):
        c.run("Teams")
    refused = {"data": {"issueCreate": None}, "errors": body["errors"]}
    with pytest.raises(UpstreamError):
        client(lambda r: reply(200, refused)).run("IssueCreate", {"input": {}})
