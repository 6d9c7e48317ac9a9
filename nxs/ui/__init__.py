"""The local web dashboard (`nxs ui`): pages over the same operations as the CLI and MCP seams.

`nxs.ui.server` serves the page and the API, `nxs.ui.guard` decides who may talk to it; the page
itself (``index.html``, ``app.js``, ``style.css``) ships beside them. docs/ui.md describes it.
"""
