//! The corpus of real configurations (`tests/corpus/`, each with its
//! source and licence in `SOURCES.toml`) through the real binary: every
//! file imports to the number of strategies recorded, or is refused with
//! the recorded reason, exit status 2; every file is recorded, and every
//! record has its file.

use crate::common::{sim, stderr};

#[test]
fn every_corpus_file_imports_or_is_refused_as_recorded() {
    let dir = std::path::Path::new("tests/corpus");
    let sources: toml::Table = std::fs::read_to_string(dir.join("SOURCES.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let records = sources["file"].as_array().unwrap();
    let mut named = Vec::new();
    let (mut imported, mut refused) = (0, 0);
    for r in records {
        let name = r["name"].as_str().unwrap();
        for key in ["repository", "path", "commit", "licence"] {
            assert!(
                r.get(key).and_then(|v| v.as_str()).is_some(),
                "{name}: no {key}"
            );
        }
        named.push(name.to_owned());
        let path = dir.join(name);
        let run = sim().arg("import").arg(&path).assert();
        if let Some(n) = r.get("strategies").and_then(toml::Value::as_integer) {
            let out = run.success();
            let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
            let found = text.matches("\n[[strategy]]\n").count();
            assert_eq!(found as i64, n, "{name}: {found} strategies\n{text}");
            imported += 1;
        } else {
            let reason = r["refused"].as_str().unwrap();
            assert!(
                r.get("why").is_some(),
                "{name}: a refusal says why it is right"
            );
            let err = stderr(&run.code(2));
            assert!(err.contains(reason), "{name}: {err}");
            refused += 1;
        }
    }
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "SOURCES.toml" && n != "licences")
        .collect();
    files.sort();
    named.sort();
    assert_eq!(files, named, "every file recorded, every record a file");
    assert_eq!(imported + refused, records.len());
}
