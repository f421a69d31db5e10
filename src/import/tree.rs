//! A configuration file as a tree whose every node knows its line, read
//! from YAML or JSON (JSON is YAML's flow style, so one reader serves both):
//! errors and comments can then name the line a value came from.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A value of the file, with the line it starts on (from 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its line.
    pub line: usize,
    /// Which of the files read it is in (an index into the reader's list
    /// of names; 0 for a single file).
    pub file: usize,
    /// What it is.
    pub value: Value,
}

/// A scalar (kept as written), a list or a map (in file order).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number, a string, a boolean or null, as written.
    Scalar(String),
    /// A list.
    List(Vec<Node>),
    /// A map of keys to values.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The node and all below it marked as in file `file`.
    #[must_use]
    pub fn in_file(mut self, file: usize) -> Node {
        fn mark(n: &mut Node, file: usize) {
            n.file = file;
            match &mut n.value {
                Value::List(l) => l.iter_mut().for_each(|c| mark(c, file)),
                Value::Map(m) => m.iter_mut().for_each(|(_, c)| mark(c, file)),
                Value::Scalar(_) => {}
            }
        }
        mark(&mut self, file);
        self
    }

    /// The node with its keys in protobuf's field names: a key written in
    /// proto3 JSON's lowerCamelCase (`retryPolicy`, `numRetries`) made
    /// snake_case (`retry_policy`, `num_retries`), as protobuf's JSON
    /// parsers accept either spelling (Envoy reads both; go-control-plane
    /// writes the first). Only keys that are identifiers are changed: map
    /// keys such as extension names (`envoy.extensions...`) stay as they are.
    #[must_use]
    pub fn proto_names(&self) -> Node {
        fn snake(key: &str) -> Option<String> {
            let identifier = key.starts_with(|c: char| c.is_ascii_lowercase())
                && key.chars().all(|c| c.is_ascii_alphanumeric());
            if !identifier || !key.chars().any(|c| c.is_ascii_uppercase()) {
                return None;
            }
            let mut out = String::with_capacity(key.len() + 4);
            for c in key.chars() {
                if c.is_ascii_uppercase() {
                    out.push('_');
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            Some(out)
        }
        let value = match &self.value {
            Value::Scalar(s) => Value::Scalar(s.clone()),
            Value::List(l) => Value::List(l.iter().map(Node::proto_names).collect()),
            Value::Map(m) => Value::Map(
                m.iter()
                    .map(|(k, v)| (snake(k).unwrap_or_else(|| k.clone()), v.proto_names()))
                    .collect(),
            ),
        };
        Node {
            line: self.line,
            file: self.file,
            value,
        }
    }

    /// The value at `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The entries of a map (none for anything else).
    pub fn entries(&self) -> &[(String, Node)] {
        match &self.value {
            Value::Map(m) => m,
            _ => &[],
        }
    }

    /// The items of a list (none for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::List(l) => l,
            _ => &[],
        }
    }

    /// The text of a scalar.
    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }
}

/// Builds the tree from the parser's events.
#[derive(Default)]
struct Builder {
    /// Open lists and maps; a map's pending key is kept beside it.
    stack: Vec<(Node, Option<String>)>,
    /// Finished documents.
    docs: Vec<Node>,
    /// An alias or a tag seen: not supported, with where.
    unsupported: Option<(usize, &'static str)>,
}

impl Builder {
    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some((parent, key)) => match &mut parent.value {
                Value::List(l) => l.push(node),
                Value::Map(m) => match key.take() {
                    None => match node.value {
                        Value::Scalar(k) => *key = Some(k),
                        _ => {
                            self.unsupported
                                .get_or_insert((node.line, "a key that is a list or a map"));
                        }
                    },
                    Some(k) => m.push((k, node)),
                },
                Value::Scalar(_) => {}
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        match ev {
            Event::Scalar(text, _, _, tag) => {
                if tag.is_some() {
                    self.unsupported.get_or_insert((line, "a YAML tag"));
                }
                self.push(Node {
                    line,
                    file: 0,
                    value: Value::Scalar(text),
                });
            }
            Event::SequenceStart(..) => self.stack.push((
                Node {
                    line,
                    file: 0,
                    value: Value::List(Vec::new()),
                },
                None,
            )),
            Event::MappingStart(..) => self.stack.push((
                Node {
                    line,
                    file: 0,
                    value: Value::Map(Vec::new()),
                },
                None,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, _)) = self.stack.pop() {
                    self.push(node);
                }
            }
            Event::Alias(_) => {
                self.unsupported
                    .get_or_insert((line, "a YAML alias (*name)"));
            }
            _ => {}
        }
    }
}

/// The documents of `text` (a YAML stream may hold several, `---` apart),
/// or the line and the reason it cannot be read.
pub fn parse(text: &str) -> Result<Vec<Node>, (usize, String)> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser
        .load(&mut b, true)
        .map_err(|e| (e.marker().line(), e.info().to_string()))?;
    if let Some((line, what)) = b.unsupported {
        return Err((
            line,
            format!("{what} is not supported here: write the value out"),
        ));
    }
    Ok(b.docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_yaml_give_the_same_tree_with_lines() {
        let json = "{\n  \"a\": {\n    \"b\": [1, \"x\"]\n  }\n}\n";
        let yaml = "a:\n  b:\n    - 1\n    - x\n";
        let (j, y) = (&parse(json).unwrap()[0], &parse(yaml).unwrap()[0]);
        let b = |n: &Node| n.get("a").unwrap().get("b").unwrap().clone();
        let texts = |n: Node| {
            n.items()
                .iter()
                .map(|i| i.text().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(b(j)), vec!["1", "x"]);
        assert_eq!(texts(b(y)), vec!["1", "x"]);
        assert_eq!(b(j).line, 3);
        assert_eq!(b(y).items()[1].line, 4);
    }

    #[test]
    fn several_documents_and_errors_with_their_line() {
        assert_eq!(parse("a: 1\n---\nb: 2\n").unwrap().len(), 2);
        let (line, _) = parse("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(line >= 2, "{line}");
        let (line, why) = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(why.contains("alias"), "{why}");
    }
}
