"""The MCP seam: the server (stdio and HTTP), its wire, and registering it with hosts."""
