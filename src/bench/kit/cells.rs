//! The shapes of cell several experiments share: a count (`n=1000`), a count in one of several
//! fresh processes (`n=1000;rep=2`) and a layout at a count (`soa:n=1000`). Each has one
//! readable form, the text run folders have always held, and reads it back.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::layout::LayoutKind;

/// One population of `n` entities: `n=<count>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    pub n: usize,
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n={}", self.n)
    }
}

impl FromStr for Count {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "n=<count>", |text| {
            let [n] = holes(text, "n={}")?;
            Some(Count { n: n.parse().ok()? })
        })
    }
}

/// `n` entities in fresh process `rep` of a figure taken in several: `n=<count>;rep=<k>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountInProcess {
    pub n: usize,
    pub rep: usize,
}

/// The readable form of [`CountInProcess`].
pub const COUNT_IN_PROCESS: &str = "n=<count>;rep=<k>";

impl fmt::Display for CountInProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n={};rep={}", self.n, self.rep)
    }
}

impl CountInProcess {
    /// The cell in `text`, or `None` where it is not one.
    pub fn read(text: &str) -> Option<Self> {
        let [n, rep] = holes(text, "n={};rep={}")?;
        Some(CountInProcess {
            n: n.parse().ok()?,
            rep: rep.parse().ok()?,
        })
    }
}

impl FromStr for CountInProcess {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, COUNT_IN_PROCESS, CountInProcess::read)
    }
}

/// One layout at `n` entities: `<layout>:n=<count>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutAtCount {
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
    pub n: usize,
}

impl fmt::Display for LayoutAtCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:n={}", self.layout, self.n)
    }
}

impl FromStr for LayoutAtCount {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "<layout>:n=<count>", |text| {
            let [layout, n] = holes(text, "{}:n={}")?;
            Some(LayoutAtCount {
                layout: layout.parse().ok()?,
                n: n.parse().ok()?,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_reads_back_its_own_text_and_refuses_others() {
        let count = Count { n: 1000 };
        assert_eq!(count.to_string(), "n=1000");
        assert_eq!("n=1000".parse(), Ok(count));
        let rep = CountInProcess { n: 10, rep: 2 };
        assert_eq!(rep.to_string(), "n=10;rep=2");
        assert_eq!("n=10;rep=2".parse(), Ok(rep));
        let at = LayoutAtCount {
            layout: LayoutKind::EcsTable,
            n: 5,
        };
        assert_eq!(at.to_string(), "ecs-table:n=5");
        assert_eq!("ecs-table:n=5".parse(), Ok(at));
        for text in ["n=", "n=x", "m=3", "n=3;rep"] {
            let err = text.parse::<Count>().unwrap_err();
            assert_eq!(
                (err.text.as_str(), err.expected.as_str()),
                (text, "n=<count>")
            );
        }
        assert!("n=3".parse::<CountInProcess>().is_err());
        assert!("nope:n=3".parse::<LayoutAtCount>().is_err());
        assert!("soa:3".parse::<LayoutAtCount>().is_err());
    }

    #[test]
    fn a_layout_is_serialized_by_its_name() {
        let at = LayoutAtCount {
            layout: LayoutKind::Dyn(4),
            n: 7,
        };
        let json = serde_json::to_string(&at).unwrap();
        assert_eq!(json, r#"{"layout":"dyn-4","n":7}"#);
        assert_eq!(serde_json::from_str::<LayoutAtCount>(&json).unwrap(), at);
        assert!(serde_json::from_str::<LayoutAtCount>(r#"{"layout":"nope","n":7}"#).is_err());
    }
}
