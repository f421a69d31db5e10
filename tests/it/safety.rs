//! Nothing a user keeps is lost: output folders that are not results folders,
//! the folder of the scenario or of a merge's shards, results of another
//! scenario file, and damaged shards are refused, through the real binary.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{sim, stderr};
use tempfile::TempDir;

/// The names in a folder, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// A copy of the small fixture in `dir`, under `file`, renamed `name`.
fn small_copy(dir: &Path, file: &str, name: &str) -> PathBuf {
    let text = fs::read_to_string("tests/fixtures/small.toml").unwrap();
    let path = dir.join(file);
    fs::write(
        &path,
        text.replacen("name = \"small\"", &format!("name = \"{name}\""), 1),
    )
    .unwrap();
    path
}

#[test]
fn a_folder_that_is_not_a_results_folder_is_refused_unless_forced() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("mine");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("thesis.tex"), b"three years of work").unwrap();
    let run = |extra: &[&str]| {
        sim()
            .args([
                "run",
                "tests/fixtures/small.toml",
                "-q",
                "--no-plots",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .assert()
    };
    let a = run(&[]).code(2);
    let err = stderr(&a);
    assert!(err.contains("no manifest.toml"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(names(&out), ["thesis.tex"]);
    run(&["--force"]).success();
    assert!(out.join("summary.csv").exists());
    // Once it is a results folder, later runs replace it without --force.
    run(&[]).success();
}

#[test]
fn the_current_directory_and_the_scenarios_folder_are_never_replaced() {
    let dir = TempDir::new().unwrap();
    let scenario = small_copy(dir.path(), "s.toml", "s");
    fs::write(dir.path().join("manifest.toml"), b"").unwrap();
    for out in [".", ".."] {
        let a = sim()
            .current_dir(dir.path())
            .args(["run", "s.toml", "-q", "--force", "--out", out])
            .assert()
            .code(2);
        let err = stderr(&a);
        assert!(err.contains("current directory"), "{out}: {err}");
    }
    let a = sim()
        .arg("run")
        .arg(&scenario)
        .args(["-q", "--force", "--out"])
        .arg(dir.path())
        .assert()
        .code(2);
    let err = stderr(&a);
    assert!(err.contains("which this command reads"), "{err}");
    assert_eq!(names(dir.path()), ["manifest.toml", "s.toml"]);
}

#[test]
fn results_of_another_scenario_file_of_the_same_name_are_not_replaced_silently() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("results");
    let first = small_copy(dir.path(), "first.toml", "same");
    let second = small_copy(dir.path(), "second.toml", "same");
    // Another file: differs in text (a longer run), same name.
    let text = fs::read_to_string(&second).unwrap();
    fs::write(&second, format!("{text}\n# edited\n")).unwrap();
    let run = |file: &Path, extra: &[&str]| {
        sim()
            .arg("run")
            .arg(file)
            .args(["-q", "--no-plots", "--out"])
            .arg(&out)
            .args(extra)
            .assert()
    };
    run(&first, &[]).success();
    let before = fs::read(out.join("manifest.toml")).unwrap();
    let a = run(&second, &[]).code(2);
    let err = stderr(&a);
    assert!(
        err.contains("first.toml") && err.contains("second.toml"),
        "{err}"
    );
    assert_eq!(fs::read(out.join("manifest.toml")).unwrap(), before);
    // The same file, edited, replaces its own results.
    let text = fs::read_to_string(&first).unwrap();
    fs::write(&first, format!("{text}\n# edited\n")).unwrap();
    run(&first, &[]).success();
    run(&second, &["--force"]).success();
}

/// Runs the grid sweep's shards into `dir` (as given, or the default place when
/// `dir` is None, from `cwd`), and returns the shard folders.
fn shards(cwd: &Path, dir: Option<&str>, n: u32) -> Vec<PathBuf> {
    let grid = fs::canonicalize("tests/fixtures/grid.toml").unwrap();
    (1..=n)
        .map(|i| {
            let mut cmd = sim();
            cmd.current_dir(cwd).arg("run").arg(&grid).args([
                "-q",
                "--no-plots",
                "--shard",
                &format!("{i}/{n}"),
            ]);
            if let Some(d) = dir {
                cmd.args(["--out", d]);
            }
            cmd.assert().success();
            let base = dir.map_or(cwd.join("results/grid-shards"), |d| cwd.join(d));
            base.join(format!("shard-{i}-of-{n}"))
        })
        .collect()
}

#[test]
fn a_merge_never_deletes_its_shards() {
    let dir = TempDir::new().unwrap();
    // The default places: shards beside the results folder, not in it.
    let parts = shards(dir.path(), None, 2);
    sim()
        .current_dir(dir.path())
        .arg("merge")
        .args(&parts)
        .args(["-q", "--no-plots"])
        .assert()
        .success();
    assert!(dir.path().join("results/grid/summary.csv").exists());
    assert!(parts.iter().all(|p| p.join("cells.csv").exists()));
    // Shards inside the output folder: refused, shards kept.
    let parts = shards(dir.path(), Some("out"), 2);
    let a = sim()
        .current_dir(dir.path())
        .arg("merge")
        .args(&parts)
        .args(["-q", "--force", "--out", "out"])
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("which this command reads"),
        "{}",
        stderr(&a)
    );
    assert!(parts.iter().all(|p| p.join("cells.csv").exists()));
}

/// Damage done to a shard folder.
type Damage = fn(&Path);

/// Ways a shard folder gets damaged, each named.
const DAMAGES: [(&str, Damage); 5] = [
    ("a truncated timeline", |p| {
        let f = p.join("timeline.csv");
        let b = fs::read(&f).unwrap();
        fs::write(&f, &b[..b.len() / 2]).unwrap();
    }),
    ("a NaN figure", |p| {
        let f = p.join("cells.csv");
        let t = fs::read_to_string(&f).unwrap();
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        let row: Vec<&str> = lines[1].split(',').collect();
        let mut row: Vec<String> = row.iter().map(|s| s.to_string()).collect();
        row[1] = "NaN".into();
        lines[1] = row.join(",");
        fs::write(&f, lines.join("\n") + "\n").unwrap();
    }),
    ("a huge cell count", |p| {
        let f = p.join("shard.toml");
        let t = fs::read_to_string(&f).unwrap();
        let t = t
            .lines()
            .map(|l| {
                if l.starts_with("cells =") {
                    "cells = 999999999999999".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        fs::write(&f, t).unwrap();
    }),
    ("shard zero", |p| {
        let f = p.join("shard.toml");
        let t = fs::read_to_string(&f).unwrap();
        fs::write(&f, t.replace("shard = 1", "shard = 0")).unwrap();
    }),
    ("a missing file", |p| {
        fs::remove_file(p.join("cells.csv")).unwrap()
    }),
];

#[test]
fn damaged_shards_are_refused_and_the_merge_keeps_the_fingerprint() {
    let dir = TempDir::new().unwrap();
    let parts = shards(dir.path(), Some("parts"), 2);
    let out = dir.path().join("merged");
    let merge = || {
        sim()
            .arg("merge")
            .args(&parts)
            .args(["-q", "--no-plots", "--out"])
            .arg(&out)
            .assert()
    };
    merge().success();
    let manifest = fs::read_to_string(out.join("manifest.toml")).unwrap();
    let shard = fs::read_to_string(parts[0].join("shard.toml")).unwrap();
    let print = shard
        .lines()
        .find(|l| l.starts_with("fingerprint"))
        .unwrap()
        .split('"')
        .nth(1)
        .unwrap()
        .to_string();
    assert!(
        manifest.contains(&format!("scenario_fingerprint = \"{print}\"")),
        "{manifest}"
    );
    for (what, damage) in DAMAGES {
        let saved: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(&parts[0])
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let b = fs::read(&p).unwrap();
                (p, b)
            })
            .collect();
        damage(&parts[0]);
        let before = fs::read(out.join("manifest.toml")).unwrap();
        let a = merge().code(2);
        let err = stderr(&a);
        assert!(err.contains("shard-1-of-2"), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert_eq!(
            fs::read(out.join("manifest.toml")).unwrap(),
            before,
            "{what}"
        );
        for (p, b) in saved {
            fs::write(p, b).unwrap();
        }
        merge().success();
    }
}

/// Under `ulimit -v`, a world too big for the address space left is refused
/// with a message and exit 2, before it starts, rather than aborted mid-run.
#[test]
fn a_world_beyond_ulimit_v_is_refused_before_it_runs() {
    let dir = TempDir::new().unwrap();
    let text = fs::read_to_string("tests/fixtures/small.toml").unwrap();
    let big = dir.path().join("big.toml");
    // 20 million clients: about 1.9 GB of slots, against 1.5 GB of address space.
    let count = text
        .lines()
        .find(|l| l.starts_with("count"))
        .expect("the small fixture sets a client count")
        .to_string();
    fs::write(&big, text.replacen(&count, "count = 20000000", 1)).unwrap();
    let sim = assert_cmd::cargo::cargo_bin("sim");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1500000 && exec \"$0\" run \"$1\" -q --out \"$2\"")
        .arg(&sim)
        .arg(&big)
        .arg(dir.path().join("out"))
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ulimit -v"), "{err}");
    assert!(!dir.path().join("out").exists());
}

/// The December 2026 reproducers: a junk file named manifest.toml does not
/// make a folder of the user's files a results folder (08); an edited shard
/// count (06) or seed (07) is refused before anything is allocated or merged,
/// and so is a shard folder without its manifest.toml (07).
#[test]
fn a_junk_manifest_and_edited_shards_are_refused() {
    let dir = TempDir::new().unwrap();
    let proj = dir.path().join("proj");
    fs::create_dir(&proj).unwrap();
    fs::write(proj.join("manifest.toml"), b"x\n").unwrap();
    fs::write(proj.join("keep.txt"), b"keep").unwrap();
    let a = sim()
        .args([
            "run",
            "tests/fixtures/small.toml",
            "-q",
            "--no-plots",
            "--out",
        ])
        .arg(&proj)
        .assert()
        .code(2);
    assert!(stderr(&a).contains("not one sim wrote"), "{}", stderr(&a));
    assert_eq!(names(&proj), ["keep.txt", "manifest.toml"]);

    let parts = shards(dir.path(), Some("parts"), 3);
    let merge = |out: &str| {
        let a = sim()
            .arg("merge")
            .args(&parts)
            .args(["-q", "--no-plots", "--out"])
            .arg(dir.path().join(out))
            .assert()
            .code(2);
        stderr(&a)
    };
    let shard_toml = parts[0].join("shard.toml");
    let original = fs::read_to_string(&shard_toml).unwrap();
    let edited = |from: &str, to: &str| {
        let lines: Vec<String> = original
            .lines()
            .map(|l| {
                if l.starts_with(from) {
                    to.to_string()
                } else {
                    l.to_string()
                }
            })
            .collect();
        let mut permissions = fs::metadata(&shard_toml).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        fs::set_permissions(&shard_toml, permissions).unwrap();
        fs::write(&shard_toml, lines.join("\n") + "\n").unwrap();
    };
    edited("shards = ", "shards = 4294967295");
    let err = merge("m1");
    assert!(err.contains("does not match its own checksum"), "{err}");
    edited("seed = ", "seed = 6");
    let err = merge("m2");
    assert!(err.contains("does not match its own checksum"), "{err}");
    fs::write(&shard_toml, &original).unwrap();
    fs::remove_file(parts[0].join("manifest.toml")).unwrap();
    let err = merge("m3");
    assert!(err.contains("has no manifest.toml"), "{err}");
    assert!(!dir.path().join("m3").exists());
}
