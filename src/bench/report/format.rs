//! How the reports write numbers and tables: three significant digits, thousands separated,
//! Markdown tables, a time beside its per-item cost, ours beside a study's figure.

use std::time::Instant;

use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};

/// Milliseconds since `t`, for the experiments that time one-off events rather than repeats.
pub fn ms_since(t: Instant) -> f64 {
    ms(t.elapsed())
}

/// A duration in milliseconds.
pub fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The largest sample (0 for none): the worst frame of a run.
pub fn max_of(samples: &[f64]) -> f64 {
    samples.iter().copied().fold(0.0, f64::max)
}

/// A Markdown table from a header and rows.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// Numbers as a reader wants them: 3 significant digits, thousands separated for big ones.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 10_000.0 {
        fmt_count(v.round() as u64)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cell holding a time and the same time per item, `1.22 ms, 1.22 ns`: the records `query`
/// finds with its metric set to `ms_metric` and to `ns_metric`.
pub fn ms_and_ns(records: &[Record], query: Query, ms_metric: Metric, ns_metric: Metric) -> String {
    let ms = query.with_metric(ms_metric).find(records);
    let ns = query.with_metric(ns_metric).find(records);
    match (ms, ns) {
        (Some(ms), Some(ns)) => format!("{} ms, {} ns", fmt_num(ms.p50), fmt_num(ns.p50)),
        _ => "-".into(),
    }
}

/// "ours vs study" as `ours (study: x, ratio r)`.
pub fn vs_study(ours: f64, study: Option<f64>) -> String {
    match study {
        Some(s) if s > 0.0 => format!("{} (study {}, x{:.2})", fmt_num(ours), fmt_num(s), ours / s),
        _ => fmt_num(ours),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_for_reading() {
        assert_eq!(fmt_count(1_792_000), "1,792,000");
        assert_eq!(fmt_num(0.46612), "0.466");
        assert_eq!(fmt_num(16.666), "16.7");
    }
}
