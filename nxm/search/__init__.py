"""Search: ranking, currency, snippets, the words and times a query names."""
