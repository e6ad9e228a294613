"""What an agent pays for an answer: the characters and tokens of the default `search_wiki` MCP
answer (structured content plus its text), of the same search over HTTP in each format, and
how many hits a `get_context` block holds per style at each budget.

Runs against a sidecar that is already serving (`groundwiki serve`), over its HTTP API and its
MCP endpoint with the official SDK client:

    groundwiki serve -f ../shared/vaults/obsidian-hub/mkdocs.yml --port 8799 &
    python bench/answer_size.py --url http://127.0.0.1:8799

Tokens are word pieces of the embedding model's tokenizer (the count the API reports).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import urllib.parse
import urllib.request
from typing import Any

QUESTIONS = (
    "how do I use dataview queries",
    "sync my vault between phone and laptop",
    "what plugins help with daily notes",
    "publish notes as a website",
    "keyboard shortcuts for moving lines",
)


def _get(url: str, token: str) -> tuple[str, int]:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}"} if token else {}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read().decode("utf-8"), int(response.headers["X-Groundwiki-Tokens"])


async def _mcp(url: str, questions: tuple[str, ...]) -> list[dict[str, Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    found = []
    async with (
        streamable_http_client(f"{url}/mcp/") as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for question in questions:
            result = await session.call_tool("search_wiki", {"query": question})
            structured = json.dumps(result.structured_content, ensure_ascii=False)
            text = result.content[0].text
            found.append(
                {
                    "question": question,
                    "hits": [hit["key"] for hit in result.structured_content["hits"]],
                    "structured_chars": len(structured),
                    "text_chars": len(text),
                    "chars": len(structured) + len(text),
                    "tokens": (result.meta or {}).get("groundwiki/tokens"),
                }
            )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--token", default="")
    parser.add_argument("--budgets", default="500,1000,2000,4000")
    args = parser.parse_args()

    mcp = asyncio.run(_mcp(args.url, QUESTIONS))
    print("MCP search_wiki, default arguments (structured content + text):")
    for row in mcp:
        print(
            f"  {row['chars']:6d} chars ({row['structured_chars']} structured + "
            f"{row['text_chars']} text), {row['tokens']} tokens, {len(row['hits'])} hits: "
            f"{row['question']!r}"
        )
    print(
        f"  median {statistics.median(r['chars'] for r in mcp):.0f} chars, max "
        f"{max(r['chars'] for r in mcp)}"
    )

    print("HTTP GET /search, each format (chars / tokens), and the hits agree with MCP:")
    for row in mcp:
        sizes = []
        for form in ("json", "compact", "toon"):
            query = urllib.parse.urlencode({"q": row["question"], "format": form})
            body, cost = _get(f"{args.url}/search?{query}", args.token)
            sizes.append(f"{form} {len(body)}/{cost}")
            if form == "json":
                answer = json.loads(body)
                keys = [hit["key"] for hit in answer["hits"]]
                vectors = answer["freshness"]["vectors"]["pages"]
        # While page vectors are still being computed the semantic lane moves between two
        # calls; with every vector in, the two lists are the same.
        same = "same hits" if keys == row["hits"] else f"other order (page vectors {vectors:.0%})"
        # The MCP answer before issue 30: the full answer as structured content, and again as
        # indented JSON text.
        before = len(json.dumps(answer, ensure_ascii=False)) + len(
            json.dumps(answer, indent=2, ensure_ascii=False)
        )
        print(f"  {', '.join(sizes)}, {same}; old MCP answer {before} chars: {row['question']!r}")

    print("GET /context, hits held per style (limit 50):")
    for budget in (int(b) for b in args.budgets.split(",")):
        held: dict[str, list[int]] = {"markdown": [], "toon": [], "json": []}
        for question in QUESTIONS:
            for style in held:
                query = urllib.parse.urlencode(
                    {"q": question, "budget": budget, "style": style, "limit": 50}
                )
                body, _ = _get(f"{args.url}/context?{query}", args.token)
                answer = json.loads(body)
                assert answer["tokens"] <= budget, (question, style, answer["tokens"])
                held[style].append(len(answer["hits"]))
        toon, plain = sum(held["toon"]), sum(held["json"])
        print(
            f"  budget {budget:5d}: markdown {sum(held['markdown'])}, toon {toon}, json {plain} "
            f"hits over {len(QUESTIONS)} questions; toon/json {toon / max(plain, 1):.2f}"
        )


if __name__ == "__main__":
    main()
