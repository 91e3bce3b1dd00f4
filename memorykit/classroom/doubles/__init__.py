"""Test doubles: a loopback OpenAI server, stores that fail on cue, recorded model replies."""
