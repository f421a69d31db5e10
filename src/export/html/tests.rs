use super::*;

#[test]
fn tables_show_four_significant_digits_of_a_full_precision_csv() {
    assert_eq!(readable("1234.5678"), "1235");
    assert_eq!(readable("0.30000000000000004"), "0.3000");
    assert_eq!(readable("8.2"), "8.2");
    assert_eq!(readable("0.000123456"), "0.000123");
    assert_eq!(readable("12"), "12");
    assert_eq!(readable("never"), "never");
    assert_eq!(readable("-3.14159"), "-3.142");
}

#[test]
fn script_content_cannot_close_its_element() {
    let s = json_string("a</script><b>\"&\u{2028}");
    assert!(!s.contains("</"), "{s}");
    assert_eq!(
        s,
        "\"a\\u003c/script\\u003e\\u003cb\\u003e\\\"\\u0026\\u2028\""
    );
}

#[test]
fn facts_cannot_close_their_script_element() {
    let json = serde_json::json!({ "strategies": ["a</script><b>&"] }).to_string();
    let safe = script_safe(&json);
    assert!(
        !safe.contains('<') && !safe.contains('>') && !safe.contains('&'),
        "{safe}"
    );
    let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
    assert_eq!(back["strategies"][0], "a</script><b>&");
}

#[test]
fn html_text_is_escaped() {
    assert_eq!(
        esc("<a href='x'>&\"</a>"),
        "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
    );
}

#[test]
fn the_summary_table_says_never_only_with_a_trigger() {
    let csv = "strategy,failed,recovery_time_s\na,3,\nb,0,1.5\n";
    let with = summary_table(csv, true);
    assert!(
        with.contains("<td>a</td><td>3</td><td>never</td>"),
        "{with}"
    );
    assert!(with.contains("<td>b</td><td>0</td><td>1.5</td>"), "{with}");
    let without = summary_table(csv, false);
    assert!(
        without.contains("<td>a</td><td>3</td><td>&ndash;</td>"),
        "{without}"
    );
}
