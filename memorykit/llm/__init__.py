"""Language models in the loop: chat, summaries, critics and embeddings behind an API.

Taught in ``notebooks/11_llm_in_the_loop.ipynb`` (a later notebook). Every
earlier notebook runs offline, and the offline components stay the default
everywhere: ``ExtractiveSummarizer``, ``LexicalHashingEmbedder`` and, here,
``ScriptedChatModel`` and ``ScriptedCritic`` -- deterministic, no network, and
named so that nobody mistakes them for a language model. The ``OpenAI*``
classes fit the same protocols (``ChatModel``, ``Summarizer``, ``Critic``,
``Embedder``) and talk to any OpenAI-compatible endpoint; ``configured()``
tells a notebook whether one is available without building a client.

``memorykit.llm.backend`` chooses the components that drive a memory: the ``OpenAI*``
ones when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, the offline ones otherwise
(``choose_backend``), saying which (``Backend.kind``) and never printing the key.

``memorykit.llm.local_server.LocalModelServer`` runs a real (small) model on this machine:
SmolLM2-135M-Instruct served by llama.cpp over the same API on 127.0.0.1 (``./run model``);
without ``OPENAI_MODEL``, ``choose_backend`` asks such a server which model it serves. It is
not imported here, so ``python -m memorykit.llm.local_server`` runs it cleanly.

``memorykit.classroom.doubles.openai_server.FakeOpenAIServer`` is a loopback OpenAI-compatible
server (127.0.0.1 only) that the tests, and notebooks without an API key, use
to exercise the real ``openai`` client: timeouts, retries, HTTP errors and
malformed replies included.

The ``openai`` package is optional (``pip install 'memorykit[llm]'``); it is
imported only when a client is built or a request is made.

Import each name from the module that defines it; the ones a user needs first are also
in the front door, ``import memorykit`` (``docs/API.md``).
"""
