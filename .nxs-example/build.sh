#!/usr/bin/env bash
# Rebuild the example workspace with the real commands, at fixed times and actors.
#   bash .nxs-example/build.sh      (from anywhere; needs `pip install -e .`, ideally `nxm model setup`)
# It recreates .nxs-example/.nxs/ (one Markdown file and one event log per memory) and
# NEXUS_MEMORY.md, then exports memories.jsonl. Fixed times and actors: the same bytes every time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$here/.nxs" "$here/NEXUS_MEMORY.md" "$here/memories.jsonl" "$here/.gitattributes"
nxm init "$here" >/dev/null
export NXS_WORKSPACE="$here"

# add NOW ACTOR BODY INTRODUCTION [more nxm add options]: prints the new key
add() {
  local now="$1" actor="$2" body="$3" intro="$4"
  shift 4
  nxm add "$body" --introduction "$intro" --now "$now" --actor "$actor" "$@" --json |
    python -c 'import json, sys; print(json.load(sys.stdin)["memory"]["key"])'
}

add 2026-03-02T09:10:00Z priya \
  "Every amount is an integer number of minor units (cents) in a Money value (src/larkspur/money.py) that carries its ISO 4217 currency. Never use float or Decimal for money in application code; the API serialises amounts as strings of minor units (\"1999\"), so JavaScript clients cannot round them. Conversions happen only in Money.convert(), which records the rate used." \
  "Money is integer minor units in Money (src/larkspur/money.py), never float" \
  --category conventions --priority HIGH >/dev/null

add 2026-03-02T09:40:00Z priya \
  "Invoice numbers come from a per-tenant counter row locked with a Postgres advisory lock (ledger/numbering.py), not from a sequence. Why: sequences leave gaps on rollback, and German and French invoicing rules require gapless numbering per issuer. The lock is held for one statement, so the cost is a few milliseconds per invoice; do not 'optimise' it back to a sequence." \
  "Invoice numbers use an advisory-locked counter, not a sequence: the law wants no gaps" \
  --category decisions --priority HIGH >/dev/null

add 2026-03-04T14:05:00Z marco \
  "Schema migrations are Alembic revisions under migrations/versions/, forward-only: a fix is a new revision, never a downgrade. Name them YYYYMMDD_<ticket>_<slug>.py. A migration that rewrites a large table must be split into add-column, backfill job, and constraint steps so deploys never hold a long lock." \
  "Migrations are forward-only Alembic revisions; big rewrites go in three steps" \
  --category conventions >/dev/null

add 2026-03-05T11:20:00Z marco \
  "Branches are named LSP-<ticket>-<short-slug> and pull requests are squash-merged into main; the squash message starts with the ticket id. Release tags (vYYYY.MM.DD.N) are cut from main only, by the release workflow." \
  "Branches are LSP-<ticket>-slug, squash-merged; tags come from main only" \
  --category conventions --priority LOW >/dev/null

webhooks=$(add 2026-03-09T16:45:00Z dmitri \
  "Outgoing webhooks are retried from the webhook_attempts table by the webhooks worker, with exponential backoff (1 min doubling, capped at 6 h) for up to 24 hours, then marked failed and shown in the tenant's dashboard. We moved off Celery retries after incident LSP-412, where a Redis failover silently dropped queued retries." \
  "Webhook retries live in the webhook_attempts table, not Celery (incident LSP-412)" \
  --category decisions --agent-id claude-code)

add 2026-03-11T10:00:00Z esther \
  "Run the test suite with TZ=UTC (the Makefile sets it). Due-date tests in billing_cron/ use freezegun at 23:30 UTC on purpose; on a machine in another timezone they fail by one day, which looks like a real bug but is not." \
  "Tests need TZ=UTC: due-date tests fail by a day in other timezones" \
  --category gotchas --priority HIGH >/dev/null

add 2026-03-16T13:30:00Z dmitri \
  "Stripe delivers webhook events out of order, and the sandbox does so more often than production. Handlers in src/larkspur/stripe/ must compare event.created with the stored object's last_event_at and ignore older events instead of assuming arrival order." \
  "Stripe webhook events arrive out of order: compare event.created, ignore older ones" \
  --category gotchas >/dev/null

add 2026-03-20T09:00:00Z priya \
  "Priya Raman owns the ledger (src/larkspur/ledger/) and invoice numbering; any change there needs her review, and she is the contact for auditors' questions. Dmitri Volkov owns the webhooks worker and the Stripe integration." \
  "Priya owns the ledger and invoice numbering; Dmitri owns webhooks and Stripe" \
  --category owners --priority HIGH >/dev/null

add 2026-03-23T15:15:00Z marco \
  "The platform team (Marco Ferri, on call via #larkspur-ops) owns deploys. There is no deploy to production on Fridays after 14:00 UTC, and none during the first three days of a month, when invoice runs are at their peak." \
  "No production deploys on Friday afternoons or during the month's first three days" \
  --category processes >/dev/null

add 2026-04-02T10:30:00Z dmitri \
  "To replay failed webhooks for one tenant: make replay-webhooks TENANT=<id> SINCE=<ISO time>. It re-queues rows of webhook_attempts with status failed, keeps their original event ids (receivers deduplicate on them), and prints how many were queued. Run it from a bastion, never from a laptop." \
  "Replay failed webhooks with make replay-webhooks TENANT=.. SINCE=.." \
  --category processes --priority LOW >/dev/null

add 2026-04-14T11:05:00Z claude-code \
  "The PDF renderer (WeasyPrint, src/larkspur/pdf/render.py) leaks memory on invoices with more than about 500 line items. Until LSP-587 is fixed, the pdf worker runs with max_tasks_per_child=200 so each process is recycled; do not raise it, and do not move large invoices to the web process." \
  "PDF renderer leaks memory on 500+ line invoices; keep max_tasks_per_child=200 until LSP-587" \
  --category gotchas --scope item --ref LSP-587 --ref src/larkspur/pdf/render.py \
  --agent-id claude-code --session-id s-0414-pdf >/dev/null

staging=$(add 2026-04-20T08:50:00Z esther \
  "The staging database is shared with the QA team's manual test runs: never truncate tables or run destructive migrations on it without asking in #larkspur-qa first." \
  "Staging's database is shared with QA: never truncate it" \
  --category gotchas)

# Later: a decision gets corrected, and one gotcha stops applying.
nxm update "$webhooks" --now 2026-05-06T09:30:00Z --actor dmitri \
  --introduction "Webhook retries live in the webhook_attempts table, not Celery (incident LSP-412)" \
  --body "Outgoing webhooks are retried from the webhook_attempts table by the webhooks worker, with exponential backoff (1 min doubling, capped at 6 h) for up to 72 hours (raised from 24 h in LSP-655 after a customer's weekend outage), then marked failed and shown in the tenant's dashboard. We moved off Celery retries after incident LSP-412, where a Redis failover silently dropped queued retries." \
  >/dev/null
nxm close "$staging" --now 2026-05-12T17:00:00Z --actor esther >/dev/null  # LSP-640: per-branch staging DBs

nxm export -o "$here/memories.jsonl"
nxm list --status all
rm -rf "$here/.nxs/index"  # this machine's index: git ignores it, the first read makes it again
