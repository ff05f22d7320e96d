//! What a cell is on its way between the suite, a worker and the journal. An experiment's cells
//! are values of a type of its own (or a shape several share, `bench::kit::cells`); this module
//! holds what every cell type uses to be read back: the error a readable form that fits none of
//! the type's forms gives ([`CellTextError`]), the reader of a form such as `{}:n={}`
//! ([`holes`]), a layout or a thread setting spelled by its name in a cell's serialized value
//! ([`by_name`]), and a cell with its type erased ([`AnyCell`]), which is how the runner and
//! the journal hold it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serializer};
use thiserror::Error;

/// A cell's readable text that fits none of its type's forms: the text and the forms expected.
/// The experiment that reads it adds its name (`BenchError::BadCell`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("cannot read cell '{text}': expected {expected}")]
pub struct CellTextError {
    pub text: String,
    pub expected: String,
}

/// A cell type's `FromStr`: `read` says what the text holds, or `None` where it fits none of
/// the type's forms, which is then an error naming the text and `expected`.
pub fn read_cell<T>(
    text: &str,
    expected: &str,
    read: impl FnOnce(&str) -> Option<T>,
) -> Result<T, CellTextError> {
    read(text).ok_or_else(|| CellTextError {
        text: text.into(),
        expected: expected.into(),
    })
}

/// The values in `text` where `form` has `{}`, the text between them matching `form` exactly:
/// `holes("soa:n=10", "{}:n={}") == Some(["soa", "10"])`. A value ends where the literal after
/// it first appears, so a value cannot hold that literal (no layout, count, size or name in a
/// cell holds `:` or `;`); an empty value, or a text that does not fit, is `None`.
pub fn holes<'t, const N: usize>(text: &'t str, form: &str) -> Option<[&'t str; N]> {
    let mut literals = form.split("{}");
    let mut rest = text.strip_prefix(literals.next()?)?;
    let literals: Vec<&str> = literals.collect();
    let mut values = Vec::with_capacity(N);
    for (i, literal) in literals.iter().enumerate() {
        let value = if i + 1 == literals.len() {
            let value = rest.strip_suffix(literal)?;
            rest = "";
            value
        } else {
            // Two holes side by side have no boundary to find.
            let at = (!literal.is_empty()).then(|| rest.find(literal))??;
            let value = &rest[..at];
            rest = &rest[at + literal.len()..];
            value
        };
        if value.is_empty() {
            return None;
        }
        values.push(value);
    }
    values.try_into().ok()
}

/// A value in a cell's serialized value by its name, as the records spell it (a layout as
/// `"soa"`, threads as `"all"`): `#[serde(with = "by_name")]` on a field whose type prints its
/// name and parses it back.
pub mod by_name {
    use std::fmt::Display;
    use std::str::FromStr;

    use super::*;

    pub fn serialize<T: Display, S: Serializer>(
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A cell with its type erased, as the suite, the runner and the journal hold it: its readable
/// text (the journal's `cell`, the progress line, what `--cell` reads) and its serialized value
/// (JSON: what a worker gets on its command line, `--cell-json`). Only an experiment makes one,
/// from a cell of its own type, so the two always say the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnyCell {
    text: String,
    json: String,
}

impl AnyCell {
    pub fn of<C: fmt::Display + serde::Serialize>(cell: &C) -> Self {
        Self {
            text: cell.to_string(),
            json: serde_json::to_string(cell).expect("a cell is plain data, which JSON holds"),
        }
    }

    /// The readable form: the journal's `cell`, the progress line's.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The serialized value a worker receives.
    pub fn json(&self) -> &str {
        &self.json
    }
}

impl fmt::Display for AnyCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_read_the_values_between_a_forms_literals() {
        assert_eq!(holes("soa:n=10", "{}:n={}"), Some(["soa", "10"]));
        assert_eq!(holes("n=5;rep=2", "n={};rep={}"), Some(["5", "2"]));
        assert_eq!(holes("share=10%", "share={}%"), Some(["10"]));
        assert_eq!(
            holes("soa:into:10", "{}:{}:{}"),
            Some(["soa", "into", "10"])
        );
        // Not the form, an empty value, a literal missing, or one value too many.
        assert_eq!(holes::<1>("m=5", "n={}"), None);
        assert_eq!(holes::<1>("n=", "n={}"), None);
        assert_eq!(holes::<1>("share=10", "share={}%"), None);
        assert_eq!(holes::<2>("soa:10:3", "{}:{}"), Some(["soa", "10:3"]));
        assert_eq!(holes::<2>("a:b", "{}{}"), None);
        assert_eq!(holes::<2>("stream", "{}:{}"), None);
    }

    #[test]
    fn a_text_that_fits_no_form_names_itself_and_the_forms() {
        let err = read_cell::<u8>("n=x", "n=<count>", |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read cell 'n=x': expected n=<count>"
        );
        assert_eq!(
            read_cell("n=7", "n=<count>", |t| t[2..].parse::<u8>().ok()),
            Ok(7)
        );
    }
}
