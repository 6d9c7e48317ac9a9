"""The word lists entity extraction reads (`nxm.graph.extract`): plain data, edited by hand.

Case-sensitive; `TECH`, `ORGS` and `PLACES` map every spelling to one canonical name. After a
change, bump `nxm.graph.extract.EXTRACTOR_VERSION` so stored extractions are redone.
"""

from __future__ import annotations


def _lexicon(text: str) -> dict[str, str]:
    """Parse ``Canonical=alias,alias; Other`` into {surface form: canonical}."""
    out: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        name, _, aliases = entry.partition("=")
        out.update((a.strip(), name.strip()) for a in [name, *aliases.split(",")] if a.strip())
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
Neo4j; Pinecone; Weaviate; Qdrant; Chroma; OpenAI API; Claude API; Anthropic API; Ollama; LangChain;
unittest; tox; nox; Black; isort; flake8; pylint; uv; pipenv; conda;
Vector; Fluentd; Logstash; Kibana; Jaeger; Zipkin; Istio; Linkerd; Envoy; Argo CD=ArgoCD,Argo; Flux;
Kustomize; Packer; Vagrant; Chef; Puppet; SQS; SNS; AWS Lambda; CloudFront; Route 53; RDS;
Cloud Run; Firestore; Spanner; Memorystore; Azure DevOps; TeamCity; Travis CI;
SonarQube; Snyk; Dependabot; Renovate; k6; Locust; Gatling; JMeter; Postman; Swagger; Protobuf;
Avro; Thrift; NATS; Pulsar; ZeroMQ; Flink; Hadoop; Hive; Presto; Trino; Redshift; Amazon Athena;
Databricks Runtime; MLflow; Kubeflow; Dask; Polars; Jupyter; Streamlit; Gradio; Hugging Face=HuggingFace;
Stripe Connect; Braintree; PayPal; Plaid; Mailgun; Postmark; Intercom; Zendesk; HubSpot; Salesforce CRM;
Bitrise; Fastlane; TestFlight; Expo EAS; Xamarin; Ionic; Capacitor; SwiftUI; Jetpack Compose; Kotlin Coroutines;
Actix; Axum; Tokio; Phoenix Framework; Ecto; Sequelize; TypeORM; Drizzle; Knex;
Mongoose; Hibernate; Flyway; Liquibase; Celery Beat; RQ; Dramatiq; BullMQ; Resque; Quartz
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
Japan; China; Korea; Australia; New Zealand; Israel; Nigeria; Kenya; Europe; Asia; Africa;
Frankfurt=Frankfurt am Main; Cologne=Köln; Stuttgart; Düsseldorf=Dusseldorf; Leipzig; Dresden; Nuremberg=Nürnberg;
Bremen; Hanover=Hannover; Utrecht; The Hague; Eindhoven; Antwerp; Ghent; Luxembourg; Basel; Bern; Lausanne;
Graz; Salzburg; Brno; Bratislava; Ljubljana; Zagreb; Belgrade; Sarajevo; Skopje; Tirana; Thessaloniki;
Izmir; Ankara; Kyiv=Kiev; Lviv; Kharkiv; Odesa=Odessa; Minsk; Moscow; Saint Petersburg=St Petersburg;
Tbilisi; Yerevan; Baku; Almaty; Tashkent; Seville=Sevilla; Málaga=Malaga; Bilbao; Zaragoza; Palma; Granada;
Coimbra; Braga; Faro; Naples; Turin; Bologna; Venice; Genoa; Palermo; Marseille; Toulouse; Nantes;
Bordeaux; Lille; Strasbourg; Montpellier; Rennes; Grenoble; Glasgow; Birmingham; Leeds; Liverpool;
Bristol; Cambridge; Oxford; Cardiff; Belfast; Newcastle; Nottingham; Sheffield; Brighton; Cork; Galway;
Limerick; Reykjavik; Bergen; Trondheim; Gothenburg; Malmö=Malmo; Uppsala; Aarhus; Odense; Tampere; Turku;
Gdańsk=Gdansk; Wrocław=Wroclaw; Poznań=Poznan; Łódź=Lodz; Cluj-Napoca=Cluj; Iasi; Timisoara; Casablanca;
Marrakesh; Tunis; Algiers; Abuja; Addis Ababa; Kigali; Kampala; Dar es Salaam; Durban; Riyadh; Jeddah;
Doha; Abu Dhabi; Amman; Beirut; Tehran; Karachi; Lahore; Islamabad; Dhaka; Kolkata; Chennai; Ahmedabad;
Colombo; Kathmandu; Bangkok; Hanoi; Ho Chi Minh City; Kuala Lumpur; Jakarta; Manila; Guangzhou; Hangzhou;
Chengdu; Nanjing; Wuhan; Kyoto; Fukuoka; Nagoya; Sapporo; Busan; Perth; Brisbane; Adelaide; Canberra;
Wellington; Christchurch; Ottawa; Calgary; Edmonton; Quebec City; Halifax; Winnipeg; Philadelphia;
Washington DC=Washington D.C.; Dallas; Houston; San Diego; San Jose; Pittsburgh; Detroit; Minneapolis;
Nashville; Raleigh; Salt Lake City; Las Vegas; Baltimore; Cleveland; Cincinnati; Kansas City; St. Louis;
New Orleans; Oakland; Sacramento; Brooklyn; Montevideo; Quito; Caracas; Guadalajara; Monterrey;
Medellín=Medellin; Curitiba; Porto Alegre; Belo Horizonte; Recife; Florianópolis=Florianopolis; Rosario;
La Paz; Asunción=Asuncion; San Juan; Havana; Panama City; Guatemala City; Sweden; Norway; Denmark; Finland;
Estonia; Latvia; Lithuania; Czechia=Czech Republic; Slovakia; Hungary; Romania; Bulgaria; Greece; Turkey;
Ukraine; Croatia; Serbia; Slovenia; Iceland; Egypt; Morocco; South Africa; Ethiopia; Rwanda; Uganda;
Tanzania; Senegal; United Arab Emirates=UAE; Saudi Arabia; Qatar; Pakistan; Bangladesh; Sri Lanka; Nepal;
Vietnam; Thailand; Malaysia; Indonesia; Philippines; Taiwan; South Korea; Peru; Uruguay; Paraguay;
Ecuador; Venezuela; Bolivia; Costa Rica; Cuba; Puerto Rico; Russia; Scotland; Wales; England;
Northern Ireland; Bavaria; Catalonia; California; Texas; Ontario; Quebec; British Columbia; Scandinavia;
Latin America; North America; South America; Middle East; Southeast Asia; EMEA; APAC; LATAM; Oceania
""")
ORG_SUFFIXES = frozenset(
    "Corp Corporation Inc Ltd LLC GmbH AG SA BV Labs Technologies Software Systems Group "
    "Foundation University Institute Bank Agency Studio Studios Partners Co Company Holdings "
    "Ventures Consulting Solutions".split()
)
# Last parts that make a kebab-case word a component's name ("ledger-svc", "payouts-worker");
# another kebab-case word is a name only where a relation names it.
COMPONENT_SUFFIXES = frozenset(
    "svc service services srv api apis worker workers gateway gw bot web app ui frontend backend "
    "etl elt bff sync db cli sdk proxy engine server indexer pipeline job jobs cron admin portal "
    "queue cache store hub agent daemon runner scheduler router monitor exporter importer lib "
    "client core console dashboard registry broker consumer producer loader collector processor "
    "controller operator relay notifier mailer renderer builder tracker ingest ingester".split()
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
# Verbs that open a note ("Traced …", "Ping …"): a sentence's first word that is one of these
# is not the first word of a name.
SENTENCE_VERBS = frozenset(
    """Traced Found Fixed Seen Saw Noticed Confirmed Checked Verified Tried Moved Added Removed
    Rolled Bumped Upgraded Downgraded Switched Reverted Restarted Deployed Merged Opened Closed
    Filed Paired Met Spoke Talked Discussed Agreed Decided Learned Hit Ran Got Made Took Gave Told
    Sent Paged Ping Tell Call Send Email Message Page Escalate Wait Drain Restart Rotate Rerun
    Rebuild Reindex Backfill Tag Cut Ship Rollback Roll Flip Toggle Enable Disable Turn Grant
    Revoke Open File Raise Book Schedule Skip Mute Silence Handle Watch Poll Query Scan Sync Load
    Seed Migrate Upgrade Downgrade Install Uninstall Configure Mark Label Assign Reassign Hand
    Loop Invite Remind Announce Document Record Log Track Monitor Alert Notify Warn Confirm Verify
    Ensure Prefer Bumping Running Using Adding Deploying Testing Debugging Investigated Debugged
    Reproduced Repro'd Benchmarked Measured Profiled Tuned Patched Pinned Unpinned Dropped
    Deleted Renamed Split Joined Asked Pinged Emailed Messaged Contacted Escalated Careful
    Beware Gotcha Flaky Heads-up Reminder Context Background Outcome Summary Decision""".split()
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
    Zoran Aarav Abebe Ada Adaeze Adebayo Adriana Agnieszka Ahmet Aiko Aino Akira Aleksandra Ali
    Amara Amina Anders Andrei Andrzej Anil Anjali Ann Antoine Aoife Arnav Asha Astrid Ayumi Baptiste
    Bartosz Bilal Björn Bjorn Bogdan Camille Cem Chidi Chinedu Chloé Ciara Colm Cristina Dag Dagny
    Darius Deepak Dimitri Dong Duc Eduardo Efe Eilidh Eitan Emeka Emre Enzo Erin Esra Esther Ewa
    Fabian Farah Farid Fenna Finn Florian Freya Giulia Giuseppe Goran Gustavo Hamza Hana Haruto
    Helga Hina Hiroshi Hoang Hyun Ibrahim Ida Ilse Ingrid Irina Isaac Isak Jakub Jan Jasmine Javad
    Jens Ji Jia Jiho Joaquín Joaquin Johan Jonah Jorge Jun Kai Kaito Kamal Karin Karl Kasia Katarzyna
    Kemal Kemi Kenta Khalid Kiran Klaus Kofi Krzysztof Lara Lars Layla Leila Lena Liam Lin Lina Linh
    Lorenzo Lukas Lukasz Magnus Mahmoud Malik Manuel Marek Margot Mariam Marie Marius Matteo Mattias
    Mehdi Meera Mika Mikael Milan Min Ming Miriam Mohamed Naledi Naoko Naveen Nikhil Nikolai Nils
    Ngozi Nnamdi Noor Obinna Oksana Ola Oleksandr Olumide Oren Osman Pavel Petra Pia Piotr Pooja
    Quentin Rania Rashid Reza Riya Rohan Ruben Rui Ryo Saanvi Sakura Salma Sana Sanjay Santiago
    Sasha Sato Selin Seo Shira Shreya Sigrid Silvia Simon Sina Siobhan Sipho Siti Soo Sora Sunil
    Sven Tamar Tariq Tendai Thabo Thandiwe Theo Thi Tobias Tomás Tuan Ugo Uma Valentin Vasile Viktor
    Vivek Wanjiru Wojciech Xin Yaw Yara Yasmin Yerlan Yosef Yu Yuna Yuto Zain Zanele Zhang Zhen
    Ziad Zofia""".split()
)
