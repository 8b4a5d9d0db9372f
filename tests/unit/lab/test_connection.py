"""How a notebook finds its cluster: an explicit dir, then KAFKALITE_DIR, then the nearest
.kafkalite/ holding a cluster from the working directory up."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.cluster import ClusterError
from kafkalite.cluster.local import LocalProcessBackend
from kafkalite.lab.connection import ENV_BACKEND, ENV_DIR, cluster_backend, find_cluster_dir

pytestmark = pytest.mark.unit


def test_explicit_dir_wins_then_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "from-env"))
    assert find_cluster_dir(tmp_path / "mine") == tmp_path / "mine"
    assert find_cluster_dir(cwd=tmp_path) == tmp_path / "from-env"


def test_a_notebook_in_labs_finds_the_cluster_beside_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    (tmp_path / ".kafkalite").mkdir()
    (tmp_path / ".kafkalite" / "cluster.json").write_text("{}")
    (tmp_path / "labs").mkdir()
    assert find_cluster_dir(cwd=tmp_path / "labs") == tmp_path / ".kafkalite"


def test_with_no_cluster_anywhere_it_is_made_in_the_working_directory(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    (tmp_path / "labs" / ".kafkalite").mkdir(parents=True)  # empty: holds no cluster
    assert find_cluster_dir(cwd=tmp_path / "labs") == tmp_path / "labs" / ".kafkalite"


def test_the_backend_is_chosen_by_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(ENV_BACKEND, raising=False)
    assert isinstance(cluster_backend(), LocalProcessBackend)
    monkeypatch.setenv(ENV_BACKEND, "carrier-pigeon")
    with pytest.raises(ClusterError, match="unknown KAFKALITE_BACKEND='carrier-pigeon'"):
        cluster_backend()
