"""The entity-graph evaluation (issue 21): labelled project memories and questions by hop count.

Five halves, each one made-up company's memories (``tune.json``, ``heldout.json``,
``heldout2.json``, written for issue 34 in other wordings: passives, lists, pronouns, and
``heldout3.json`` and ``heldout4.json``, written without reading the extractor, see
README-heldout3.md and README-heldout4.md): every memory
lists the entities it names (canonical name, type) and the relations one of its sentences
states; ``aliases`` maps the other spellings the memories use to the canonical names. Each half
has questions of 1, 2 and 3 hops and unanswerable ones (``answers: null``). The extractor and
the query were tuned on ``tune.json`` only. `python -m bench.graph` scores every half;
`python -m bench.graph.realistic` counts relations on bench/project_memory's realistic store and
scores the hand-annotated ``precision_sample.json``; `python -m bench.graph.speed` times
`graph_query` at 10,000 memories. See docs/graph.md ("Issue 34") and docs/benchmarks.md.
"""
