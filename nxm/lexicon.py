"""The word lists entity extraction reads (`nxm.extract`): plain data, edited by hand.

Each list is case-sensitive. `TECH`, `ORGS` and `PLACES` map every spelling to one canonical
name (``Postgres`` and ``postgres`` are both ``PostgreSQL``). Adding a name here is the way to
teach the extractor something; bump `nxm.extract.EXTRACTOR_VERSION` so stored extractions are
redone.
"""

from __future__ import annotations


def _lexicon(text: str) -> dict[str, str]:
    """Parse ``Canonical=alias,alias; Other`` into {surface form: canonical}."""
    out: dict[str, str] = {}
    for entry in text.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        name, _, aliases = entry.partition("=")
        name = name.strip()
        out[name] = name
        for alias in aliases.split(","):
            if alias.strip():
                out[alias.strip()] = name
    return out


# Technologies, products and services (THING). Case-sensitive; aliases fold to the canonical name.
TECH = _lexicon("""
Python=python; TypeScript=typescript,TS; JavaScript=javascript,JS; Rust; Golang=Go; Java; Kotlin;
Swift; Ruby; Ruby on Rails=Rails; PHP; Elixir; Scala; Haskell; Clojure; C#; C++; Node.js=Node,nodejs,NodeJS;
Deno; React=react,ReactJS; React Native; Vue=Vue.js,vue; Angular; Svelte=SvelteKit; Next.js=NextJS,Nextjs,next.js;
Nuxt; Remix; Astro; Django=django; Flask=flask; FastAPI=fastapi; Spring Boot=Spring; Laravel; Express.js;
PostgreSQL=Postgres,postgres,postgresql,Postgresql; MySQL=mysql; SQLite=sqlite,sqlite3; MongoDB=Mongo,mongodb;
Redis=redis; Memcached; Elasticsearch=elasticsearch,ElasticSearch; OpenSearch; Kafka=kafka,Apache Kafka;
RabbitMQ; Celery=celery; Sidekiq; Docker=docker; Docker Compose=docker-compose,docker compose;
Kubernetes=k8s,kubernetes; Helm; Terraform=terraform; Ansible; Pulumi; AWS; GCP=Google Cloud; Azure;
S3; EC2; DynamoDB; BigQuery; Snowflake; Supabase; Firebase; Vercel; Netlify; Heroku; Fly.io=fly.io;
Cloudflare; GitHub=Github,github; GitHub Actions; GitLab=Gitlab; Bitbucket; CircleCI; Jenkins;
Sentry=sentry; Datadog; Grafana; Prometheus; PagerDuty; OpenTelemetry; Slack; Jira; Linear; Notion;
Figma; Stripe; Adyen; Auth0; Okta; Twilio; SendGrid; Segment; Mixpanel; LaunchDarkly; Storybook; Turborepo;
LanceDB=lancedb; DuckDB=duckdb; pandas; NumPy=numpy; PyTorch=pytorch; TensorFlow; scikit-learn;
pytest; Jest; Vitest; Playwright; Cypress; Selenium; ruff; mypy; pyright; ESLint=eslint; Prettier;
webpack; Vite; npm; pnpm; Yarn; pip; Poetry; Typer; orjson; httpx; fastembed; ONNX=onnx; ONNX Runtime=onnxruntime; tomllib;
GraphQL; gRPC; OpenAPI; Tailwind=TailwindCSS,Tailwind CSS; Prisma; SQLAlchemy; Alembic; Pydantic=pydantic;
Nginx=nginx; Linux; Ubuntu; Debian; macOS; Windows; VS Code=VSCode; Vim=vim,Neovim; Emacs; Cursor;
Claude Code; Airflow; dbt; Spark=Apache Spark; Bazel; Gradle; Maven; Zod; tRPC; Electron; Flutter;
Expo; Xcode; Android; iOS; Hypothesis; Kotlin Multiplatform; Temporal; Vault; Consul; Traefik;
Caddy; Metabase; Looker; Tableau; Grafana Loki=Loki; Honeycomb; Bun; Hono; htmx; Alpine.js; jQuery;
Redux; Zustand; TanStack Query=React Query; Apollo; Hasura; Keycloak; MinIO; Cassandra; ClickHouse;
Neo4j; Pinecone; Weaviate; Qdrant; Chroma; OpenAI API; Claude API; Anthropic API; Ollama; LangChain
""")
# Companies and institutions (ORGANIZATION).
ORGS = _lexicon("""
Google; Microsoft; Amazon; Apple; Meta=Facebook; Netflix; Anthropic; OpenAI; Shopify; Atlassian;
IBM; Oracle; Salesforce; Spotify; Uber; Airbnb; Mozilla; Red Hat; Canonical; JetBrains; HashiCorp;
Intel; Nvidia=NVIDIA; Samsung; SAP; Siemens; Accenture; Deloitte; Mercado Libre; Nubank; Revolut;
Monzo; Wise; Klarna; Zalando; Booking.com; Databricks; Elastic; Confluent; MongoDB Inc;
Apache Software Foundation; Linux Foundation; Python Software Foundation=PSF
""")
# Cities, countries and regions (PLACE).
PLACES = _lexicon("""
Lisbon; Porto; London; Manchester; Edinburgh; Dublin; Berlin; Munich; Hamburg; Paris; Lyon; Madrid;
Barcelona; Valencia; Amsterdam; Rotterdam; Brussels; Zurich; Geneva; Vienna; Prague; Warsaw;
Krakow; Budapest; Bucharest; Stockholm; Oslo; Copenhagen; Helsinki; Tallinn; Riga; Vilnius; Milan;
Rome; Athens; Istanbul; Tel Aviv; Dubai; Cairo; Lagos; Nairobi; Cape Town; Johannesburg; Mumbai;
Bangalore=Bengaluru; Delhi; Hyderabad; Pune; Singapore; Tokyo; Osaka; Seoul; Beijing; Shanghai;
Shenzhen; Hong Kong; Taipei; Sydney; Melbourne; Auckland; Toronto; Vancouver; Montreal; New York=NYC;
San Francisco=SF; Seattle; Austin; Boston; Chicago; Denver; Los Angeles=LA; Miami; Atlanta; Portland;
Mexico City; São Paulo=Sao Paulo; Rio de Janeiro; Buenos Aires; Santiago; Bogotá=Bogota; Lima;
Portugal; Spain; France; Germany; Italy; Netherlands; Belgium; Switzerland; Austria; Poland; Ireland;
United Kingdom=UK; United States=USA,US; Canada; Mexico; Brazil; Argentina; Chile; Colombia; India;
Japan; China; Korea; Australia; New Zealand; Israel; Nigeria; Kenya; Europe; Asia; Africa
""")
ORG_SUFFIXES = frozenset(
    "Corp Corporation Inc Ltd LLC GmbH AG SA BV Labs Technologies Software Systems Group "
    "Foundation University Institute Bank Agency Studio Studios Partners Co Company Holdings "
    "Ventures Consulting Solutions".split()
)
# Head nouns that make "the billing service" a thing (or, for TEAM_HEADS, an organisation).
TEAM_HEADS = frozenset("team squad guild department org group".split())
THING_HEADS = frozenset(
    "module service services api pipeline repo repository library app application frontend "
    "backend database cluster component system package cli sdk project dashboard website site "
    "worker queue bot server monorepo schema migration integration plugin flow rewrite model "
    "panel loader shipper layer endpoint platform gateway engine proxy".split()
)
# Component nouns that name an entity even without a modifier ("the frontend", "our monorepo").
SOLO_HEADS = frozenset("frontend backend monorepo cli sdk".split())
# Words in a capitalised run that make it a thing, not a person ("Project Apollo").
THING_WORDS = frozenset(
    "Project Service API Team Notes Release Board Sprint Module Platform Server Cloud Engine "
    "Manager Guide Plan Review Day Week Month Store Suite Portal App Hub Studio Console Center "
    "Centre Desk Bot Pipeline Framework Library Toolkit Kit Protocol Standard Policy Program "
    "Programme Initiative Roadmap Report Dashboard Database Cluster Edition Beta Alpha".split()
)
# Capitalised words that are never an entity on their own.
STOP = frozenset(
    """A An The This That These Those We Our Ours Us I I'm I've My Me You Your It Its It's They Their
    Them He His Him She Her Hers If When Whenever Where Why How What Which Who Whom Whose Then Also
    But And Or Nor For In On At To From With Without By Until After Before Since While Because So
    Do Does Did Don't Doesn't Didn't Never Always Use Using Run Keep Ask See Note Make Add Check Only
    All Each Every Some Any No Not Yes Please Most Many More Less Both Either Neither Other Another
    Such Same New Old First Last Next Previous There Here Now Today Tomorrow Yesterday Monday
    Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
    August September October November December TODO FIXME NOTE OK CI CD API APIs CLI UI UX URL URLs
    JSON YAML TOML CSV HTML CSS HTTP HTTPS SQL SSH TLS DNS PR PRs MR QA ID IDs MCP ORM SDK SLA SLO
    ETA EOD README CHANGELOG Markdown Production Staging Dev Prod Is Are Was Were Be Been Has Have
    Had Will Would Should Could Can Cannot Can't Must May Might Let Set Get Put Go Stop Start Try
    Avoid Prefer Remember Important Warning Tip Note Update Remove Delete Create Deploy Release
    Import Export Retry Move Pin Bump Write Read Test Tests Build Builds Merge Review Fix Fixed
    Changes Change Everything Nothing Something Anything Everyone Someone Nobody Per Via Vs Etc
    Yes No Thanks Hi Hello Otherwise However Therefore Although Though Unless Whether Over Under
    Between Into Onto Upon About Above Below Around Through During Against Among Within Across
    Along Behind Beyond Except Like Unlike Than Once Twice Again Still Just Even Ever Very Really
    Usually Currently Recently Finally Actually Basically Sometimes Often Later Earlier Soon""".split()
)
# Common given names (PERSON evidence for a capitalised run that starts with one).
FIRST_NAMES = frozenset(
    """Aaron Abdul Abigail Adam Adrian Ahmed Aisha Alan Albert Alejandro Alex Alexander Alexandra
    Alice Alicia Amanda Amelia Amir Amy Ana Andre Andrea Andrew Angela Anna Anne Anthony Antonio
    Arjun Arthur Ashley Ben Benjamin Beatriz Bob Brandon Brian Bruno Camila Carla Carlos Carmen
    Carol Caroline Catherine Charles Charlie Charlotte Chen Chloe Chris Christian Christina
    Christopher Claire Claudia Daniel Daniela Dana David Deborah Diana Diego Dmitri Elena Eli
    Elizabeth Ella Emily Emma Eric Erik Eva Fatima Felipe Fernando Francesca Francisco Frank Gabriel
    Gabriela George Grace Hannah Hans Harry Hassan Helen Henry Hugo Ian Igor Isabel Isabella Ivan
    Jack Jacob James Jane Jason Javier Jennifer Jessica Jin Joan Joanna Joao João John Jonathan Jorge
    Jose José Joseph Joshua Juan Julia Julian Julie Justin Karen Karim Kate Katherine Kenji Kevin Kim
    Laura Lauren Leo Leon Liam Lily Linda Lisa Lucas Lucia Luis Luisa Luka Maria Mariana Mark Marco
    Marcus Maria Marta Martin Mary Mateo Matthew Max Maya Mei Mehmet Mia Michael Michelle Miguel Mike
    Mohammed Muhammad Nadia Natalia Nathan Nicholas Nicole Nina Noah Nora Olga Oliver Olivia Omar
    Oscar Pablo Patrick Paul Paula Pedro Peter Philip Pierre Priya Rachel Rafael Rahul Raj Ravi
    Rebecca Ricardo Richard Robert Rosa Ryan Sam Samantha Samuel Sara Sarah Sean Sebastian Sergei
    Sofia Sophia Sophie Stefan Stephanie Steve Steven Susan Takeshi Tanya Thomas Tim Timothy Tom
    Tomas Tyler Valentina Vera Victor Victoria Vikram Walter Wei William Xavier Yuki Yusuf Zara Zoe
    Zoran""".split()
)
