"""The Linear integration: `linear_query` and `linear_mutate` over Linear's GraphQL API.

Modules: `ops` (the two operations), `actions` (the action tables and dispatcher), `reads` and
`writes` (the actions), `shape` (answers' shapes), `documents` (every GraphQL document sent),
`client` (httpx), `connections` (keys per organisation), `session` (one call's state),
`cli` (`nxs linear connect|disconnect|workspaces`). Nothing here imports httpx at module level.
"""
