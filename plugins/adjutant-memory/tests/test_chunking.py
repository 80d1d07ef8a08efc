"""Chunks keep their line spans; identifiers are searchable by their words."""

from adjutant_memory._chunking import chunk_text, search_words


def test_paragraphs_are_chunks_with_their_line_spans() -> None:
    text = "\n".join(["a1", "a2", "", "", "b1"] + [f"c{i}" for i in range(20)] + ["", "d1"])
    chunks = chunk_text(text, max_lines=8)
    lines = text.splitlines()
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start - 1:chunk.end])
        assert chunk.end - chunk.start + 1 <= 8
    assert chunks[0].text.startswith("a1")
    assert "d1" in chunks[-1].text
    covered = {i for c in chunks for i in range(c.start, c.end + 1)}
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= covered


def test_blank_text_gives_no_chunk() -> None:
    assert chunk_text("\n  \n\n") == []


def test_identifiers_are_split_into_words() -> None:
    words = search_words("def parse_config(): return loadTOMLFile(HTTPServer)").split()
    assert {"parse", "config", "load", "toml", "file", "http", "server"} <= set(words)
