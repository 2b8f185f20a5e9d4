"""The commit embedded at build time (crates/py/build.rs), in every state a
source tree can be in: a clean or dirty git checkout, an archive without
.git, an archive unpacked inside some other repository, a machine without
git, and a packager's environment variables. The real build script is
compiled once with rustc and run as Cargo runs it, on trees made here."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD_RS = Path(__file__).resolve().parents[1] / "crates" / "py" / "build.rs"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]

pytestmark = pytest.mark.skipif(shutil.which("rustc") is None or shutil.which("git") is None, reason="needs rustc and git (the build's own tools)")


@pytest.fixture(scope="module")
def build_script(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("build-script") / "build-script"
    subprocess.run(["rustc", "--edition", "2024", "-O", "-o", str(exe), str(BUILD_RS)], check=True, capture_output=True, timeout=300)
    return exe


def tree(root: Path) -> Path:
    """A source tree shaped like irqsim's: ``root/crates/py`` holds the manifest."""
    (root / "crates" / "py").mkdir(parents=True)
    (root / "crates" / "py" / "Cargo.toml").write_text("[package]\n")
    (root / "README.md").write_text("irqsim\n")
    return root


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(root: Path) -> str:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return git(root, "rev-parse", "HEAD")


def run(script: Path, root: Path, **env: str) -> dict[str, str]:
    """The ``cargo:rustc-env`` settings the script prints for the tree at ``root``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("IRQSIM_GIT_", "GIT_"))}
    full = {**base, "CARGO_MANIFEST_DIR": str(root / "crates" / "py"), "GIT_CEILING_DIRECTORIES": str(root.parent), **env}
    out = subprocess.run([str(script)], check=True, capture_output=True, text=True, env=full).stdout
    return dict(line.removeprefix("cargo:rustc-env=").split("=", 1) for line in out.splitlines() if line.startswith("cargo:rustc-env="))


def embedded(commit: str, dirty: str, source: str, digest: str = "") -> dict[str, str]:
    return {"IRQSIM_GIT_COMMIT": commit, "IRQSIM_GIT_DIRTY": dirty, "IRQSIM_GIT_SOURCE": source, "IRQSIM_SOURCE_DIGEST": digest}


def digest_of(settings: dict[str, str]) -> str:
    d = settings["IRQSIM_SOURCE_DIGEST"]
    assert len(d) == 16 and int(d, 16) >= 0
    return d


def test_clean_checkout(build_script, tmp_path):
    root = tree(tmp_path / "src")
    head = commit(root)
    assert run(build_script, root) == embedded(head, "false", "git")


def test_dirty_checkout(build_script, tmp_path):
    """A changed tracked file makes the tree dirty; an untracked file does not."""
    root = tree(tmp_path / "src")
    head = commit(root)
    (root / "notes.txt").write_text("untracked\n")
    assert run(build_script, root) == embedded(head, "false", "git")
    (root / "README.md").write_text("irqsim, changed\n")
    settings = run(build_script, root)
    assert settings == embedded(head, "true", "git", digest_of(settings))


def test_two_dirty_states_of_one_commit_differ(build_script, tmp_path):
    """Builds of one commit with different uncommitted edits are told apart by
    their source digest (a sweep would otherwise resume across them)."""
    root = tree(tmp_path / "src")
    commit(root)
    source = root / "crates" / "py" / "lib.rs"
    source.write_text("fn a() {}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    source.write_text("fn a() { 1; }\n")
    first = digest_of(run(build_script, root))
    source.write_text("fn a() { 2; }\n")
    assert digest_of(run(build_script, root)) != first
    source.write_text("fn a() { 1; }\n")
    assert digest_of(run(build_script, root)) == first


def test_every_rust_source_is_watched(build_script, tmp_path):
    """Cargo reruns the script when a Rust source or manifest changes, staged
    or not, so an unstaged edit of the core cannot leave the dirty flag stale;
    Python files are noticed through the index (watching them would recompile
    the extension after every Python edit)."""
    root = tree(tmp_path / "src")
    (root / "python" / "irqsim").mkdir(parents=True)
    (root / "python" / "irqsim" / "api.py").write_text("x = 1\n")
    (root / "crates" / "py" / "src").mkdir()
    (root / "crates" / "py" / "src" / "lib.rs").write_text("fn f() {}\n")
    (root / "python" / "irqsim" / "__pycache__").mkdir()
    (root / "python" / "irqsim" / "__pycache__" / "api.pyc").write_bytes(b"\0")
    commit(root)
    out = subprocess.run([str(build_script)], check=True, capture_output=True, text=True, env={**os.environ, "CARGO_MANIFEST_DIR": str(root / "crates" / "py"), "GIT_CEILING_DIRECTORIES": str(root.parent)}).stdout
    watched = {Path(line.removeprefix("cargo:rerun-if-changed=")).resolve() for line in out.splitlines() if line.startswith("cargo:rerun-if-changed=")}
    assert {(root / "crates" / "py" / "Cargo.toml").resolve(), (root / "crates" / "py" / "src" / "lib.rs").resolve()} <= watched
    assert not any("python" in p.relative_to(root.resolve()).parts for p in watched if root.resolve() in p.parents)


def test_archive_without_git(build_script, tmp_path):
    """Without a commit the digest names the source: the same files give the
    same digest wherever they are unpacked, a changed file another."""
    root = tree(tmp_path / "src")
    settings = run(build_script, root)
    assert settings == embedded("unknown", "unknown", "none", digest_of(settings))
    assert digest_of(run(build_script, tree(tmp_path / "elsewhere"))) == digest_of(settings)
    (root / "crates" / "py" / "Cargo.toml").write_text("[package]\nname = 'changed'\n")
    assert digest_of(run(build_script, root)) != digest_of(settings)


def test_archive_unpacked_inside_another_repository(build_script, tmp_path):
    """The enclosing repository's commit is not irqsim's."""
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "other.txt").write_text("another project\n")
    commit(outer)
    root = tree(outer / "vendor" / "irqsim-0.1.0")
    settings = run(build_script, root, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert settings == embedded("unknown", "unknown", "none", digest_of(settings))


def test_no_git_installed(build_script, tmp_path):
    root = tree(tmp_path / "src")
    commit(root)
    empty = tmp_path / "bin"
    empty.mkdir()
    settings = run(build_script, root, PATH=str(empty))
    assert settings == embedded("unknown", "unknown", "none", digest_of(settings))


def test_packager_sets_the_commit(build_script, tmp_path):
    """The environment wins over git; the dirty flag is true only for 1."""
    root = tree(tmp_path / "src")
    commit(root)
    settings = run(build_script, root, IRQSIM_GIT_COMMIT="0123abc", IRQSIM_GIT_DIRTY="1")
    assert settings == embedded("0123abc", "true", "environment", digest_of(settings))
    assert run(build_script, root, IRQSIM_GIT_COMMIT="0123abc") == embedded("0123abc", "false", "environment")
