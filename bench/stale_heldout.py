"""Held-out check of `nxm stale`: a TypeScript/Go monorepo whose code moves under its memories.

    python -m bench.stale_heldout            # seed 1, a human summary
    python -m bench.stale_heldout --seed 2   # the second documented seed
    python -m bench.stale_heldout --json     # one JSON object instead

Written blind: without reading how the product detects stale memories, so that it measures
generalization. It builds, in a fresh temporary git repository, a Node monorepo (packages/*/src
with `export function` and `export const`, a root package.json with scripts, a Makefile, two
Dockerfiles, GitHub Actions workflows with jobs, a Go tool under cmd/, docs/*.md, deploy/ and
scripts/ folders), runs `nxm init` once and records about 150 memories with `nxm add --ref`
exactly as a team would (after the code they describe, committed with it, right after it, or a
few commits later), then makes about 80 commits of team activity. Each memory has one fate,
and the ground truth is decided by what its text says:

- invalidated: a value inside the named function or constant changed, the symbol renamed,
  deleted or moved to another file, the file renamed (git mv) or deleted, a folder renamed or
  deleted, a package.json script, a Makefile recipe or a workflow job's command changed, a
  Docker base image bumped;
- still true: prettier-style reformatting, JSDoc and comment edits, a local variable renamed, a
  sibling added or edited, imports reordered, an unrelated dependency bumped, a job or make
  target added elsewhere, a doc or folder gaining content, a memory written after a change in
  the same commit as it, or nothing touched at all;
- indirect (reported apart, not in the main figures): the function reads a constant defined at
  the top of its file and that constant changed, so the fact is false while none of the
  symbol's own lines moved.

Refs look like `packages/payments/src/fees.ts:computeCardFee`, `packages/queue/src/config.ts`,
`deploy/`, `package.json:lint` (a script), `Makefile:ship`, `.github/workflows/ci.yml:lint` (a
job), `Dockerfile`. At the end it runs `nxm stale --json` and reports caught (invalidated and
flagged / invalidated), false flags (flagged / still true), indirect caught, and every miss and
false flag with its edit kind. Without the verb it prints the ground truth and exits 0.

Seeds 1 and 2 are the documented ones (same edit-kind counts, different code, values, targets
and history). The product runs as `PYTHONPATH=<this checkout> python -m nxm` (through
`nxm.cli.main`), so the checkout that holds this file is the one measured. Under a minute a seed
here (each `nxm add` is its own process); `--keep DIR` leaves the repository for inspection.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NXM = "import sys; from nxm.cli import main; sys.argv[0] = 'nxm'; sys.exit(main())"


def flagged_keys(answer: Any) -> set[str]:
    """The memory keys `nxm stale --json` flags (adapt here if the answer's shape differs)."""
    items = answer if isinstance(answer, list) else None
    for name in ("memories", "results", "stale"):
        if items is None and isinstance(answer, dict) and isinstance(answer.get(name), list):
            items = answer[name]
    return {item["key"] if isinstance(item, dict) else str(item) for item in items or []}


# ---------------------------------------------------------------- what the code is made of
@dataclass
class Arch:
    """A family of functions: `@L` is the local holding the value, `@Q` the quote."""

    role: str
    files: tuple[str, str]  # the file it lives in, and the name a rename gives it
    name: str  # {N}: a noun
    params: list[str]
    ret: str
    is_async: bool
    locals: list[str]
    const: str  # the top-of-file constant when the value is hoisted
    values: list[Any]
    rest: list[str]
    fact: str
    human: Any = str
    lang: str = "ts"


def _pct(v: float) -> str:
    return f"{v * 100:g}%"


SECS = {3600: "1 hour", 900: "15 minutes", 86400: "24 hours", 1800: "30 minutes", 600: "10 minutes"}

TS_ARCHS = [
    Arch("fee", ("fees.ts", "pricing.ts"), "compute{N}Fee", ["amountCents: number"], ": number", False,
         ["pct", "rate", "feeRate"], "FEE_RATE", [0.029, 0.025, 0.034, 0.019, 0.015],
         ["return Math.round(amountCents * @L) + 30;"],
         "`{name}` in {path} charges {h} of the amount plus a fixed 30 cents.", _pct),
    Arch("backoff", ("retry.ts", "backoff.ts"), "next{N}Delay", ["attempt: number"], ": number", False,
         ["base", "baseMs", "initial"], "BASE_DELAY_MS", [500, 250, 1000, 750, 200],
         ["return Math.min(@L * 2 ** attempt, 60_000);"],
         "The retry backoff in {path} (`{name}`) starts at {h} ms and doubles per attempt, capped at 60 s."),
    Arch("timeout", ("http.ts", "client.ts"), "fetch{N}", ["url: string", "init: RequestInit = {}"],
         ": Promise<Response>", True, ["timeoutMs", "limitMs", "deadline"], "TIMEOUT_MS",
         [8000, 5000, 10000, 15000, 3000],
         ["const ctrl = new AbortController();", "setTimeout(() => ctrl.abort(), @L);",
          "return fetch(url, { ...init, signal: ctrl.signal });"],
         "`{name}` ({path}) aborts the outbound HTTP call after {h} seconds.", lambda v: f"{v / 1000:g}"),
    Arch("page", ("pagination.ts", "paging.ts"), "list{N}Page", ["cursor?: string"], "", True,
         ["limit", "pageSize", "take"], "PAGE_SIZE", [50, 100, 25, 200, 20],
         ["return db.query({ cursor, limit: @L });"],
         "`{name}` in {path} pages results {h} rows at a time."),
    Arch("ttl", ("tokens.ts", "jwt.ts"), "issue{N}Token", ["userId: string"], ": string", False,
         ["ttlSeconds", "expiresIn", "lifetime"], "TOKEN_TTL_S", [3600, 900, 86400, 1800, 600],
         ["return sign({ sub: userId }, secret(), { expiresIn: @L });"],
         "Tokens from `{name}` ({path}) expire after {h}.", SECS.get),
    Arch("cachekey", ("cache.ts", "keys.ts"), "{N}CacheKey", ["id: string"], ": string", False,
         ["prefix", "ns", "keyPrefix"], "KEY_PREFIX", ["user:", "usr:", "u:v2:", "acct:", "v3:"],
         ["return @L + id;"],
         "Cache keys from `{name}` ({path}) are the id prefixed with `{h}`."),
    Arch("currency", ("money.ts", "format.ts"), "format{N}Amount", ["amountCents: number"], ": string",
         False, ["currency", "code", "cur"], "DEFAULT_CURRENCY", ["USD", "EUR", "GBP", "CAD"],
         ["return new Intl.NumberFormat(@Qen-US@Q, { style: @Qcurrency@Q, currency: @L }).format(amountCents / 100);"],
         "`{name}` in {path} formats amounts as {h}."),
    Arch("queue", ("publish.ts", "producer.ts"), "publish{N}", ["payload: Job"], ": Promise<void>", True,
         ["topic", "queueName", "channel"], "QUEUE_NAME", ["emails", "emails-v2", "notify", "mailer", "jobs-default"],
         ["await queue.publish(@L, payload);"],
         "`{name}` ({path}) publishes to the `{h}` queue."),
    Arch("slug", ("validate.ts", "slugs.ts"), "isValid{N}Slug", ["s: string"], ": boolean", False,
         ["min", "minLen", "shortest"], "SLUG_MIN", [3, 2, 4, 5],
         ["return s.length >= @L && s.length <= 40 && /^[a-z0-9-]+$/.test(s);"],
         "`{name}` in {path} accepts lowercase slugs of {h} to 40 characters."),
    Arch("batch", ("batch.ts", "writer.ts"), "flush{N}Batch", ["items: Item[]"], ": Promise<void>", True,
         ["size", "batchSize", "chunk"], "BATCH_SIZE", [100, 500, 250, 1000],
         ["for (let i = 0; i < items.length; i += @L) {", "  await sink.write(items.slice(i, i + @L));", "}"],
         "`{name}` ({path}) writes in batches of {h}."),
    Arch("password", ("password.ts", "credentials.ts"), "check{N}Password", ["pw: string"], ": boolean", False,
         ["minLength", "min", "floor"], "PASSWORD_MIN", [12, 10, 8, 14],
         ["return pw.length >= @L && /\\d/.test(pw);"],
         "`{name}` in {path} requires at least {h} characters including a digit."),
    Arch("ratelimit", ("ratelimit.ts", "throttle.ts"), "limit{N}Requests", ["key: string"], ": Promise<boolean>",
         True, ["points", "perMinute", "budget"], "RATE_PER_MIN", [100, 60, 120, 300],
         ["return limiter.consume(key, { points: @L, duration: 60 });"],
         "`{name}` ({path}) allows {h} requests per minute per key."),
    Arch("sort", ("sort.ts", "ordering.ts"), "sort{N}Rows", ["rows: Row[]"], ": Row[]", False,
         ["direction", "order", "dir"], "SORT_ORDER", ["desc", "asc"],
         ["return orderBy(rows, [@QcreatedAt@Q], [@L]);"],
         "`{name}` in {path} sorts rows by createdAt, {h}.", {"desc": "newest first", "asc": "oldest first"}.get),
    Arch("loglevel", ("logger.ts", "log.ts"), "make{N}Logger", ["env: string"], "", False,
         ["level", "prodLevel", "lvl"], "PROD_LOG_LEVEL", ["info", "warn", "error"],
         ["return pino({ level: env === @Qproduction@Q ? @L : @Qdebug@Q });"],
         "In production `{name}` ({path}) logs at `{h}` level."),
    Arch("webhook", ("webhooks.ts", "signature.ts"), "verify{N}Signature", ["payload: string", "header: string"],
         ": boolean", False, ["tolerance", "maxAgeSec", "skew"], "SIG_TOLERANCE_S", [300, 600, 120],
         ["const [t, sig] = header.split(@Q,@Q);", "if (Date.now() / 1000 - Number(t) > @L) return false;",
          "return timingSafeEqual(hmac(payload + t), sig);"],
         "`{name}` in {path} rejects webhook signatures older than {h} seconds."),
]  # fmt: skip

GO_ARCHS = [
    Arch("lock", ("", ""), "{N}LockTimeout", [], "time.Duration", False, ["secs", "wait", "timeout"],
         "LockSecs", [30, 60, 15, 120], ["return time.Duration(@L) * time.Second"],
         "`{name}` in {path} waits {h} seconds for the advisory lock.", lang="go"),
    Arch("workers", ("", ""), "{N}Workers", [], "int", False, ["perCPU", "factor", "mult"], "WorkersPerCPU",
         [2, 4, 1, 8], ["return runtime.NumCPU() * @L"],
         "`{name}` ({path}) starts {h} workers per CPU.", lang="go"),
    Arch("table", ("", ""), "{N}Table", [], "string", False, ["table", "name", "tbl"], "StateTable",
         ["schema_migrations", "_migrations", "migrations_log", "job_state"], ["return @L"],
         "`{name}` in {path} keeps its state in the `{h}` table.", lang="go"),
    Arch("env", ("", ""), "{N}DSN", [], "string", False, ["key", "envKey", "varName"], "DSNVar",
         ["DATABASE_URL", "PG_DSN", "POSTGRES_URL"], ["return os.Getenv(@L)"],
         "`{name}` ({path}) reads the connection string from ${h}.", lang="go"),
    Arch("chunk", ("", ""), "{N}ChunkSize", [], "int", False, ["n", "size", "rows"], "ChunkRows",
         [1000, 5000, 500, 2000], ["return @L"],
         "`{name}` in {path} processes {h} rows per chunk.", lang="go"),
    Arch("attempts", ("", ""), "{N}MaxAttempts", [], "int", False, ["attempts", "limit", "tries"], "MaxTries",
         [3, 5, 10], ["return @L"], "`{name}` ({path}) gives up after {h} attempts.", lang="go"),
]  # fmt: skip

# exported constants in packages/*/src/config.ts: name, values, fact
CONSTS = [
    ("MAX_RETRIES", [5, 3, 8, 10], "Jobs in {pkg} are retried at most {h} times (`{name}` in {path})."),
    ("DEFAULT_LOCALE", ["en-US", "en-GB", "de-DE"], "The default locale of {pkg} is {h} (`{name}`, {path})."),
    ("SESSION_COOKIE", ["sid", "__Host-sid", "acme_session"], "The {pkg} session cookie is named `{h}` (`{name}` in {path})."),
    ("API_VERSION", ["2024-06-01", "2025-01-15", "2025-09-30"], "{pkg} pins upstream API version {h} (`{name}` in {path})."),
    ("MAX_UPLOAD_MB", [25, 50, 10, 100], "Uploads to {pkg} are capped at {h} MB (`{name}`, {path})."),
    ("SUPPORTED_CURRENCIES", [["usd", "eur"], ["usd", "eur", "gbp"], ["usd"]], "{pkg} supports {h} (`{name}` in {path})."),
    ("DEFAULT_TIMEZONE", ["UTC", "America/New_York", "Europe/Berlin"], "{pkg} stores and reports times in {h} (`{name}`, {path})."),
    ("IDEMPOTENCY_TTL_HOURS", [24, 48, 72], "Idempotency keys in {pkg} live {h} hours (`{name}` in {path})."),
    ("HEALTHCHECK_PATH", ["/healthz", "/health", "/_status"], "The {pkg} health check is served at {h} (`{name}`, {path})."),
    ("MAX_PAGE_SIZE", [100, 500, 1000], "{pkg} never returns more than {h} rows a page (`{name}` in {path})."),
    ("CACHE_TTL_SECONDS", [60, 300, 900], "{pkg} caches lookups for {h} seconds (`{name}`, {path})."),
    ("FEATURE_FLAG_PREFIX", ["ff_", "flag.", "feat:"], "Feature flags of {pkg} are namespaced `{h}` (`{name}` in {path})."),
]  # fmt: skip

NOUNS = ["Card", "Refund", "Payout", "Invoice", "Order", "Account", "Session", "Webhook", "Export",
         "Report", "Email", "Digest", "Sku", "Cart", "Profile", "Team", "Upload", "Audit", "Ledger",
         "Coupon", "Partner", "Tenant", "Device", "Message", "Quote", "Dispute", "Plan", "Seat"]  # fmt: skip
PACKAGES = [
    "payments",
    "billing",
    "queue",
    "auth",
    "notify",
    "search",
    "users",
    "catalog",
    "analytics",
]
GO_TOOLS = {"migrate": ["Migrate", "Schema"], "backfill": ["Backfill", "Orders", "Events"],
            "seed": ["Seed", "Fixtures"]}  # fmt: skip
IMPORTS = [("{ db }", "@acme/db"), ("{ logger }", "@acme/log"), ("type { Job, Item, Row }", "./types"),
           ("{ z }", "zod"), ("{ queue, sink }", "@acme/queue-client"), ("{ sign, secret }", "@acme/crypto"),
           ("{ orderBy }", "lodash-es"), ("{ limiter }", "./limiter"), ("pino", "pino"),
           ("{ hmac, timingSafeEqual }", "@acme/crypto/hmac")]  # fmt: skip
DOCS_NOTE = ["Keep in sync with the pricing page.", "Changed after INC-2291; ask #payments first.",
             "Called on every request: keep it allocation-free.", "See ADR 0002 for the background.",
             "Owned by the platform team."]  # fmt: skip
COMMENTS = ["keep in sync with the pricing page", "see INC-2291 before changing this",
            "TODO: read from config once billing v2 lands", "measured in the March load test",
            "product asked for this explicitly"]  # fmt: skip

SCRIPTS = {  # name: (commands, fact); the second command is what a change makes it
    "build": (["turbo run build", "turbo run build --filter=./packages/*"], "`npm run build` runs `{h}` from the root package.json."),
    "test": (["vitest run --coverage", "vitest run --reporter=dot"], "`npm test` runs `{h}` (root package.json)."),
    "lint": (["eslint . --max-warnings 0", "eslint . --max-warnings 25"], "`npm run lint` is `{h}`: the same gate CI applies."),
    "typecheck": (["tsc -b --noEmit", "tsc -b"], "`npm run typecheck` runs `{h}` over every package."),
    "format": (["prettier --write .", "biome format --write ."], "Formatting is `npm run format`, which runs `{h}`."),
    "dev": (["turbo run dev --parallel", "turbo run dev --concurrency 12"], "`npm run dev` starts every package with `{h}`."),
    "migrate": (["go run ./cmd/migrate up", "go run ./cmd/migrate up --steps 1"], "`npm run migrate` shells out to `{h}`."),
    "seed": (["go run ./cmd/seed --env dev", "go run ./cmd/seed --env staging"], "`npm run seed` runs `{h}` against the local database."),
    "e2e": (["playwright test --project chromium", "playwright test"], "`npm run e2e` runs `{h}`."),
    "release": (["changeset publish", "changeset version && changeset publish"], "Releases go out with `npm run release`, i.e. `{h}`."),
    "clean": (["rimraf dist .turbo", "rimraf dist .turbo node_modules/.cache"], "`npm run clean` removes build output with `{h}`."),
}  # fmt: skip
DEPS = {"zod": ["^3.22.4", "^3.23.8"], "pino": ["^8.17.2", "^9.1.0"], "undici": ["^6.6.2", "^6.19.2"],
        "lodash-es": ["^4.17.21", "^4.17.22"], "typescript": ["^5.4.5", "^5.5.4"],
        "vitest": ["^1.5.0", "^1.6.0"], "eslint": ["^8.57.0", "^8.57.1"], "prettier": ["^3.2.5", "^3.3.3"],
        "turbo": ["^1.13.3", "^2.0.6"]}  # fmt: skip

TARGETS = {  # Makefile: name: ([(recipe, h)...], fact)
    "build": ([(["docker build -t $(IMAGE):$(VERSION) ."], "tags it $(IMAGE):$(VERSION)"),
               (["docker buildx build --platform linux/amd64 -t $(IMAGE):$(VERSION) ."], "builds linux/amd64 only")],
              "`make build` builds the Docker image and {h}."),
    "ship": ([(["docker build -t ghcr.io/acme/platform:$(VERSION) .", "docker push ghcr.io/acme/platform:$(VERSION)"], "ghcr.io/acme/platform"),
              (["docker build -t 0123456789.dkr.ecr.eu-west-1.amazonaws.com/platform:$(VERSION) .",
                "docker push 0123456789.dkr.ecr.eu-west-1.amazonaws.com/platform:$(VERSION)"], "ECR in eu-west-1")],
             "`make ship` builds the image and pushes it to {h}."),
    "test": ([(["npm test", "go test ./cmd/..."], "both the vitest suites and the Go tests"),
              (["npm test"], "the vitest suites only")], "`make test` runs {h}."),
    "migrate": ([(["go run ./cmd/migrate up"], "applies every pending migration"),
                 (["go run ./cmd/migrate up --steps 1"], "applies one migration per run")], "`make migrate` {h}."),
    "deploy": ([(["kubectl apply -k deploy/overlays/prod"], "applies the prod overlay with kubectl"),
                (["argocd app sync platform-prod"], "syncs the ArgoCD app")], "`make deploy` {h}."),
    "lint": ([(["npm run lint", "go vet ./..."], "eslint and go vet"), (["npm run lint"], "eslint only")],
             "`make lint` runs {h}."),
    "seed": ([(["go run ./cmd/seed --env dev"], "dev"), (["go run ./cmd/seed --env staging"], "staging")],
             "`make seed` fills the {h} database with fixtures."),
    "loadtest": ([(["k6 run tools/loadtest/checkout.js --vus 50"], "50"),
                  (["k6 run tools/loadtest/checkout.js --vus 200"], "200")],
                 "`make loadtest` runs the k6 checkout scenario with {h} virtual users."),
}  # fmt: skip
SPARE_TARGETS = {"fmt": ["npm run format", "gofmt -w cmd"], "audit": ["npm audit --audit-level high"],
                 "docs": ["npx typedoc"], "tidy": ["go mod tidy"]}  # fmt: skip

JOBS = {  # workflow file: job: ([(command, h)...], step name, fact)
    "ci.yml": {
        "lint": ([("npx eslint . --max-warnings 0", "eslint with --max-warnings 0"),
                  ("npx eslint . --max-warnings 25", "eslint allowing 25 warnings")], "Lint",
                 "The CI lint job ({path}) runs {h}."),
        "test": ([("npx vitest run --coverage", "vitest with coverage"), ("npx vitest run --shard 1/2", "half of vitest, sharded")],
                 "Unit tests", "The CI test job ({path}) runs {h}."),
        "typecheck": ([("npx tsc -b --noEmit", "tsc -b --noEmit"), ("npx tsc -b", "tsc -b, emitting")], "Typecheck",
                      "The typecheck job in {path} runs {h}."),
        "build": ([("docker build -t platform:ci .", "a single-arch docker build"),
                   ("docker buildx build --platform linux/amd64,linux/arm64 -t platform:ci .", "a multi-arch buildx build")],
                  "Build image", "The CI build job ({path}) does {h}."),
        "go": ([("go test -race ./cmd/...", "with -race"), ("go test ./cmd/...", "without the race detector")],
               "Go tests", "The go job in {path} tests cmd/ {h}."),
        "e2e": ([("npx playwright test --project chromium", "Chromium only"), ("npx playwright test", "every browser")],
                "End-to-end", "The e2e job ({path}) runs Playwright in {h}."),
    },
    "release.yml": {
        "publish": ([("npx changeset publish", "changeset publish"), ("npm publish --workspaces", "npm publish --workspaces")],
                    "Publish", "The publish job of {path} runs {h}."),
        "image": ([("make ship", "make ship"), ("docker buildx bake --push", "docker buildx bake --push")],
                  "Push image", "The image job in {path} pushes the image with {h}."),
        "deploy": ([("make deploy", "make deploy"), ("helm upgrade platform ./chart", "helm upgrade")],
                   "Deploy", "The release deploy job ({path}) runs {h}."),
    },
}  # fmt: skip
SPARE_JOBS = {"audit": "npm audit --audit-level high", "license": "npx license-checker --production",
              "docs": "npx typedoc"}  # fmt: skip

DOCKER = {  # path: [(line template key, [variants], fact)]
    "Dockerfile": ("node", ["node:20-alpine", "node:22-alpine"], "The Dockerfile builds and runs on {h}."),
    "docker/worker.Dockerfile": ("golang", ["golang:1.22", "golang:1.23"], "The worker image ({path}) compiles with {h} and runs on distroless."),
    "docker/db.Dockerfile": ("postgres", ["postgres:16-alpine", "postgres:17-alpine"], "Local development runs the {h} database image ({path}) with pg_partman."),
}  # fmt: skip

DOCS = {  # path: (title, fact, renamed to)
    "docs/oncall.md": ("On-call runbook", "{path} is the on-call runbook: paging, escalation and rollback steps.", "docs/runbooks/oncall.md"),
    "docs/architecture.md": ("Architecture", "{path} has the package map and the request flow diagram.", "docs/design/overview.md"),
    "docs/releasing.md": ("Releasing", "{path} explains how to cut a release with changesets.", "docs/release-process.md"),
    "docs/local-dev.md": ("Local development", "{path} is the local setup guide (docker compose, seed data).", "docs/getting-started.md"),
    "docs/payments.md": ("Payments", "{path} documents the fee model and the Stripe webhooks.", "docs/billing/payments.md"),
    "docs/api-versioning.md": ("API versioning", "{path} is the policy for dated API versions.", "docs/api/versioning.md"),
    "docs/observability.md": ("Observability", "{path} lists the dashboards and alert rules.", "docs/ops/observability.md"),
    "docs/security.md": ("Security", "{path} covers secret rotation and the pentest schedule.", "SECURITY.md"),
}  # fmt: skip
FOLDERS = {  # folder: (files, fact, renamed to)
    "deploy/": (["base/deployment.yaml", "base/kustomization.yaml", "overlays/prod/kustomization.yaml"],
                "{path} holds the kustomize manifests; the prod overlay is overlays/prod.", "infra/k8s/"),
    "scripts/": (["bootstrap.sh", "release.sh"], "{path} holds the shell helpers (bootstrap.sh, release.sh).", "bin/"),
    "tools/loadtest/": (["checkout.js", "search.js"], "{path} holds the k6 load-test scenarios.", "perf/k6/"),
    "packages/legacy-api/": (["src/index.ts", "src/routes.ts", "package.json"],
                             "{path} is frozen: no new endpoints until it is retired.", "archive/legacy-api/"),
    "docs/adr/": (["0001-monorepo.md", "0002-queue.md", "0003-go-tools.md"],
                  "Architecture decisions are recorded in {path}, one numbered file each.", "docs/decisions/"),
}  # fmt: skip

# kind, count, class, target types it applies to (file and folder fates first: they reserve)
FATES = [
    ("rename-file", 5, "inv", {"tsfile", "doc"}),
    ("delete-file", 3, "inv", {"tsfile", "doc"}),
    ("rename-folder", 2, "inv", {"folder"}),
    ("delete-folder", 1, "inv", {"folder"}),
    ("value", 14, "inv", {"fn"}),
    ("const-value", 8, "inv", {"const"}),
    ("rename-symbol", 6, "inv", {"fn", "const"}),
    ("delete-symbol", 4, "inv", {"fn", "const"}),
    ("move-symbol", 4, "inv", {"tsfn"}),
    ("script-change", 5, "inv", {"script"}),
    ("make-recipe", 4, "inv", {"make"}),
    ("job-command", 4, "inv", {"job"}),
    ("docker-base", 2, "inv", {"docker"}),
    ("indirect-const", 10, "indirect", {"hoisted"}),
    ("reformat", 8, "ok", {"tsfn", "strconst"}),
    ("jsdoc", 5, "ok", {"fn", "const"}),
    ("inner-comment", 4, "ok", {"fn"}),
    ("local-rename", 7, "ok", {"fn"}),
    ("add-sibling", 6, "ok", {"fn", "const", "tsfile"}),
    ("sibling-edit", 6, "ok", {"fn"}),
    ("reorder-imports", 4, "ok", {"tsfn", "tsfile"}),
    ("dep-bump", 3, "ok", {"script"}),
    ("add-job", 3, "ok", {"job"}),
    ("job-cosmetic", 2, "ok", {"job"}),
    ("add-target", 2, "ok", {"make"}),
    ("make-comment", 2, "ok", {"make"}),
    ("docker-cosmetic", 1, "ok", {"docker"}),
    ("doc-edit", 3, "ok", {"doc"}),
    ("folder-content", 2, "ok", {"folder"}),
    ("written-after", 5, "ok", {"free-fn"}),
    ("untouched", 12, "ok", {"fn", "const", "tsfile", "doc", "script", "folder"}),
]


# ---------------------------------------------------------------- the repository model
def lit(value: Any, quote: str, lang: str = "ts") -> str:
    """A literal as the code spells it."""
    q = '"' if lang == "go" else quote
    if isinstance(value, list):
        return "[" + ", ".join(f"{q}{v}{q}" for v in value) + "]"
    return (
        f"{q}{value}{q}"
        if isinstance(value, str)
        else f"{value:g}"
        if isinstance(value, float)
        else str(value)
    )


def lower1(s: str) -> str:
    return s[0].lower() + s[1:]


@dataclass(eq=False)
class Target:
    """Anything a memory can be about; `events` are (seq, edit kind, class) in time order."""

    tags: set[str] = field(default_factory=set)
    events: list[tuple[int, str, str]] = field(default_factory=list)
    fate: str | None = None
    reserved: bool = False  # taken by another memory's fate (a sibling to edit, a file to rename)

    def hit(self, seq: int, kind: str, cls: str) -> None:
        self.events.append((seq, kind, cls))


@dataclass(eq=False)
class Fn(Target):
    arch: Arch = None  # type: ignore[assignment]
    noun: str = ""
    name: str = ""
    value: Any = None
    local: str = ""
    hoisted: str | None = None
    quote: str = "'"
    wrap: bool = False
    doc: str | None = None
    comment: str | None = None
    file: Any = None

    def ref(self) -> str:
        return f"{self.file.path}:{self.name}"

    def fact(self) -> str:
        return self.arch.fact.format(
            name=self.name, path=self.file.path, h=self.arch.human(self.value)
        )

    def render(self) -> list[str]:
        go = self.arch.lang == "go"
        ind = "\t" if go else "  "
        out = []
        if self.doc:
            out.append(f"// {self.name} {lower1(self.doc)}" if go else f"/** {self.doc} */")
        if go:
            out.append(f"func {self.name}() {self.arch.ret} {{")
        else:
            head = f"export {'async ' if self.arch.is_async else ''}function {self.name}("
            if self.wrap:
                out += [head, *(f"  {p}," for p in self.arch.params), f"){self.arch.ret} {{"]
            else:
                out.append(f"{head}{', '.join(self.arch.params)}){self.arch.ret} {{")
        var = self.hoisted or self.local
        if not self.hoisted:
            value = lit(self.value, self.quote, self.arch.lang)
            out.append(f"{ind}{var} := {value}" if go else f"{ind}const {var} = {value};")
        if self.comment:
            out.append(f"{ind}// {self.comment}")
        out += [ind + ln.replace("@L", var).replace("@Q", self.quote) for ln in self.arch.rest]
        return [*out, "}"]


@dataclass(eq=False)
class Const(Target):
    name: str = ""
    values: list[Any] = field(default_factory=list)
    template: str = ""
    value: Any = None
    quote: str = "'"
    wrap: bool = False
    doc: str | None = None
    file: Any = None

    def ref(self) -> str:
        return f"{self.file.path}:{self.name}"

    def fact(self) -> str:
        v = self.value
        h = ", ".join(x.upper() for x in v) if isinstance(v, list) else v
        return self.template.format(pkg=self.file.pkg, name=self.name, path=self.file.path, h=h)

    def render(self) -> list[str]:
        out = [f"/** {self.doc} */"] if self.doc else []
        if isinstance(self.value, list) and self.wrap:
            items = [f"  {self.quote}{v}{self.quote}," for v in self.value]
            return [*out, f"export const {self.name} = [", *items, "];"]
        return [*out, f"export const {self.name} = {lit(self.value, self.quote)};"]


@dataclass(eq=False)
class CodeFile(Target):
    """A .ts or .go file: imports, top-of-file constants, exported constants and functions."""

    path: str = ""
    pkg: str = ""
    imports: list[tuple[str, str]] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    quote: str = "'"
    role: str = ""  # the rename stem

    def ref(self) -> str:
        return self.path

    def fact(self) -> str:
        what = "configuration constants" if self.role == "config" else f"{self.role} helpers"
        return f"{self.path} is where the {self.pkg} package keeps its {what}."

    def render(self) -> str:
        fns = [i for i in self.items if isinstance(i, Fn)]
        if self.path.endswith(".go"):
            lines = [
                "package main",
                "",
                "import (",
                *(f'\t"{m}"' for _, m in self.imports),
                ")",
                "",
            ]
            lines += [f"const {f.hoisted} = {lit(f.value, '', 'go')}" for f in fns if f.hoisted]
            for item in self.items:
                lines += ["", *item.render()]
            return "\n".join([*lines, "", "func main() {", '\tfmt.Println("ok")', "}", ""])
        q = self.quote
        lines = [f"import {what} from {q}{mod}{q};" for what, mod in self.imports]
        top = [f"const {f.hoisted} = {lit(f.value, f.quote)};" for f in fns if f.hoisted]
        if top:
            lines += ["", *top]
        for item in self.items:
            lines += ["", *item.render()]
        return "\n".join(lines) + "\n"


@dataclass(eq=False)
class TextFile(Target):
    """A file whose text is given (docs, manifests); `extra` grows it."""

    path: str = ""
    text: str = ""
    extra: list[str] = field(default_factory=list)
    fact_text: str = ""

    def ref(self) -> str:
        return self.path

    def fact(self) -> str:
        return self.fact_text.format(path=self.path)

    def render(self) -> str:
        return self.text + "".join(self.extra)


@dataclass(eq=False)
class Folder(Target):
    path: str = ""
    fact_text: str = ""
    renamed: str = ""

    def ref(self) -> str:
        return self.path

    def fact(self) -> str:
        return self.fact_text.format(path=self.path)


@dataclass(eq=False)
class Entry(Target):
    """A named part of a config file: a script, a make target, a job, a Dockerfile base."""

    file: str = ""
    name: str = ""
    variants: list[Any] = field(default_factory=list)
    at: int = 0  # the variant in force
    template: str = ""
    step: str = ""
    comment: str | None = None

    def ref(self) -> str:
        return self.file if self.file.endswith("Dockerfile") else f"{self.file}:{self.name}"

    def current(self) -> Any:
        return self.variants[self.at]

    def fact(self) -> str:
        h = self.current()[1] if isinstance(self.current(), tuple) else self.current()
        return self.template.format(h=h, path=self.file)


@dataclass(eq=False)
class Gen:
    """A file rendered from other state (package.json, Makefile, workflows, index.ts)."""

    path: str
    make: Any

    def render(self) -> str:
        return self.make()


@dataclass(eq=False)
class Memory:
    target: Any
    seq: int
    fate: str
    ref: str
    body: str
    key: str = ""
    snapshot: str | None = None  # the referenced file's text when written (file refs)
    committed: str = ""  # same (commit as its code), after (the next commit), later, with-change


TEAM = [("Priya Raman", "priya@acme.dev"), ("Tomás Ortega", "tomas@acme.dev"),
        ("Mei Lin", "mei@acme.dev"), ("Jonah Weiss", "jonah@acme.dev")]  # fmt: skip


class Bench:
    def __init__(self, seed: int, root: Path, cache: Path) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.env = {**os.environ, "NXS_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1",
                    "NO_COLOR": "1", "NXS_ACTOR": "bench", "PYTHONPATH": str(ROOT)}  # fmt: skip
        self.env.pop("NXS_WORKSPACE", None)
        self.files: dict[str, Any] = {}  # what the working tree holds, by path
        self.written: dict[str, str] = {}
        self.seq = 0
        self.memories: list[Memory] = []
        self.commits = 0
        self.names: set[str] = set()
        self.areas: list[tuple[str, list[Any], list[Any]]] = []  # (title, files, targets)
        self.targets: list[Any] = []
        self.extra_targets: list[str] = []
        self.extra_jobs: dict[str, list[str]] = {"ci.yml": [], "release.yml": []}
        self.labels: dict[str, list[str]] = {}
        self.deps = dict.fromkeys(DEPS, 0)

    # -- processes
    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True
        )
        if done.returncode:
            raise SystemExit(f"git {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def nxm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", NXM, *args]
        done = subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True, text=True)
        if check and done.returncode:
            raise SystemExit(
                f"nxm {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-600:]}"
            )
        return done

    # -- the working tree
    def sync(self) -> None:
        for path, obj in self.files.items():
            text = obj.render()
            if self.written.get(path) != text:
                full = self.root / path
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_text(text)
                self.written[path] = text

    def mv(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old.rstrip("/"), new.rstrip("/"))
        for path in [
            p for p in self.files if p == old or (old.endswith("/") and p.startswith(old))
        ]:
            obj = self.files.pop(path)
            obj.path = new + path[len(old) :]
            self.files[obj.path] = obj
            self.written[obj.path] = self.written.pop(path)

    def rm(self, old: str) -> None:
        self.git("rm", "-rq", old.rstrip("/"))
        for path in [
            p for p in self.files if p == old or (old.endswith("/") and p.startswith(old))
        ]:
            del self.files[path], self.written[path]

    def commit(self, message: str, memories: bool = False) -> None:
        self.sync()
        self.git("add", "-A", "--", ".", ":(exclude).nxs")
        if memories:
            self.git("add", "-A", ".nxs")
        if subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=self.root).returncode == 0:
            return
        name, mail = self.rng.choice(TEAM)
        self.git("-c", f"user.name={name}", "-c", f"user.email={mail}", "commit", "-qm", message)
        self.commits += 1

    def remember(self, target: Any, fate: str, committed: str) -> None:
        """`nxm add` about ``target`` as it stands in the working tree."""
        self.seq += 1
        body, ref = target.fact(), target.ref()
        category = {Fn: "conventions", Const: "decisions", Entry: "workflows"}.get(
            type(target), "architecture"
        )
        intro = body.split(":")[0] if isinstance(target, TextFile | Folder) else body
        intro = intro if len(intro) < 90 else intro[:87].rsplit(" ", 1)[0] + "..."
        done = self.nxm(
            "add", body, "--introduction", intro, "--ref", ref, "--category", category, "--json"
        )
        answer = json.loads(done.stdout)
        if not answer.get("created"):
            raise SystemExit(f"nxm add did not create a memory for {body!r}: {done.stdout[:300]}")
        path = ref if isinstance(target, CodeFile | TextFile) else None
        snapshot = self.written.get(path) if path else None
        key = answer["memory"]["key"]
        self.memories.append(Memory(target, self.seq, fate, ref, body, key, snapshot, committed))

    def new_name(self, arch: Arch, nouns: list[str]) -> tuple[str, str]:
        for noun in self.rng.sample(nouns, len(nouns)) + [n + "V2" for n in nouns]:
            name = lower1(arch.name.format(N=noun))
            if name not in self.names:
                self.names.add(name)
                return name, noun
        raise AssertionError("names exhausted")

    def new_fn(self, arch: Arch, file: CodeFile, nouns: list[str], quote: str) -> Fn:
        name, noun = self.new_name(arch, nouns)
        fn = Fn(arch=arch, noun=noun, name=name, value=self.rng.choice(arch.values),
                local=self.rng.choice(arch.locals), quote=quote, file=file,
                doc=self.rng.choice([None, None, f"{arch.role.capitalize()} rule for {noun.lower()}s."]))  # fmt: skip
        fn.tags = {"fn", "tsfn"} if arch.lang == "ts" else {"fn"}
        return fn

    # -- the codebase, before any of it is written
    def build(self) -> None:
        rng = self.rng
        scripts = [Entry(tags={"script"}, file="package.json", name=n, variants=v, template=t)
                   for n, (v, t) in SCRIPTS.items()]  # fmt: skip
        targets = [Entry(tags={"make"}, file="Makefile", name=n, variants=v, template=t)
                   for n, (v, t) in TARGETS.items()]  # fmt: skip
        docker = {p: Entry(tags={"docker"}, file=p, name=k, variants=v, template=t)
                  for p, (k, v, t) in DOCKER.items()}  # fmt: skip
        root = [
            Gen("package.json", lambda: self.package_json(scripts)),
            Gen("Makefile", lambda: self.makefile(targets)),
            Gen("Dockerfile", lambda: self.dockerfile(docker["Dockerfile"])),
            Gen("README.md", lambda: README + "".join(self.labels.get("README.md", []))),
            Gen("turbo.json", lambda: TURBO),
            Gen(".gitignore", lambda: "node_modules/\ndist/\n.turbo/\ncoverage/\n"),
            Gen("tsconfig.base.json", lambda: TSCONFIG),
        ]
        self.areas.append(
            ("chore: scaffold the monorepo", root, [*scripts, *targets, docker["Dockerfile"]])
        )
        archs = {a.role: a for a in TS_ARCHS}
        for pkg in PACKAGES:
            quote = rng.choice(["'", "'", '"'])
            files: list[Any] = []
            for role in rng.sample(list(archs), 4):
                f = CodeFile(tags={"tsfile"}, path=f"packages/{pkg}/src/{archs[role].files[0]}",
                             pkg=pkg, quote=quote, role=role,
                             imports=rng.sample(IMPORTS, rng.randint(2, 4)))  # fmt: skip
                for i in range(rng.randint(4, 5)):
                    arch = archs[role] if i < 2 or rng.random() < 0.6 else rng.choice(TS_ARCHS)
                    f.items.append(self.new_fn(arch, f, NOUNS, quote))
                files.append(f)
            config = CodeFile(tags={"tsfile"}, path=f"packages/{pkg}/src/config.ts", pkg=pkg,
                              quote=quote, role="config", imports=[("{ z }", "zod"), ("{ env }", "@acme/env")])  # fmt: skip
            for name, values, template in rng.sample(CONSTS, 4):
                c = Const(name=name, values=values, template=template, value=rng.choice(values),
                          quote=quote, file=config, doc=rng.choice([None, f"Used across {pkg}."]))  # fmt: skip
                c.tags = {"const", "strconst"} if not isinstance(c.value, int) else {"const"}
                config.items.append(c)
            files.append(config)
            items = [i for f in files for i in f.items]
            files += [Gen(f"packages/{pkg}/src/index.ts", lambda pkg=pkg: self.index_ts(pkg)),
                      Gen(f"packages/{pkg}/package.json", lambda pkg=pkg: self.pkg_json(pkg))]  # fmt: skip
            self.labels[f"packages/{pkg}/package.json"] = ["0.4.0"]
            self.areas.append(
                (f"feat({pkg}): first cut of the {pkg} package", files, [*files, *items])
            )
        go_files: list[Any] = [
            Gen("go.mod", lambda: "module github.com/acme/platform\n\ngo 1.22\n")
        ]
        for tool, nouns in GO_TOOLS.items():
            f = CodeFile(path=f"cmd/{tool}/main.go", pkg=tool, role=tool,
                         imports=[("", m) for m in ("fmt", "os", "runtime", "time")])  # fmt: skip
            f.items = [self.new_fn(a, f, nouns, '"') for a in rng.sample(GO_ARCHS, 4)]
            go_files.append(f)
        go_items = [i for f in go_files if isinstance(f, CodeFile) for i in f.items]
        self.areas.append(("feat(cmd): migrate, backfill and seed tools in Go", go_files, go_items))
        jobs = {wf: [Entry(tags={"job"}, file=f".github/workflows/{wf}", name=n, variants=v, step=s, template=t)
                     for n, (v, s, t) in spec.items()] for wf, spec in JOBS.items()}  # fmt: skip
        ci = [
            Gen(f".github/workflows/{wf}", lambda wf=wf: self.workflow(wf, jobs[wf])) for wf in jobs
        ]
        worker = Gen(
            "docker/worker.Dockerfile",
            lambda: self.worker_dockerfile(docker["docker/worker.Dockerfile"]),
        )
        db = Gen("docker/db.Dockerfile", lambda: self.db_dockerfile(docker["docker/db.Dockerfile"]))
        self.areas.append(("ci: lint, test, build and release workflows", [*ci, worker, db],
                           [*jobs["ci.yml"], *jobs["release.yml"], *list(docker.values())[1:]]))  # fmt: skip
        docs = [TextFile(tags={"doc"}, path=p, fact_text=fact, text=doc_text(title, rng))
                for p, (title, fact, _) in DOCS.items()]  # fmt: skip
        folders = [
            Folder(tags={"folder"}, path=p, fact_text=fact) for p, (_, fact, _) in FOLDERS.items()
        ]
        inner = {p: [TextFile(path=p + n, text=f"# {n}\n{LOREM}\n") for n in names]
                 for p, (names, _, _) in FOLDERS.items()}  # fmt: skip
        self.areas.append(("docs: runbook, architecture and ADRs", [*docs, *inner["docs/adr/"]],
                           [*docs, folders[-1]]))  # fmt: skip
        rest = [f for p, fs in inner.items() if p != "docs/adr/" for f in fs]
        self.areas.append(("chore: deploy manifests, scripts and load tests", rest, folders[:-1]))
        # about one function in eight reads its value from a constant at the top of its file
        fns = [i for _, _, ts in self.areas for i in ts if isinstance(i, Fn)]
        for fn in rng.sample(fns, 16):
            base = fn.arch.const if fn.arch.lang == "ts" else lower1(fn.noun) + fn.arch.const
            fn.hoisted, fn.tags = (
                (f"{fn.noun.upper()}_{base}" if fn.arch.lang == "ts" else base),
                {"hoisted"},
            )
        self.targets = [t for _, _, ts in self.areas for t in ts if isinstance(t, Target)]
        self.areas[1:] = rng.sample(self.areas[1:], len(self.areas) - 1)

    # -- generated files
    def package_json(self, scripts: list[Entry]) -> str:
        deps = {n: DEPS[n][self.deps[n]] for n in DEPS}
        dev = {"typescript", "vitest", "eslint", "prettier", "turbo"}
        doc = {"name": "acme-platform", "private": True, "workspaces": ["packages/*"],
               "scripts": {s.name: s.current() for s in scripts},
               "dependencies": {n: v for n, v in deps.items() if n not in dev},
               "devDependencies": {n: v for n, v in deps.items() if n in dev}}  # fmt: skip
        return json.dumps(doc, indent=2) + "\n"

    def makefile(self, targets: list[Entry]) -> str:
        names = [t.name for t in targets] + self.extra_targets
        lines = ["VERSION ?= $(shell git describe --tags --always)", "IMAGE ?= ghcr.io/acme/platform",
                 "", f".PHONY: {' '.join(names)}"]  # fmt: skip
        for t in targets:
            lines += ["", *([f"# {t.comment}"] if t.comment else []), f"{t.name}:"]
            lines += [f"\t{ln}" for ln in t.current()[0]]
        for name in self.extra_targets:
            lines += ["", f"{name}:", *(f"\t{ln}" for ln in SPARE_TARGETS[name])]
        return "\n".join(lines) + "\n"

    def workflow(self, wf: str, jobs: list[Entry]) -> str:
        lines = [f"name: {'CI' if wf == 'ci.yml' else 'Release'}", "on:"]
        lines += (
            ["  push:", "    branches: [main]", "  pull_request:"]
            if wf == "ci.yml"
            else ["  push:", "    tags: ['v*']"]
        )
        lines += ["", "jobs:"]
        steps = [(j.name, j.step, j.current()[0], j.comment) for j in jobs]
        steps += [(n, n.capitalize(), SPARE_JOBS[n], None) for n in self.extra_jobs[wf]]
        for name, step, cmd, comment in steps:
            lines += [
                f"  {name}:",
                "    runs-on: ubuntu-latest",
                "    steps:",
                "      - uses: actions/checkout@v4",
            ]
            if name == "go":
                lines += [
                    "      - uses: actions/setup-go@v5",
                    "        with:",
                    "          go-version: '1.22'",
                ]
            else:
                lines += ["      - uses: actions/setup-node@v4", "        with:", "          node-version: 20",
                          "      - run: npm ci"]  # fmt: skip
            lines += [f"      # {comment}"] if comment else []
            lines += [f"      - name: {step}", f"        run: {cmd}", ""]
        return "\n".join(lines)

    def dockerfile(self, base: Entry) -> str:
        extra = "".join(self.labels.get("Dockerfile", []))
        return (f"FROM {base.current()} AS build\nWORKDIR /app\nCOPY package.json package-lock.json ./\n"
                f"RUN npm ci\nCOPY . .\nRUN npm run build\n\nFROM {base.current()}\nWORKDIR /app\n"
                f"ENV NODE_ENV=production\n{extra}COPY --from=build /app/dist ./dist\n"
                'CMD ["node", "dist/server.js"]\n')  # fmt: skip

    def worker_dockerfile(self, base: Entry) -> str:
        extra = "".join(self.labels.get("docker/worker.Dockerfile", []))
        return (f"FROM {base.current()} AS build\nWORKDIR /src\nCOPY go.mod go.sum ./\nRUN go mod download\n"
                "COPY cmd ./cmd\nRUN CGO_ENABLED=0 go build -o /out/worker ./cmd/backfill\n\n"
                f"FROM gcr.io/distroless/static\n{extra}COPY --from=build /out/worker /worker\n"
                'ENTRYPOINT ["/worker"]\n')  # fmt: skip

    def db_dockerfile(self, base: Entry) -> str:
        extra = "".join(self.labels.get("docker/db.Dockerfile", []))
        return (f"FROM {base.current()}\n{extra}RUN apk add --no-cache postgresql-pg_partman\n"
                "COPY deploy/sql/init.sql /docker-entrypoint-initdb.d/\n")  # fmt: skip

    def index_ts(self, pkg: str) -> str:
        here = f"packages/{pkg}/src/"
        mods = sorted(
            p[len(here) : -3]
            for p, f in self.files.items()
            if p.startswith(here) and isinstance(f, CodeFile)
        )
        return "".join(f"export * from './{m}';\n" for m in mods)

    def pkg_json(self, pkg: str) -> str:
        version = self.labels[f"packages/{pkg}/package.json"][-1]
        doc = {"name": f"@acme/{pkg}", "version": version, "main": "dist/index.js",
               "scripts": {"build": "tsc -b", "test": "vitest run"}}  # fmt: skip
        return json.dumps(doc, indent=2) + "\n"


README = """# acme platform

Monorepo: TypeScript packages under packages/, Go tools under cmd/, manifests under deploy/.

    npm ci && npm run build && make test
"""
TURBO = '{\n  "pipeline": {\n    "build": { "dependsOn": ["^build"], "outputs": ["dist/**"] },\n    "test": {}\n  }\n}\n'
TSCONFIG = '{\n  "compilerOptions": {\n    "target": "ES2022",\n    "module": "NodeNext",\n    "strict": true\n  }\n}\n'
LOREM = "Notes kept by the platform team. Ask in #platform before changing anything here."
SECTIONS = [
    "Escalation",
    "Rollback",
    "Dashboards",
    "Ownership",
    "Known issues",
    "History",
    "Checklist",
]


def doc_text(title: str, rng: random.Random) -> str:
    return f"# {title}\n" + "".join(f"\n## {h}\n\n{LOREM}\n" for h in rng.sample(SECTIONS, 3))


# ---------------------------------------------------------------- fates and history
def assign(b: Bench) -> dict[Any, Any]:
    """Give each chosen target one fate; returns the sibling each sibling-edit will change."""
    siblings: dict[Any, Any] = {}
    for kind, count, _, tags in FATES:
        if kind == "written-after":
            pool = [t for t in b.targets if "tsfn" in t.tags and t.fate is None and not t.reserved]
        else:
            pool = [t for t in b.targets if t.tags & tags and t.fate is None and not t.reserved]
        if kind == "sibling-edit":
            pool = [t for t in pool if _free_sibling(t)]
        if kind in ("rename-file", "delete-file"):
            pool = [t for t in pool if not isinstance(t, CodeFile) or t.role != "config"]
        chosen: list[Any] = []
        for t in b.rng.sample(pool, len(pool)):
            if len(chosen) == count:
                break
            if t.reserved:  # the sibling of one chosen just before
                continue
            if kind == "sibling-edit":
                sib = _free_sibling(t)
                if sib is None:
                    continue
                sib.reserved, siblings[t] = True, sib
            t.fate = kind
            chosen.append(t)
            if isinstance(t, CodeFile) and kind in ("rename-file", "delete-file"):
                for item in t.items:
                    item.reserved = True
        if len(chosen) < count:
            raise SystemExit(f"only {len(chosen)} targets for {kind} (wanted {count})")
    return siblings


def _free_sibling(t: Any) -> Fn | None:
    if not isinstance(t, Fn):
        return None
    free = [
        f
        for f in t.file.items
        if isinstance(f, Fn) and f is not t and f.fate is None and not f.reserved and not f.hoisted
    ]
    return free[0] if free else None


def phase1(b: Bench) -> None:
    """Write the code area by area with its memories: in the same commit, right after, or later."""
    b.git("init", "-q", "-b", "main")
    late = 0  # area commits left before the pending memories are committed
    for i, (title, files, targets) in enumerate(b.areas):
        for f in files:
            b.files[f.path] = f
        b.sync()
        if i == 0:
            b.nxm("init")
        mode = "same" if i == 0 else b.rng.choice(["same", "after", "later"])
        if mode != "same":
            b.commit(title)
        for t in targets:
            if isinstance(t, Target) and t.fate and t.fate != "written-after":
                b.remember(t, t.fate, mode)
        if mode == "same":
            b.commit(title, memories=True)
            late = 0
        elif mode == "after":
            b.commit(f"docs(memory): notes on {title.split(': ', 1)[1]}", memories=True)
            late = 0
        else:
            late = late or b.rng.randint(1, 2)
        if late:
            late -= 1
            if late == 0:
                b.commit("docs(memory): record what we learned this week", memories=True)
    b.commit("docs(memory): record what we learned this week", memories=True)


def other(values: list[Any], current: Any, rng: random.Random) -> Any:
    return rng.choice([v for v in values if v != current])


def apply(b: Bench, kind: str, t: Any, siblings: dict[Any, Any]) -> str:
    """Make one edit of ``kind`` to ``t``; returns a line for the commit message."""
    rng, seq = b.rng, b.seq
    cls = next(c for k, _, c, _ in FATES if k == kind)
    t.hit(seq, kind, cls)
    where = getattr(t, "file", None)
    pkg = where.pkg if isinstance(where, CodeFile) else getattr(t, "pkg", "repo")
    if kind in ("value", "indirect-const", "written-after"):
        t.value = other(t.arch.values, t.value, rng)
        return f"fix({pkg}): tune {t.name}"
    if kind == "const-value":
        t.value = other(t.values, t.value, rng)
        return f"chore({pkg}): change {t.name}"
    if kind == "rename-symbol":
        old = t.name
        if isinstance(t, Fn):
            t.name, t.noun = b.new_name(
                t.arch, NOUNS if t.arch.lang == "ts" else sum(GO_TOOLS.values(), [])
            )
        else:
            t.name = f"{pkg.upper()}_{t.name}"
        return f"refactor({pkg}): rename {old} to {t.name}"
    if kind == "delete-symbol":
        t.file.items.remove(t)
        return f"refactor({pkg}): drop {t.name}"
    if kind == "move-symbol":
        dests = [f for f in b.files.values() if isinstance(f, CodeFile) and f.pkg == t.file.pkg
                 and f is not t.file and f.role != "config" and f.fate not in ("rename-file", "delete-file")]  # fmt: skip
        dest = rng.choice(dests)
        t.file.items.remove(t)
        dest.items.append(t)
        t.file = dest
        return f"refactor({pkg}): move {t.name} to {dest.path}"
    if kind == "rename-file":
        if isinstance(t, CodeFile):
            stem = (
                "settings.ts"
                if t.role == "config"
                else next(a.files[1] for a in TS_ARCHS if a.role == t.role)
            )
            new = t.path.rsplit("/", 1)[0] + "/" + stem
        else:
            new = DOCS[t.path][2]
        old = t.path
        b.mv(old, new)
        return f"refactor: rename {old} to {new}"
    if kind == "delete-file":
        b.rm(t.path)
        return f"chore: remove {t.path}"
    if kind == "rename-folder":
        old = t.path
        b.mv(old, FOLDERS[old][2])
        t.path = FOLDERS[old][2]
        return f"chore: move {old} to {t.path}"
    if kind == "delete-folder":
        b.rm(t.path)
        return f"chore: delete {t.path}"
    if kind in ("script-change", "make-recipe", "job-command", "docker-base"):
        t.at = 1
        return f"build: change {t.ref()}"
    if kind == "reformat":
        t.quote = '"' if t.quote == "'" else "'"
        if isinstance(t, Fn) or isinstance(t.value, list):
            t.wrap = not t.wrap
        return f"style({pkg}): prettier"
    if kind == "jsdoc":
        t.doc = other(DOCS_NOTE, t.doc, rng)
        return f"docs({pkg}): document {t.name}"
    if kind == "inner-comment":
        t.comment = rng.choice(COMMENTS)
        return f"docs({pkg}): explain {t.name}"
    if kind == "local-rename":
        t.local = other(t.arch.locals, t.local, rng)
        return f"refactor({pkg}): clearer names in {t.name}"
    if kind == "add-sibling":
        file = t if isinstance(t, CodeFile) else t.file
        if isinstance(t, Const):
            taken = {i.name for i in file.items}
            spare = ["RETRY_JITTER_MS", "MAX_BODY_KB", "AUDIT_SAMPLE_RATE", "SHUTDOWN_GRACE_S"]
            name = rng.choice([n for n in spare if n not in taken])
            new: Any = Const(name=name, values=[1], template="", value=1, file=file)
        else:
            arch = rng.choice(TS_ARCHS if file.path.endswith(".ts") else GO_ARCHS)
            new = b.new_fn(
                arch, file, NOUNS if arch.lang == "ts" else sum(GO_TOOLS.values(), []), file.quote
            )
        at = len(file.items) if t is file else file.items.index(t) + 1
        file.items.insert(at, new)
        return f"feat({pkg}): add {new.name}"
    if kind == "sibling-edit":
        sib = siblings[t]
        sib.value = other(sib.arch.values, sib.value, rng)
        return f"fix({pkg}): tune {sib.name}"
    if kind == "reorder-imports":
        file = t if isinstance(t, CodeFile) else t.file
        while True:
            order = rng.sample(file.imports, len(file.imports))
            if order != file.imports:
                file.imports = order
                return f"style({file.pkg}): sort imports"
    if kind == "dep-bump":
        dep = rng.choice([d for d in DEPS if b.deps[d] == 0])
        b.deps[dep] = 1
        return f"chore(deps): bump {dep} to {DEPS[dep][1]}"
    if kind == "add-job":
        wf = t.file.rsplit("/", 1)[1]
        b.extra_jobs[wf].append(rng.choice([j for j in SPARE_JOBS if j not in b.extra_jobs[wf]]))
        return f"ci: add the {b.extra_jobs[wf][-1]} job"
    if kind == "job-cosmetic":
        t.step, t.comment = t.step + " (required)", "required check: keep the job name stable"
        return f"ci: clarify the {t.name} step"
    if kind == "add-target":
        b.extra_targets.append(rng.choice([n for n in SPARE_TARGETS if n not in b.extra_targets]))
        return f"build: add make {b.extra_targets[-1]}"
    if kind == "make-comment":
        t.comment = f"{t.name}: see docs/releasing.md before changing"
        return f"docs: comment make {t.name}"
    if kind == "docker-cosmetic":
        b.labels.setdefault(t.file, []).append(
            "LABEL org.opencontainers.image.source=https://github.com/acme/platform\n"
        )
        return f"build: label {t.file}"
    if kind == "doc-edit":
        t.extra.append(
            f"\n## {rng.choice(SECTIONS)} (updated)\n\nAdded after the last incident review.\n"
        )
        return f"docs: update {t.path}"
    if kind == "folder-content":
        path = t.path + rng.choice(["NOTES.md", "extra/overlay.yaml", "smoke.sh"])
        b.files[path] = TextFile(path=path, text=f"# added\n{LOREM}\n")
        return f"chore: add {path}"
    raise AssertionError(kind)


def noise(b: Bench) -> str:
    """An edit no memory is about: a free function, a new module, a README line, a version."""
    rng, roll = b.rng, b.rng.random()
    if roll < 0.45:
        free = [f for f in b.targets if isinstance(f, Fn) and f.fate is None and not f.reserved and not f.hoisted
                and f.file.path in b.files and f in f.file.items]  # fmt: skip
        fn = rng.choice(free)
        fn.value = other(fn.arch.values, fn.value, rng)
        fn.reserved = True
        return f"fix({fn.file.pkg}): tune {fn.name}"
    if roll < 0.65:
        pkg = rng.choice(PACKAGES)
        stems = ["metrics", "flags", "events", "health", "tracing", "audit-log", "errors", "env"]
        path = next(p for s in rng.sample(stems, len(stems)) + [f"misc-{b.seq}"]
                    if (p := f"packages/{pkg}/src/{s}.ts") not in b.files)  # fmt: skip
        f = CodeFile(path=path, pkg=pkg, imports=rng.sample(IMPORTS, 2), role="misc")
        f.items = [b.new_fn(a, f, NOUNS, "'") for a in rng.sample(TS_ARCHS, 2)]
        b.files[path] = f
        return f"feat({pkg}): add {path.rsplit('/', 1)[1]}"
    if roll < 0.8:
        b.labels.setdefault("README.md", []).append(f"\n{rng.choice(SECTIONS)}: {LOREM}\n")
        return "docs: README"
    pkg = rng.choice(PACKAGES)
    versions = b.labels[f"packages/{pkg}/package.json"]
    major, minor, patch = versions[-1].split(".")
    versions.append(f"{major}.{minor}.{int(patch) + 1}")
    return f"chore({pkg}): release {versions[-1]}"


def phase2(b: Bench, siblings: dict[Any, Any], n_noise: int = 12) -> None:
    """Team activity: every fate's edit, grouped 1-3 a commit, among unrelated edits."""
    ops: list[Any] = [t for t in b.targets if t.fate not in (None, "untouched")]
    ops += [None] * n_noise
    b.rng.shuffle(ops)
    while ops:
        if ops[0] is not None and ops[0].fate == "written-after":
            t = ops.pop(0)
            b.seq += 1
            msg = apply(b, "written-after", t, siblings)
            b.sync()
            b.remember(t, "written-after", "with-change")
            b.commit(msg, memories=True)
            continue
        group = []  # up to three edits, stopping before a written-after one
        for _ in range(b.rng.choice([1, 1, 2, 2, 3])):
            if ops and (ops[0] is None or ops[0].fate != "written-after"):
                group.append(ops.pop(0))  # noqa: PERF401
        lines = []
        for t in group:
            b.seq += 1
            lines.append(noise(b) if t is None else apply(b, t.fate, t, siblings))
        b.commit(lines[0] + "".join(f"\n\n- {ln}" for ln in lines[1:]))


# ---------------------------------------------------------------- truth and score
def truth(b: Bench, m: Memory) -> tuple[str, str]:
    """(class, edit kind) of a memory: what happened to its target after it was written."""
    after = [c for seq, _, c in m.target.events if seq > m.seq]
    cls = "indirect" if "indirect" in after else "invalidated" if "inv" in after else "true"
    kind = m.fate
    if kind == "untouched" and m.snapshot is not None and b.written.get(m.ref) != m.snapshot:
        kind = "untouched (file edited elsewhere)"
    return cls, kind


def present(b: Bench, t: Any) -> bool:
    if isinstance(t, Fn | Const):
        return t in t.file.items and b.files.get(t.file.path) is t.file
    if isinstance(t, Folder):
        return any(p.startswith(t.path) for p in b.files)
    return not isinstance(t, CodeFile | TextFile) or b.files.get(t.path) is t


def check(b: Bench) -> None:
    """The builder's own consistency: a memory is false exactly when its text, written again
    from the code as it now stands, would differ (indirect ones included)."""
    for m in b.memories:
        cls, kind = truth(b, m)
        now = m.target.fact() if present(b, m.target) else None
        if (cls != "true") != (now != m.body):
            raise AssertionError(
                f"ground truth inconsistent for {kind} {m.ref}: {m.body!r} vs {now!r}"
            )


def score(b: Bench, flagged: set[str] | None) -> dict[str, Any]:
    rows = [(m, *truth(b, m)) for m in b.memories]
    kinds: dict[str, dict[str, Any]] = {}
    for m, cls, kind in rows:
        row = kinds.setdefault(kind, {"class": cls, "n": 0, "flagged": 0})
        row["n"] += 1
        row["flagged"] += bool(flagged and m.key in flagged)
    totals = Counter(cls for _, cls, _ in rows)
    committed = dict(Counter(m.committed for m in b.memories))
    out: dict[str, Any] = {"memories": len(rows), "commits": b.commits, "invalidated": totals["invalidated"],
                           "still_true": totals["true"], "indirect": totals["indirect"], "committed": committed, "kinds": kinds}  # fmt: skip
    if flagged is None:
        return out

    def listing(cls: str, want: bool) -> list[dict[str, str]]:
        return [{"key": m.key, "kind": kind, "ref": m.ref, "committed": m.committed, "body": m.body}
                for m, c, kind in rows if c == cls and (m.key in flagged) == want]  # fmt: skip

    misses, false_flags = listing("invalidated", False), listing("true", True)
    caught = totals["invalidated"] - len(misses)
    out |= {"caught": caught, "caught_pct": round(100 * caught / max(totals["invalidated"], 1), 1),
            "false_flags": len(false_flags),
            "false_flag_pct": round(100 * len(false_flags) / max(totals["true"], 1), 1),
            "indirect_caught": totals["indirect"] - len(listing("indirect", False)),
            "unknown_keys": sorted(flagged - {m.key for m in b.memories}),
            "misses": misses, "false_flag_list": false_flags}  # fmt: skip
    return out


def human(r: dict[str, Any]) -> str:
    lines = [f"seed {r['seed']}: {r['memories']} memories, {r['commits']} commits, {r['seconds']} s",
             f"ground truth: {r['invalidated']} invalidated, {r['still_true']} still true, "
             f"{r['indirect']} indirect; memories committed: {r['committed']}", "", f"{'edit kind':36} {'class':12} {'n':>3} {'flagged':>7}"]  # fmt: skip
    for kind, row in sorted(r["kinds"].items(), key=lambda kv: (kv[1]["class"], kv[0])):
        flagged = row["flagged"] if "caught" in r else "-"
        lines.append(f"{kind:36} {row['class']:12} {row['n']:>3} {flagged:>7}")
    if "caught" not in r:
        return "\n".join([*lines, "", r["note"]])
    lines += ["", f"caught {r['caught']}/{r['invalidated']} ({r['caught_pct']} %; target >= 90)",
              f"false flags {r['false_flags']}/{r['still_true']} ({r['false_flag_pct']} %; target <= 10)",
              f"indirect caught {r['indirect_caught']}/{r['indirect']} (not in the figures above)"]  # fmt: skip
    for title, items in (("misses", r["misses"]), ("false flags", r["false_flag_list"])):
        lines += ["", f"{title}:"] + [
            f"  {i['kind']:16} {i['committed']:11} {i['ref']}  {i['body'][:60]}" for i in items
        ]
    return "\n".join(lines)


def run(seed: int, keep: str | None = None) -> dict[str, Any]:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nxs-stale-heldout-") as tmp:
        where = Path(keep or tmp)
        b = Bench(seed, where / "platform", where / "cache")
        b.root.mkdir(parents=True)
        b.build()
        siblings = assign(b)
        phase1(b)
        phase2(b, siblings)
        b.commit("chore: final tidy", memories=True)
        check(b)
        done = b.nxm("stale", "--json", check=False)
        if done.returncode and "No such command" in done.stdout + done.stderr:
            r = score(b, None)
            r["note"] = (
                "`nxm stale` does not exist in this checkout: ground truth only, nothing scored."
            )
        elif done.returncode:
            raise SystemExit(
                f"nxm stale --json failed ({done.returncode}): {(done.stdout + done.stderr)[-800:]}"
            )
        else:
            r = score(b, flagged_keys(json.loads(done.stdout)))
    return {"seed": seed, "seconds": round(time.perf_counter() - start, 1), **r}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR (new) and leave it there")
    args = parser.parse_args()
    r = run(args.seed, args.keep)
    print(json.dumps(r, indent=1) if args.json else human(r))


if __name__ == "__main__":
    main()
