//! Embeds the source's git commit in the extension, for the provenance of
//! every result (`irqsim._core.BUILD`).
//!
//! In order: `IRQSIM_GIT_COMMIT` (and `IRQSIM_GIT_DIRTY=1`) when a packager
//! sets them; else `git` run on the checkout this crate sits in, dirty when a
//! tracked file differs from the commit; else (an sdist, an archive, no git)
//! the commit `unknown` with the dirty flag unknown too. A git repository
//! that merely encloses an unpacked sdist is not taken for irqsim's own.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `(commit, dirty)` of the checkout at `root`, if it is one.
fn from_git(root: &Path) -> Option<(String, bool)> {
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != root.canonicalize().ok()? {
        return None;
    }
    // Rerun when HEAD moves (a commit, a checkout) or the index changes.
    let mut watch = vec!["HEAD".to_string(), "index".into(), "packed-refs".into()];
    watch.extend(git(root, &["symbolic-ref", "-q", "HEAD"]));
    for name in watch {
        if let Some(p) = git(root, &["rev-parse", "--path-format=absolute", "--git-path", &name]).filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let commit = git(root, &["rev-parse", "HEAD"])?;
    let dirty = !git(root, &["status", "--porcelain", "--untracked-files=no"])?.is_empty();
    Some((commit, dirty))
}

fn main() {
    println!("cargo:rerun-if-env-changed=IRQSIM_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=IRQSIM_GIT_DIRTY");
    // Read when the script runs (Cargo sets it), so that tests/test_build_provenance.py can run it on trees of its own.
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("Cargo sets CARGO_MANIFEST_DIR")).join("../..");
    let (commit, dirty, source) = match std::env::var("IRQSIM_GIT_COMMIT") {
        Ok(c) if !c.is_empty() => {
            (c, std::env::var("IRQSIM_GIT_DIRTY").map_or("false", |d| if d == "1" { "true" } else { "false" }).to_string(), "environment")
        }
        _ => match from_git(&root) {
            Some((c, d)) => (c, d.to_string(), "git"),
            None => ("unknown".to_string(), "unknown".to_string(), "none"),
        },
    };
    println!("cargo:rustc-env=IRQSIM_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=IRQSIM_GIT_DIRTY={dirty}");
    println!("cargo:rustc-env=IRQSIM_GIT_SOURCE={source}");
}
