"""A tuned memory policy inside the agent frameworks people use (issue 28).

Each adapter is an optional extra and imports its framework; ``import memorykit`` imports none
of them:

* ``memorykit.adapters.openai_agents`` (``pip install 'memorykit[agents]'``): the OpenAI Agents
  SDK, through its ``Session`` protocol and ``session_input_callback``;
* ``memorykit.adapters.langgraph`` (``pip install 'memorykit[langgraph]'``): LangGraph's prebuilt
  agents, through their ``pre_model_hook``.

Both take any ``ContextPolicy`` and a budget, or what ``memorykit.load_policy`` rebuilt from
``python -m memorykit tune --export``, and give the model that policy's context.
"""
