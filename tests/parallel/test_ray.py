"""--ray: a local Ray instance (2 CPUs) gives the bytes of the local run.

One Ray instance for the module (start-up is the cost); skipped, saying why, without
the [ray] extra. CI installs it and runs these again (`pytest -m ray`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scale_corpus import build_corpus, invoke, same_files, same_run

ray = pytest.importorskip(
    "ray", reason="Ray is not installed: pip install -e '.[ray]' runs these tests"
)
pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install -e '.[ray]'")

pytestmark = [
    pytest.mark.ray,
    # Ray Data's own use of its deprecated settings, not tsum's
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    # tsum attaches to an instance that is already up and leaves it running
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("ray"))


def test_sweep_json_and_table_match_the_local_run(corpus: Path) -> None:
    grid = [
        "--ratio",
        "0.5,0.75",
        "--max-context-tokens",
        "2000,32000",
        "--measure",
        "cumulative,current",
    ]
    for output in (["--json"], []):
        local = invoke("sweep", str(corpus), *grid, *output, "--workers", "1")
        same_run(local, invoke("sweep", str(corpus), *grid, *output, "--ray"))
    assert local.exit_code == 3 and "error: " in local.stderr  # malformed fixtures, both runs


def test_dry_run_report_and_out_match_the_local_run(corpus: Path, tmp_path: Path) -> None:
    args = ("replay", str(corpus), "--dry-run", "--max-context-tokens", "4000")
    same_run(invoke(*args, "--workers", "1"), invoke(*args, "--ray"))
    local, distributed = tmp_path / "local", tmp_path / "ray"
    same_run(
        invoke(*args, "--out", str(local), "--workers", "1"),
        invoke(*args, "--out", str(distributed), "--ray"),
    )
    same_files(local, distributed)
    assert (local / "decisions.jsonl").stat().st_size > 0


def test_inspect_matches_the_local_run(corpus: Path) -> None:
    same_run(
        invoke("inspect", str(corpus), "--json", "--workers", "1"),
        invoke("inspect", str(corpus), "--json", "--ray"),
    )


def test_a_folder_url_is_listed_and_read_by_ray(corpus: Path) -> None:
    # file:// stands for s3:// and friends: listed with pyarrow.fs, read by Ray, and each
    # file keeps the URL it was given as (no table of every object shipped to workers)
    local = invoke("sweep", str(corpus), "--json", "--workers", "1")
    remote = invoke("sweep", corpus.as_uri(), "--json", "--ray")
    assert remote.exit_code == local.exit_code == 3
    mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
    assert [e.replace(str(corpus), corpus.as_uri()) for e in mine.pop("errors")] == theirs.pop(
        "errors"
    )
    assert mine == theirs
    assert f"warning: {corpus.as_uri()}/b/notes.json: not a transcript" in remote.stderr
