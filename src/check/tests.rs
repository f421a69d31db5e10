use super::*;
use crate::import::import_text;

const ISTIO: &str = "apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ratings
spec:
  hosts: [ratings]
  http:
  - route:
    - destination:
        host: ratings
    retries:
      attempts: ATTEMPTS
      perTryTimeout: 2s
";

fn istio(attempts: u32) -> Vec<PathImports> {
    let text = ISTIO.replace("ATTEMPTS", &attempts.to_string());
    vec![PathImports {
        path: "vs.yaml".to_owned(),
        imports: vec![import_text("vs.yaml", &text).unwrap()],
    }]
}

fn settings(base: bool) -> Settings {
    Settings {
        limits: Limits::default(),
        trials: vec![Trial::parse("unavailable:2s").unwrap()],
        seed: None,
        base: base.then(|| "main".to_owned()),
        graph: None,
    }
}

#[test]
fn a_location_is_a_known_file_and_a_line() {
    let at = location("a/vs.yaml:18 [document 1].spec = 3", &["a/vs.yaml"]);
    assert_eq!(
        at,
        Some(Location {
            file: "a/vs.yaml".into(),
            line: 18
        })
    );
    assert_eq!(location("Envoy's default 25ms", &["a/vs.yaml"]), None);
    assert_eq!(location("a/vs.yamlx:3", &["a/vs.yaml"]), None);
}

#[test]
fn a_rise_in_attempts_is_crossed_at_its_line() {
    let base = istio(2);
    let head = istio(5);
    let r = check(&head, Some(&base), &World::builtin(), &settings(true)).unwrap();
    assert_eq!(r.strategies.len(), 1);
    let s = &r.strategies[0];
    assert_eq!(s.status, Status::Changed);
    let a = &s.figures[0];
    assert_eq!(a.id, "attempts");
    assert_eq!(
        (a.before, a.after),
        (Value::Number(3.0), Value::Number(6.0))
    );
    assert!(a.crossed);
    assert_eq!(a.source.as_ref().map(|l| l.line), Some(12));
    assert!(r.crossed().any(|(_, f)| f.id == "attempts"));
}

#[test]
fn an_unchanged_strategy_is_shown_not_judged() {
    let base = istio(5);
    let head = istio(5);
    let r = check(&head, Some(&base), &World::builtin(), &settings(true)).unwrap();
    assert_eq!(r.strategies[0].status, Status::Unchanged);
    assert_eq!(r.crossed().count(), 0);
    // Not run: no trial figures.
    assert!(
        r.strategies[0]
            .figures
            .iter()
            .all(|f| !f.id.starts_with("trial."))
    );
}

#[test]
fn without_a_base_everything_is_judged() {
    let r = check(&istio(2), None, &World::builtin(), &settings(false)).unwrap();
    let s = &r.strategies[0];
    assert_eq!(s.status, Status::Judged);
    assert!(!s.figures[0].crossed, "3 attempts are within 3");
    assert!(
        s.figures
            .iter()
            .any(|f| f.id == "trial.unavailable-2s.recovery_s")
    );
}

#[test]
fn trials_parse_and_refuse() {
    let t = Trial::parse("blackhole:500ms").unwrap();
    assert_eq!(t.kind, TrialKind::Blackhole);
    assert_eq!(t.id(), "blackhole-500ms");
    let t = Trial::parse("errors:0.5:60s").unwrap();
    assert_eq!(t.kind, TrialKind::Errors { p: 0.5 });
    assert_eq!(t.id(), "errors-0.5-60s");
    for bad in [
        "blackhole",
        "crash:2s",
        "unavailable:0s",
        "unavailable:2",
        "unavailable:2h",
        "errors:60s",
        "errors:0:60s",
        "errors:1.5:60s",
        "blackhole:0.5:2s",
    ] {
        assert!(Trial::parse(bad).is_err(), "{bad}");
    }
}
