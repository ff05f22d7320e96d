//! Figures that hold from run to run: a ratio measured in several fresh processes is reported as
//! the median of the per-process values with their spread, `1.22 [0.92..1.31]`, and a target is
//! "met" only when the median meets it ("unstable" when the spread straddles it).

/// The median, least and greatest of `values`, or `None` when there are none.
pub fn summary(values: &[f64]) -> Option<(f64, f64, f64)> {
    let m = median(values)?;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((m, lo, hi))
}

/// `median [min..max]`, for a figure with no goal.
pub fn range(values: &[f64]) -> String {
    summary(values).map_or("-".into(), |(m, lo, hi)| {
        format!("{m:.2} [{lo:.2}..{hi:.2}]")
    })
}

/// `median [min..max]` and whether the median meets the goal: "met", "not met", or "unstable"
/// when the spread straddles the goal while the median meets it.
pub fn spread(values: &[f64], meets: impl Fn(f64) -> bool) -> String {
    let Some((m, lo, hi)) = summary(values) else {
        return "-".into();
    };
    let verdict = match (meets(m), meets(lo) && meets(hi)) {
        (true, true) => "met",
        (true, false) => "met by the median, unstable",
        (false, _) => "not met",
    };
    format!("{m:.2} [{lo:.2}..{hi:.2}], {verdict}")
}

pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

pub fn short(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_says_met_unstable_or_not() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
        assert!(spread(&[1.0, 1.01, 1.02], |m| m <= 1.05).ends_with(", met"));
        assert!(spread(&[1.0, 1.01, 1.2], |m| m <= 1.05).ends_with("unstable"));
        assert!(spread(&[1.1, 1.2, 1.3], |m| m <= 1.05).ends_with("not met"));
    }
}
