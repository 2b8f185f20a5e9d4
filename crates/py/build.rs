//! Embeds what the extension was built from, for the provenance of every
//! result (`irqsim._core.BUILD`): the git commit, whether tracked files
//! differed from it, and a digest of the source when the commit alone does
//! not name it.
//!
//! In order: `IRQSIM_GIT_COMMIT` (and `IRQSIM_GIT_DIRTY=1`) when a packager
//! sets them; else `git` run on the checkout this crate sits in, dirty when a
//! tracked file differs from the commit; else (an sdist, an archive, no git)
//! the commit `unknown` with the dirty flag unknown too. A git repository
//! that merely encloses an unpacked sdist is not taken for irqsim's own.
//!
//! The digest (`IRQSIM_SOURCE_DIGEST`, FNV-1a of every source file's path and
//! bytes) is made for a dirty tree and for one without a commit, so that two
//! such builds of different sources are told apart; it is empty when the
//! commit names the source. Every Rust source and manifest is watched, so an
//! edit of the code that computes the numbers reruns this script even before
//! it is staged (it recompiles this crate anyway). Python files are not: an
//! edit of one is noticed once staged or committed, since watching them would
//! recompile the extension after every Python edit (30 CPU-seconds).

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

/// The source files under `root` that make a build (the workspace manifest
/// and lock, pyproject, `crates/`, `python/irqsim/`), sorted; build outputs,
/// caches and hidden files left out.
fn sources(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "__pycache__" || name.ends_with(".so") || name.ends_with(".pyc") {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut out: Vec<PathBuf> = ["Cargo.toml", "Cargo.lock", "pyproject.toml"].iter().map(|f| root.join(f)).filter(|p| p.is_file()).collect();
    walk(&root.join("crates"), &mut out);
    walk(&root.join("python").join("irqsim"), &mut out);
    out.sort();
    out
}

/// FNV-1a (64 bits) of each file's path relative to `root` and its bytes, as 16 hex digits.
fn digest(root: &Path, files: &[PathBuf]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in files {
        feed(f.strip_prefix(root).unwrap_or(f).to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(f).unwrap_or_default());
        feed(&[0]);
    }
    format!("{h:016x}")
}

fn main() {
    println!("cargo:rerun-if-env-changed=IRQSIM_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=IRQSIM_GIT_DIRTY");
    // Read when the script runs (Cargo sets it), so that tests/test_build_provenance.py can run it on trees of its own.
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("Cargo sets CARGO_MANIFEST_DIR")).join("../..");
    let files = sources(&root);
    let python = root.join("python");
    for f in files.iter().filter(|f| !f.starts_with(&python)) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let (commit, dirty, source) = match std::env::var("IRQSIM_GIT_COMMIT") {
        Ok(c) if !c.is_empty() => {
            (c, std::env::var("IRQSIM_GIT_DIRTY").map_or("false", |d| if d == "1" { "true" } else { "false" }).to_string(), "environment")
        }
        _ => match from_git(&root) {
            Some((c, d)) => (c, d.to_string(), "git"),
            None => ("unknown".to_string(), "unknown".to_string(), "none"),
        },
    };
    let named = dirty == "false";
    println!("cargo:rustc-env=IRQSIM_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=IRQSIM_GIT_DIRTY={dirty}");
    println!("cargo:rustc-env=IRQSIM_GIT_SOURCE={source}");
    println!("cargo:rustc-env=IRQSIM_SOURCE_DIGEST={}", if named { String::new() } else { digest(&root, &files) });
}
