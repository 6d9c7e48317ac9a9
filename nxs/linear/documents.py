"""Every GraphQL document nxs can send to Linear, by operation name.

The client sends documents only by name from `DOCUMENTS`, so this table is the whole surface:
the tests validate each one (and each variable shape the builders make) against Linear's real
schema, and fail if any names a delete, archive or trash mutation. Filters and inputs travel
as variables, so the documents never change with the arguments. ``IssueRef`` and ``Issues``
also ask for ``organization { urlKey }``: memory links name the organisation.
"""

from __future__ import annotations

ISSUE_FIELDS = """
fragment IssueFields on Issue {
  id identifier title description priority priorityLabel url createdAt updatedAt
  state { id name type } team { id key name } project { id name } assignee { id name }
  labels(first: 50) { nodes { id name } }
}
"""
LABEL_FIELDS = """
fragment LabelFields on IssueLabel {
  id name color description isGroup team { id key name } parent { id name }
}
"""
COMMENT_FIELDS = """
fragment CommentFields on Comment { id body createdAt updatedAt parentId url user { id name } }
"""
PAGE = "pageInfo { hasNextPage endCursor }"
PROJECT = "id name description url startDate targetDate progress status { name type }"
TEAMS = "teams(first: 50) { nodes { id key name } }"


def _list(name: str, field: str, nodes: str, fragment: str = "") -> str:
    """A paginated top-level list: ``first``/``after`` in, the page info out."""
    return f"""
query {name}($first: Int!, $after: String) {{
  {field}(first: $first, after: $after) {{ nodes {{ {nodes} }} {PAGE} }}
}}
{fragment}"""


DOCUMENTS: dict[str, str] = {
    "Viewer": "query Viewer { viewer { id name organization { id name urlKey } } }",
    "Teams": _list("Teams", "teams", "id name key description"),
    "Projects": _list("Projects", "projects", f"{PROJECT} {TEAMS}"),
    "Issue": f"query Issue($id: String!) {{ issue(id: $id) {{ ...IssueFields }} }}{ISSUE_FIELDS}",
    "IssueRef": "query IssueRef($id: String!) { organization { urlKey } "
    "issue(id: $id) { id identifier title url team { id key name } } }",
    "Issues": f"""
query Issues($filter: IssueFilter, $first: Int!) {{
  organization {{ urlKey }}
  issues(filter: $filter, first: $first, orderBy: updatedAt) {{ nodes {{ ...IssueFields }} {PAGE} }}
}}{ISSUE_FIELDS}""",
    "ProjectDetail": f"""
query ProjectDetail($id: String!) {{
  project(id: $id) {{
    {PROJECT} lead {{ id name }} members(first: 100) {{ nodes {{ id name }} }} {TEAMS}
    labels(first: 100) {{ nodes {{ id name color }} }} issues(first: 250) {{ nodes {{ id }} {PAGE} }}
  }}
}}""",
    "TeamDetail": """
query TeamDetail($id: String!) {
  team(id: $id) {
    id name key description issueCount members(first: 100) { nodes { id name } }
    states(first: 100) { nodes { id name type position } }
    labels(first: 250) { nodes { id name color } }
  }
}""",
    "Labels": _list("Labels", "issueLabels", "...LabelFields", LABEL_FIELDS),
    "ProjectLabels": "query ProjectLabels($id: String!) { project(id: $id) "
    "{ id name labels(first: 250) { nodes { id name color description } } } }",
    "Statuses": "query Statuses($id: String!) { team(id: $id) "
    "{ id key name states(first: 100) { nodes { id name type position color } } } }",
    "Users": _list("Users", "users", "id name displayName email active"),
    "Comments": f"""
query Comments($id: String!, $first: Int!, $after: String) {{
  issue(id: $id) {{
    id identifier title url
    comments(first: $first, after: $after, orderBy: createdAt) {{
      nodes {{ ...CommentFields }} {PAGE}
    }}
  }}
}}{COMMENT_FIELDS}""",
    "IssueCreate": "mutation IssueCreate($input: IssueCreateInput!) "
    "{ issueCreate(input: $input) { success issue { ...IssueFields } } }" + ISSUE_FIELDS,
    "IssueUpdate": "mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) "
    "{ issueUpdate(id: $id, input: $input) { success issue { ...IssueFields } } }" + ISSUE_FIELDS,
    "ProjectCreate": "mutation ProjectCreate($input: ProjectCreateInput!) "
    f"{{ projectCreate(input: $input) {{ success project {{ id name description url {TEAMS} }} }} }}",
    "LabelCreate": "mutation LabelCreate($input: IssueLabelCreateInput!) "
    "{ issueLabelCreate(input: $input) { success issueLabel { ...LabelFields } } }" + LABEL_FIELDS,
    "LabelUpdate": "mutation LabelUpdate($id: String!, $input: IssueLabelUpdateInput!) "
    "{ issueLabelUpdate(id: $id, input: $input) { success issueLabel { ...LabelFields } } }"
    + LABEL_FIELDS,
    "CommentCreate": "mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: "
    "$input) { success comment { ...CommentFields issue { id identifier } } } }" + COMMENT_FIELDS,
}

MUTATIONS = frozenset(n for n, doc in DOCUMENTS.items() if doc.lstrip().startswith("mutation"))

__all__ = ["DOCUMENTS", "MUTATIONS"]
