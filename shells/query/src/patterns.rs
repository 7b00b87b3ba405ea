//! `LIKE … ESCAPE` and `SIMILAR TO` as the SQL standard and PostgreSQL read them.
//!
//! DataFusion 54 plans `s SIMILAR TO p` as the regular-expression match `s ~ p`
//! (datafusion-physical-expr's `similar_to`): the pattern is read as a regular expression
//! and may match anywhere in the string, so `'abc' SIMILAR TO 'b'` was true and `'abc'
//! SIMILAR TO 'a%'` false, and any `ESCAPE` clause was refused. In the SQL standard (ISO
//! 9075-2, 8.6 `<similar predicate>`) and PostgreSQL ("SIMILAR TO Regular Expressions",
//! section 9.7.2 of its manual), the pattern must match the whole string; `%` and `_` are
//! LIKE's wildcards; `|`, `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, `( )` and bracket
//! expressions `[ ]` are regular-expression operators; every other character, `.` included,
//! stands for itself; and the escape character (`\` unless an `ESCAPE` clause names another,
//! as in PostgreSQL) makes the character after it literal. DuckDB differs by design: its
//! `SIMILAR TO` is a whole-string match of the pattern as a regular expression (no `%` or
//! `_` wildcards, `.` any character).
//!
//! DataFusion's LIKE takes only the backslash as its escape character
//! (apache/datafusion#13291): `s LIKE '%#%' ESCAPE '#'` was refused. The standard (8.5
//! `<like predicate>`) and PostgreSQL (9.7.1) allow any one character.
//!
//! [`Patterns`], an analyzer rule that runs before type coercion, rewrites
//! * `s [NOT] SIMILAR TO p [ESCAPE e]` into the regular-expression match
//!   `s [!]~ lake_similar_to_regex(p, e)` ([`to_regex`]);
//! * `s [NOT] [I]LIKE p ESCAPE e`, `e` not a backslash, into
//!   `s [NOT] [I]LIKE lake_like_pattern(p, e) ESCAPE '\'` ([`to_backslash_escapes`]).
//!
//! A constant or bound pattern is translated once, when the plan is simplified; a pattern
//! from a column row by row ([`pattern_udf`]).

use std::sync::{Arc, LazyLock};

use arrow::array::{
    Array, ArrayRef, AsArray, LargeStringArray, StringArray, StringArrayType, StringViewArray,
};
use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, Like, LogicalPlan, Operator, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

use crate::analysis::map_expressions_keeping_names;

/// The escape character of a `SIMILAR TO` without an `ESCAPE` clause (PostgreSQL's; the
/// SQL standard has none), and the one DataFusion's LIKE takes.
pub const DEFAULT_ESCAPE: char = '\\';

/// See the module docs.
#[derive(Debug, Default)]
pub struct Patterns;

impl AnalyzerRule for Patterns {
    fn name(&self) -> &str {
        "lake_patterns"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            map_expressions_keeping_names(plan, |expr| expr.transform_up(|e| Ok(rewrite(e))))
        })
        .data()
    }
}

/// A `SIMILAR TO`, or a `LIKE` with an escape character other than the backslash, in the
/// forms the module docs give; anything else as it is.
fn rewrite(expr: Expr) -> Transformed<Expr> {
    match expr {
        Expr::SimilarTo(Like {
            negated,
            expr,
            pattern,
            escape_char,
            case_insensitive,
        }) => {
            let op = match (negated, case_insensitive) {
                (false, false) => Operator::RegexMatch,
                (false, true) => Operator::RegexIMatch,
                (true, false) => Operator::RegexNotMatch,
                (true, true) => Operator::RegexNotIMatch,
            };
            let regex = translated(Translation::SimilarToRegex, *pattern, escape_char);
            Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(expr, op, Box::new(regex))))
        }
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char: Some(escape),
            case_insensitive,
        }) if escape != DEFAULT_ESCAPE => Transformed::yes(Expr::Like(Like {
            negated,
            expr,
            pattern: Box::new(translated(Translation::LikePattern, *pattern, Some(escape))),
            escape_char: Some(DEFAULT_ESCAPE),
            case_insensitive,
        })),
        other => Transformed::no(other),
    }
}

/// `translation(pattern, escape)`, the escape defaulting to [`DEFAULT_ESCAPE`].
fn translated(translation: Translation, pattern: Expr, escape: Option<char>) -> Expr {
    let escape = escape.unwrap_or(DEFAULT_ESCAPE).to_string();
    Expr::ScalarFunction(ScalarFunction::new_udf(
        pattern_udf(translation),
        vec![
            pattern,
            Expr::Literal(ScalarValue::Utf8(Some(escape)), None),
        ],
    ))
}

/// What a pattern function translates a pattern into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Translation {
    /// `lake_similar_to_regex`: a `SIMILAR TO` pattern into a regular expression
    /// ([`to_regex`]).
    SimilarToRegex,
    /// `lake_like_pattern`: a LIKE pattern with another escape character into one with the
    /// backslash ([`to_backslash_escapes`]).
    LikePattern,
}

impl Translation {
    fn apply(self, pattern: &str, escape: Option<char>) -> Result<String> {
        match self {
            Self::SimilarToRegex => to_regex(pattern, escape),
            Self::LikePattern => to_backslash_escapes(pattern, escape),
        }
    }
}

/// The function `translation(pattern, escape)`: `pattern` (a string of any Arrow string
/// type, or NULL) translated with escape character `escape` (a one-character string
/// literal), of the pattern's string type; NULL for a NULL pattern.
///
/// # Errors
/// At execution, a pattern that ends with its escape character.
pub fn pattern_udf(translation: Translation) -> Arc<ScalarUDF> {
    fn udf(translation: Translation) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(PatternFunction {
            translation,
            signature: Signature::any(2, Volatility::Immutable),
        }))
    }
    static SIMILAR: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Translation::SimilarToRegex));
    static LIKE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| udf(Translation::LikePattern));
    match translation {
        Translation::SimilarToRegex => SIMILAR.clone(),
        Translation::LikePattern => LIKE.clone(),
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct PatternFunction {
    translation: Translation,
    signature: Signature,
}

impl ScalarUDFImpl for PatternFunction {
    fn name(&self) -> &str {
        match self.translation {
            Translation::SimilarToRegex => "lake_similar_to_regex",
            Translation::LikePattern => "lake_like_pattern",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args.first() {
            Some(t @ (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)) => Ok(t.clone()),
            Some(DataType::Null) => Ok(DataType::Utf8),
            other => plan_err!("a LIKE or SIMILAR TO pattern is a string, got {other:?}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let name = self.name();
        let [pattern, escape] = args.args.as_slice() else {
            return exec_err!("{name} takes a pattern and an escape character");
        };
        let escape = match escape {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(e))) if e.chars().count() == 1 => {
                e.chars().next()
            }
            other => return exec_err!("{name}'s escape is one character, got {other:?}"),
        };
        let translate = |p: Option<&str>| p.map(|p| self.translation.apply(p, escape)).transpose();
        match pattern {
            ColumnarValue::Scalar(ScalarValue::Null | ScalarValue::Utf8(None)) => {
                Ok(ColumnarValue::Scalar(ScalarValue::Utf8(None)))
            }
            ColumnarValue::Scalar(ScalarValue::Utf8(p)) => Ok(ColumnarValue::Scalar(
                ScalarValue::Utf8(translate(p.as_deref())?),
            )),
            ColumnarValue::Scalar(ScalarValue::LargeUtf8(p)) => Ok(ColumnarValue::Scalar(
                ScalarValue::LargeUtf8(translate(p.as_deref())?),
            )),
            ColumnarValue::Scalar(ScalarValue::Utf8View(p)) => Ok(ColumnarValue::Scalar(
                ScalarValue::Utf8View(translate(p.as_deref())?),
            )),
            ColumnarValue::Array(array) => {
                let out: ArrayRef = match array.data_type() {
                    DataType::Utf8 => each::<_, StringArray>(array.as_string::<i32>(), translate)?,
                    DataType::LargeUtf8 => {
                        each::<_, LargeStringArray>(array.as_string::<i64>(), translate)?
                    }
                    DataType::Utf8View => {
                        each::<_, StringViewArray>(array.as_string_view(), translate)?
                    }
                    DataType::Null => Arc::new(StringArray::new_null(array.len())),
                    other => {
                        return exec_err!("a LIKE or SIMILAR TO pattern is a string, got {other}");
                    }
                };
                Ok(ColumnarValue::Array(out))
            }
            ColumnarValue::Scalar(other) => {
                exec_err!(
                    "a LIKE or SIMILAR TO pattern is a string, got {}",
                    other.data_type()
                )
            }
        }
    }
}

/// `translate` applied to each string of `strings`, as an array of type `O`.
fn each<'a, T: StringArrayType<'a>, O: Array + FromIterator<Option<String>> + 'static>(
    strings: T,
    translate: impl Fn(Option<&str>) -> Result<Option<String>>,
) -> Result<ArrayRef> {
    Ok(Arc::new(
        strings.iter().map(translate).collect::<Result<O>>()?,
    ))
}

/// The LIKE pattern with the backslash as its escape character that matches what
/// `pattern` matches with `escape` as its escape character (`None`: none): an escaped
/// character becomes `\` and the character (the wildcards `%` and `_`, and the backslash,
/// stay escaped; any other character is itself either way), and a backslash that is not
/// escaped becomes `\\`. As in PostgreSQL (9.7.1), the escape character doubled matches
/// itself.
///
/// # Errors
/// A pattern that ends with its escape character (PostgreSQL: "LIKE pattern must not end
/// with escape character").
pub fn to_backslash_escapes(pattern: &str, escape: Option<char>) -> Result<String> {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut escaped = false;
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            if matches!(c, '%' | '_' | '\\') {
                out.push('\\');
            }
            out.push(c);
        } else if Some(c) == escape {
            escaped = true;
        } else {
            if c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    if escaped {
        return ends_with_escape("LIKE", pattern, escape);
    }
    Ok(out)
}

/// The error for a `kind` pattern that ends with its escape character.
fn ends_with_escape(kind: &str, pattern: &str, escape: Option<char>) -> Result<String> {
    exec_err!(
        "{kind} pattern {pattern:?} ends with its escape character {:?}; escape a \
         character, or double the escape character to match it",
        escape.unwrap_or(DEFAULT_ESCAPE)
    )
}

/// The regular expression (Rust `regex` syntax, as DataFusion's `~` compiles it) that
/// matches exactly the strings the `SIMILAR TO` pattern `pattern` matches, with `escape` as
/// its escape character (`None`: no escape character).
///
/// The whole string must match (`^(?:…)$`); `%` becomes `.*` and `_` `.`, both matching a
/// line break too (`(?s)`); `( )` group without capturing; `|`, `*`, `+`, `?`, `{ }` and
/// bracket expressions (`[a-c]`, `[^x]`, `[[:digit:]]`) keep their regular-expression
/// meaning; `.`, `^`, `$` and `\` (when it is not the escape character) stand for
/// themselves, as does the character after the escape character. This is PostgreSQL's
/// translation (`similar_escape` in its `regexp.c`) except that an escaped character is
/// always literal, as the SQL standard says (PostgreSQL passes `\d` and the like through to
/// its regular-expression engine).
///
/// # Errors
/// A pattern that ends with the escape character (there is nothing for it to escape), and
/// one whose operators do not form a regular expression (`'('`, `'a{'`, `'[a'`): "SIMILAR
/// TO pattern "(" did not compile: unclosed group".
pub fn to_regex(pattern: &str, escape: Option<char>) -> Result<String> {
    let mut body = String::with_capacity(pattern.len() + 8);
    let mut any_character = false;
    let mut escaped = false;
    // Inside a bracket expression: how many of its members have been copied (a `]` first,
    // or right after a leading `^`, is a member rather than the end).
    let mut bracket: Option<usize> = None;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            push_literal(&mut body, c);
            if let Some(members) = bracket.as_mut() {
                *members += 1;
            }
            continue;
        }
        if Some(c) == escape {
            escaped = true;
            continue;
        }
        if let Some(members) = bracket {
            match c {
                ']' if members > 0 => {
                    body.push(']');
                    bracket = None;
                    continue;
                }
                // A character class name, `[:digit:]`, copied whole.
                '[' if chars.peek() == Some(&':') => {
                    body.push('[');
                    for n in chars.by_ref() {
                        body.push(n);
                        if n == ']' && body.ends_with(":]") {
                            break;
                        }
                    }
                }
                // The range operator stays; what Rust's classes read as nesting or set
                // operations (`[`, `&&`, `~~`) and backslashes stand for themselves.
                '-' => body.push('-'),
                _ => push_literal(&mut body, c),
            }
            bracket = Some(members + 1);
            continue;
        }
        match c {
            '%' => {
                body.push_str(".*");
                any_character = true;
            }
            '_' => {
                body.push('.');
                any_character = true;
            }
            '(' => body.push_str("(?:"),
            '[' => {
                body.push('[');
                // A leading `^` negates the expression; it is not a member.
                if chars.next_if_eq(&'^').is_some() {
                    body.push('^');
                }
                bracket = Some(0);
            }
            ')' | '|' | '*' | '+' | '?' | '{' | '}' => body.push(c),
            _ => push_literal(&mut body, c),
        }
    }
    if escaped {
        return ends_with_escape("SIMILAR TO", pattern, escape);
    }
    let flags = if any_character { "(?s)" } else { "" };
    let regex = format!("{flags}^(?:{body})$");
    // Checked here so that the error names the pattern the query gave, not its translation.
    if let Err(e) = regex_syntax::Parser::new().parse(&regex) {
        let cause = match &e {
            regex_syntax::Error::Parse(e) => e.kind().to_string(),
            regex_syntax::Error::Translate(e) => e.kind().to_string(),
            other => other.to_string(),
        };
        return exec_err!("SIMILAR TO pattern {pattern:?} did not compile: {cause}");
    }
    Ok(regex)
}

/// Appends `c` to a regular expression as itself: escaped when the `regex` crate gives it a
/// meaning (`regex_syntax::is_meta_character`), as it is otherwise.
fn push_literal(regex: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        regex.push('\\');
    }
    regex.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text SIMILAR TO pattern` (escape `\`), compiled as DataFusion's `~` does.
    fn similar(text: &str, pattern: &str) -> bool {
        let regex = to_regex(pattern, Some(DEFAULT_ESCAPE)).unwrap();
        regex::Regex::new(&regex)
            .unwrap_or_else(|e| panic!("{pattern:?} → {regex:?}: {e}"))
            .is_match(text)
    }

    /// PostgreSQL's manual, 9.7.2, gives these examples and answers.
    #[test]
    fn postgresql_manual_examples() {
        assert!(similar("abc", "abc"));
        assert!(!similar("abc", "a"));
        assert!(similar("abc", "%(b|d)%"));
        assert!(!similar("abc", "(b|c)%"));
    }

    #[test]
    fn whole_string_wildcards_and_literals() {
        assert!(!similar("abc", "b"));
        assert!(similar("abc", "a%"));
        assert!(similar("abc", "_b_"));
        assert!(!similar("abcd", "_b_"));
        assert!(similar("a\nc", "a_c"), "_ matches a line break");
        assert!(similar("a\n\nc", "a%c"), "% matches line breaks");
        // `.`, `^` and `$` stand for themselves.
        assert!(similar("a.c", "a.c"));
        assert!(!similar("abc", "a.c"));
        assert!(similar("^x$", "^x$"));
        assert!(!similar("x", "^x$"));
        // Operators.
        assert!(similar("aaa", "a+"));
        assert!(similar("", "a*"));
        assert!(similar("ab", "ab?"));
        assert!(similar("aa", "a{2}"));
        assert!(!similar("aaa", "a{2}"));
        assert!(similar("aaa", "a{2,}"));
        assert!(similar("abab", "(ab)+"));
        assert!(similar("x", "x|y"));
        assert!(!similar("xy", "x|y"));
    }

    #[test]
    fn bracket_expressions() {
        assert!(similar("b", "[a-c]"));
        assert!(!similar("d", "[a-c]"));
        assert!(similar("d", "[^a-c]"));
        assert!(similar("]", "[]a]"));
        assert!(similar("]", "[^a]"));
        assert!(!similar("]", "[^]a]"));
        assert!(similar("7", "[[:digit:]]"));
        assert!(!similar("x", "[[:digit:]]"));
        // Rust's class syntax (nesting, `&&`) does not leak through.
        assert!(similar("[", "[[]"));
        assert!(similar("&", "[a&&b]"));
        assert!(
            similar("%", "[%_]"),
            "wildcards are members inside brackets"
        );
        assert!(!similar("x", "[%_]"));
    }

    #[test]
    fn escapes() {
        assert!(similar("100%", "100\\%"));
        assert!(!similar("1000", "100\\%"));
        assert!(similar("a_c", "a\\_c"));
        assert!(!similar("abc", "a\\_c"));
        assert!(similar("a\\c", "a\\\\c"));
        // An escaped letter is that letter (PostgreSQL would read `\d` as a digit class).
        assert!(similar("d", "\\d"));
        assert!(!similar("1", "\\d"));
        // Another escape character; `\` is then literal.
        let regex = to_regex("a#%\\", Some('#')).unwrap();
        assert!(regex::Regex::new(&regex).unwrap().is_match("a%\\"));
        // None at all.
        let regex = to_regex("\\%", None).unwrap();
        assert!(regex::Regex::new(&regex).unwrap().is_match("\\anything"));
        let err = to_regex("abc\\", Some('\\')).unwrap_err().to_string();
        assert!(err.contains("ends with its escape character"), "{err}");
    }

    #[test]
    fn like_patterns_with_another_escape_character() {
        let like = |pattern: &str| to_backslash_escapes(pattern, Some('#')).unwrap();
        assert_eq!(like("%#%"), "%\\%");
        assert_eq!(like("a#_c%"), "a\\_c%");
        assert_eq!(
            like("a##b"),
            "a#b",
            "the escape character doubled is itself"
        );
        assert_eq!(like("#a"), "a", "an escaped ordinary character is itself");
        assert_eq!(like("a\\c"), "a\\\\c", "a backslash is itself");
        assert_eq!(like("#\\"), "\\\\");
        let err = to_backslash_escapes("ab#", Some('#'))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("LIKE pattern \"ab#\" ends with its escape character"),
            "{err}"
        );
    }

    #[test]
    fn operators_that_do_not_form_a_regex_are_refused_naming_the_pattern() {
        for (pattern, cause) in [
            ("(", "unclosed group"),
            ("a{", "repetition"),
            ("[a", "unclosed character class"),
        ] {
            let err = to_regex(pattern, Some(DEFAULT_ESCAPE))
                .unwrap_err()
                .to_string();
            let named = format!("SIMILAR TO pattern {pattern:?} did not compile: ");
            assert!(err.contains(&named) && err.contains(cause), "{err}");
        }
    }
}
