"""The Python loop of README.md runs as written, against the mock provider."""
import re

import quire


def test_readme_python_loop(mock, repo, monkeypatch):
    text = open(repo + "/README.md", encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    code = blocks[0]
    assert len(code.strip().splitlines()) <= 17  # the import, BASE_URL and a 15-line loop
    monkeypatch.setenv("QUIRE_BASE_URL", mock.base_url)
    calls = []

    def run_tool(call):
        calls.append(call)
        return "src/main.c\nsrc/util.c"

    g = {"run_tool": run_tool, "__name__": "readme"}
    exec(compile(code, "README.md", "exec"), g)
    s = g["s"]
    assert isinstance(s, quire.Session)
    assert [c["input"] for c in calls] == [{"path": "src"}]
    msgs = s.transcript()["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert "src/main.c" in msgs[-1]["content"][0]["text"]
    assert len(mock.requests) == 2 and mock.requests[0][0] == "/v1/messages"
