"""What the tests share: fake providers and servers on 127.0.0.1, the fixture and real
corpora, generated corpora, hypothesis strategies. Imported one way only:
``from tests.support.<module> import …`` (tests/ is a package, pyproject.toml)."""
