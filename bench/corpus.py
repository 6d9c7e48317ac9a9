"""Deterministic synthetic memories: realistic project knowledge, made from a seeded RNG.

`memories(n, seed)` returns ``n`` complete records (the shape `nxm export` writes) about an
imaginary codebase: conventions, decisions with reasons, gotchas, owners, runbooks. Text varies
over services, people, file paths, identifiers and numbers, so keyword and semantic search have
something real to rank. Nothing is downloaded; the same ``n`` and ``seed`` give the same bytes.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from nxm.record import event, key_for, new_record
from nxs.render import line, timestamp

SERVICES = (
    "billing-api", "ledger", "auth-gateway", "search-indexer", "notifications", "checkout",
    "inventory-sync", "reporting", "webhooks", "media-pipeline", "pricing-engine", "scheduler",
    "audit-log", "feature-flags", "tenant-admin", "export-worker", "rate-limiter", "mobile-bff",
)  # fmt: skip
PEOPLE = (
    "alice", "bob", "carol", "dmitri", "esther", "farid", "grace", "hiro", "ines", "jonas",
    "kemi", "lena", "marco", "nadia", "omar", "priya", "quentin", "rosa", "sven", "tariq",
)  # fmt: skip
TEAMS = ("payments", "platform", "growth", "data", "mobile", "infra", "trust-and-safety")
DIRS = ("src", "services", "lib", "internal", "pkg", "app", "tools", "migrations", "infra")
FILES = (
    "client.py", "handlers.go", "schema.sql", "retry.ts", "config.yaml", "worker.py",
    "router.ts", "models.py", "Dockerfile", "settings.toml", "queue.rs", "cache.py",
)  # fmt: skip
STORES = ("Postgres", "Redis", "S3", "Kafka", "BigQuery", "DynamoDB", "Elasticsearch", "SQS")
ENVS = ("staging", "production", "the canary fleet", "local dev", "the eu-west-1 cluster")
PREFIXES = ("ENG", "PAY", "PLAT", "OPS", "SEC", "DATA", "MOB")

CONVENTIONS = (
    "every public handler in {svc} validates input with the shared schema in {path}",
    "migrations for {svc} are forward-only; a rollback is a new migration, never a down step",
    "log lines in {svc} are structured JSON with request_id and tenant_id on every line",
    "feature branches are named {prefix}-<ticket>-<slug> and squash-merged into main",
    "timeouts in {svc} come from {path}, never hard-coded; the default is {n}ms",
    "money amounts in {svc} are integer minor units (cents), never floats",
    "tests that touch {store} use the fixture in {path} instead of a real instance",
    "public API changes to {svc} need a changelog entry and a version bump in {path}",
    "{svc} reads secrets from the vault sidecar; nothing secret goes in {path}",
    "background jobs in {svc} must be idempotent: they can run twice after a deploy",
)  # fmt: skip
DECISIONS = (
    "we moved {svc} from polling to {store} change streams",
    "we chose {store} over {store2} for {svc}'s job queue",
    "we split {svc} out of the monolith into its own deployable",
    "we pinned the {svc} client library to the {n}.x line",
    "we dropped the nightly full re-index of {svc} in favour of incremental updates",
    "we cache {svc} responses for {n} seconds at the edge",
    "we replaced hand-written SQL in {path} with the query builder",
    "we turned off automatic retries for {svc} writes",
)  # fmt: skip
REASONS = (
    "p99 latency had crept above {n}ms under end-of-month load",
    "the old approach double-charged a handful of customers during {ticket}",
    "on-call was paged every night by flapping health checks",
    "the vendor deprecated the API we depended on",
    "it cut the {store} bill by roughly {pct}%",
    "two teams kept editing the same module and blocking each other's releases",
    "a replay after an outage duplicated rows in {store}",
    "the previous design could not meet the audit requirements from {ticket}",
)  # fmt: skip
GOTCHAS = (
    "{path} silently swallows {store} connection errors and returns an empty list",
    "the {svc} test suite fails on a machine whose timezone is not UTC",
    "restarting {svc} in {env} drops in-flight webhooks unless you drain it first",
    "{svc} caches tenant settings for {n} minutes, so config changes look like they did nothing",
    "the {store} client in {path} is not thread-safe; create one per worker",
    "bulk imports into {svc} above {n} rows time out behind the load balancer",
    "daylight-saving transitions make the {svc} scheduler run some jobs twice",
    "{path} is generated; edits are overwritten by `make codegen`",
)  # fmt: skip
FIXES = (
    "check the logs for request_id before assuming the data is missing",
    "set TZ=UTC in the test runner",
    "run the drain script in tools/drain.sh first",
    "call the cache-bust endpoint after a config change",
    "batch the import in chunks of {n}",
    "see {ticket} for the full incident write-up",
    "the fix is tracked in {ticket}",
)  # fmt: skip
OWNERS = (
    "{person} ({team}) owns {svc}; page them for anything touching {path}",
    "{person} is the reviewer of record for {svc} schema changes",
    "the {team} team owns {svc}; {person} is the current on-call lead",
    "questions about {store} capacity go to {person} on the {team} team",
)  # fmt: skip
RUNBOOKS = (
    "to rotate the {svc} signing key: generate it with tools/keys.py, upload it, wait {n} minutes, then revoke the old one",
    "to replay failed {svc} events: export the dead-letter queue from {store} and run the replayer against {env}",
    "to reindex {svc}: pause writers, run the backfill job, compare counts, resume writers",
)  # fmt: skip
CATEGORIES = {
    "conventions": CONVENTIONS,
    "decisions": DECISIONS,
    "gotchas": GOTCHAS,
    "owners": OWNERS,
    "runbooks": RUNBOOKS,
}
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _fill(rng: random.Random, template: str) -> str:
    d = rng.choice(DIRS)
    values = {
        "svc": rng.choice(SERVICES),
        "path": f"{d}/{rng.choice(SERVICES).replace('-', '_')}/{rng.choice(FILES)}",
        "store": rng.choice(STORES),
        "store2": rng.choice(STORES),
        "env": rng.choice(ENVS),
        "person": rng.choice(PEOPLE),
        "team": rng.choice(TEAMS),
        "prefix": rng.choice(PREFIXES),
        "ticket": f"{rng.choice(PREFIXES)}-{rng.randint(100, 9999)}",
        "n": rng.choice((2, 5, 15, 30, 90, 200, 500, 1500, 5000)),
        "pct": rng.randint(10, 70),
    }
    return template.format(**values)


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def memory(rng: random.Random, i: int) -> dict[str, Any]:
    """One synthetic memory (the i-th: its ticket number makes the body unique)."""
    category = rng.choice(tuple(CATEGORIES))
    head = _fill(rng, rng.choice(CATEGORIES[category]))
    ticket = f"{rng.choice(PREFIXES)}-{10000 + i}"
    if category == "decisions":
        body = [f"{_sentence(head)} Why: {_fill(rng, rng.choice(REASONS))}."]
        body.append(f"Decided by {rng.choice(PEOPLE)} in {ticket}.")
    elif category == "gotchas":
        body = [_sentence(head), _sentence(_fill(rng, rng.choice(FIXES)))]
        body.append(f"First hit in {ticket}.")
    else:
        body = [_sentence(head)]
        body.append(f"Agreed in {ticket}.")
    for _ in range(rng.choice((0, 1, 1, 2))):  # related context, as real memories carry
        body.append(_sentence(_fill(rng, rng.choice(GOTCHAS + CONVENTIONS + REASONS))))
    text = " ".join(body)
    intro = head if len(head) <= 200 else head[:197] + "..."
    created = timestamp(EPOCH + timedelta(minutes=37 * i + rng.randint(0, 30)))
    actor = rng.choice(PEOPLE)
    record = new_record(
        key=key_for(text),
        introduction=intro[0].upper() + intro[1:],
        body=text,
        category=category,
        priority=rng.choices(("HIGH", "MEDIUM", "LOW"), weights=(2, 6, 2))[0],
        refs=[ticket] if rng.random() < 0.3 else [],
        actor=actor,
        created=created,
        updated=created,
        agent_id=rng.choice(("claude-code", "cursor", None)),
    )
    record["events"] = [event("CREATED", created, actor)]
    return record


def memories(n: int, seed: int = 2) -> list[dict[str, Any]]:
    """``n`` synthetic memories with distinct bodies (and so distinct keys)."""
    rng = random.Random(seed)
    return [memory(rng, i) for i in range(n)]


def jsonl(n: int, seed: int = 2) -> bytes:
    """``n`` synthetic memories as an `nxm import` file (key order, like an export)."""
    records = sorted(memories(n, seed), key=lambda r: r["key"])
    return b"".join(line(r) for r in records)


QUERIES = (
    "how do we roll back a database migration",
    "who should I ask about queue capacity",
    "why did we stop retrying writes automatically",
    "tests fail because of the timezone",
    "where do request timeouts come from",
    "rotate the signing key",
)  # fmt: skip


def add_argv(nxm: list[str], root: Any, i: int, tag: str) -> list[str]:
    """A cold `nxm add` of the ``i``-th note of a bench (``tag`` keeps benches' bodies apart),
    distinct from every corpus memory."""
    body = (
        f"{tag} note {i + 100}: the export worker retries S3 uploads {i + 3} times with "
        f"jittered backoff; see tools/export_{i + 100}.py before changing it."
    )
    intro = f"Export worker retries S3 uploads {i + 3} times ({tag} {i + 100})"
    return [*nxm, "add", body, "--introduction", intro, "--json", "--workspace", str(root)]
