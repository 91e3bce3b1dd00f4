"""Long-term memory: D3's four architectures and D4's memory service.

* ``episodic``: episodes consolidated from short-term overflow, scored by
  keyword overlap and recency (architecture B); ``episode_scores`` is the formula.
* ``semantic``: sentences embedded in a vector store, recalled by cosine (C).
* ``reflection``: rules a critic draws from mistakes, injected as instructions (D).
* ``architectures``: A-D (and the attention window) as ``ContextPolicy``s.
* ``vectorstore``: exact numpy cosine search; the same protocol on Qdrant.
* ``service``: working memory per session + a long-term store (D4).
* ``search_tool``: the service's recall offered to the agent as a ``search`` tool (D4).
* ``minilm``: all-MiniLM-L6-v2 offline in numpy (no PyTorch), from the packaged weights.
* ``sentence_embedder``: the same model through sentence-transformers (the reference; PyTorch).

D3's benchmark over A-D is ``memorykit.classroom.replays.recall_benchmark`` (its scenarios:
``memorykit.classroom.scenarios.probes``).

Every memory item keeps the ids of the messages it came from, so recall is
scored against the evidence even when the item is a summary or a rule.

Taught in ``notebooks/10_architectures.ipynb``.

Import each name from the module that defines it; the ones a user needs first are also
in the front door, ``import memorykit`` (``docs/API.md``).
"""
