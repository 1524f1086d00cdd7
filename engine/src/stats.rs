//! The statistics of `cargo proposal-eval compare`: which differences between two runs of a suite
//! are larger than chance would make them.
//!
//! - [`wilson`]: a pass rate's 95 % Wilson score interval.
//! - [`mcnemar`]: the exact two-sided McNemar test on the cases whose verdict changed (a binomial
//!   test of the discordant pairs at p = 1/2).
//! - [`paired_mean_difference`]: the mean of per-case score differences with its 95 % t
//!   interval (cases are the units; under repeats a case's mean over its samples is the unit).
//! - [`min_detectable_pass_rate`] and [`min_detectable_mean`]: the smallest change a suite of
//!   this size could call significant (80 % power).
//! - [`verdict`]: `regressed`, `improved` or `no significant change` at a significance level.
//!
//! The formulas are written out in `docs/reference/statistics.md`. The t distribution is
//! computed here from the regularized incomplete beta function, so the crate stays free of
//! dependencies.
//!
//! ```
//! use proposal_eval_engine::stats::{mcnemar, verdict, wilson, Verdict};
//!
//! // 150 of 200 cases passed: 75.0 %, between 68.6 % and 80.5 %.
//! let interval = wilson(150, 200).unwrap();
//! assert_eq!(format!("{:.3} {:.3}", interval.low, interval.high), "0.686 0.805");
//! // 9 cases went from pass to fail, 1 from fail to pass.
//! assert!((mcnemar(9, 1) - 0.021_484_375).abs() < 1e-12);
//! assert_eq!(verdict(9, 1, 0.05), Verdict::Regressed);
//! assert_eq!(verdict(9, 1, 0.01), Verdict::NoSignificantChange);
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// The standard normal quantile at 0.975: the z of a two-sided 95 % interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The power the minimum detectable effects are computed for.
pub const POWER: f64 = 0.8;

/// The significance level `compare` uses unless told otherwise (`--alpha`).
pub const DEFAULT_ALPHA: f64 = 0.05;

/// A two-sided interval.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The lower bound.
    pub low: f64,
    /// The upper bound.
    pub high: f64,
}

/// The 95 % Wilson score interval of a pass rate of `successes` out of `n`; `None` when `n` is 0.
///
/// Unlike the normal ("Wald") interval it stays inside [0, 1] and is not zero-width at 0 or `n`
/// successes, which is where a small suite often is.
///
/// ```
/// use proposal_eval_engine::stats::wilson;
/// let none_passed = wilson(0, 10).unwrap();
/// assert_eq!(none_passed.low, 0.0);
/// assert!((none_passed.high - 0.277_532_799_862_889_25).abs() < 1e-12);
/// ```
pub fn wilson(successes: usize, n: usize) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let (n, z2) = (n as f64, Z_95 * Z_95);
    let p = successes.min(n as usize) as f64 / n;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z_95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        // At 0 and n successes a bound is exactly 0 or 1; rounding must not move it off.
        low: if successes == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if successes as f64 >= n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// The exact two-sided McNemar p-value of `pass_to_fail` and `fail_to_pass` discordant cases:
/// twice the binomial tail P(X ≤ min) for X ~ Binomial(pass_to_fail + fail_to_pass, 1/2), at
/// most 1. No discordant case gives 1.
///
/// ```
/// use proposal_eval_engine::stats::mcnemar;
/// assert_eq!(mcnemar(0, 6), 0.031_25); // 2 / 2^6
/// assert_eq!(mcnemar(3, 3), 1.0);
/// ```
pub fn mcnemar(pass_to_fail: usize, fail_to_pass: usize) -> f64 {
    let n = pass_to_fail + fail_to_pass;
    let low = pass_to_fail.min(fail_to_pass);
    if n == 0 || 2 * low >= n {
        return 1.0;
    }
    // The terms C(n, k) / 2^n for k = 0..=low. Up to n = 1000 they are summed as they are (2^-n
    // is a normal f64; small counts come out exact); past that, P(X ≤ low) = I_{1/2}(n − low,
    // low + 1), the regularized incomplete beta, whose continued fraction takes about √n steps.
    if n <= 1000 {
        let mut term = 0.5f64.powi(n as i32);
        let mut sum = term;
        for k in 1..=low {
            term *= (n - k + 1) as f64 / k as f64;
            sum += term;
        }
        return (2.0 * sum).min(1.0);
    }
    (2.0 * incomplete_beta((n - low) as f64, (low + 1) as f64, 0.5)).min(1.0)
}

/// The fewest discordant cases, all in one direction, that [`mcnemar`] calls significant at
/// `alpha` (6 at 0.05: 2 / 2^6 ≤ 0.05 < 2 / 2^5). `alpha` is clamped to (0, 1).
pub fn fewest_significant_flips(alpha: f64) -> usize {
    let alpha = alpha.clamp(f64::MIN_POSITIVE, 1.0);
    // 2 · 2^-k ≤ alpha  ⇔  k ≥ 1 - log2(alpha)
    let mut k = (1.0 - alpha.log2()).ceil().max(1.0) as usize;
    // Guard the rounding of the logarithm at exact powers of two.
    while k > 1 && mcnemar(0, k - 1) <= alpha {
        k -= 1;
    }
    while mcnemar(0, k) > alpha {
        k += 1;
    }
    k
}

/// What a change is at a significance level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly more cases went from pass to fail than the other way.
    Regressed,
    /// Significantly more cases went from fail to pass than the other way.
    Improved,
    /// The difference is within what chance makes at this size.
    NoSignificantChange,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::NoSignificantChange => "no significant change",
        })
    }
}

/// The verdict of a paired comparison: significant when the [`mcnemar`] p-value is at most
/// `alpha`, in the direction of the larger discordant count.
pub fn verdict(pass_to_fail: usize, fail_to_pass: usize, alpha: f64) -> Verdict {
    if mcnemar(pass_to_fail, fail_to_pass) > alpha {
        Verdict::NoSignificantChange
    } else if pass_to_fail > fail_to_pass {
        Verdict::Regressed
    } else {
        Verdict::Improved
    }
}

/// The mean of paired differences with its 95 % t interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanDifference {
    /// The pairs (cases).
    pub n: usize,
    /// The mean difference (after − before).
    pub mean: f64,
    /// The differences' standard deviation (n − 1).
    pub std_dev: f64,
    /// `std_dev / √n`.
    pub std_error: f64,
    /// The 95 % interval: `mean ± t(0.975, n − 1) · std_error`.
    pub interval: Interval,
    /// The two-sided p-value of the paired t test of a mean difference of 0.
    pub p_value: f64,
}

/// The mean of `differences` (one per case: its score after minus before) with its 95 % t
/// interval; `None` for fewer than two (no spread to estimate).
///
/// ```
/// use proposal_eval_engine::stats::paired_mean_difference;
/// let d = paired_mean_difference(&[-0.5, 0.0, -0.25, -0.25]).unwrap();
/// assert_eq!(d.mean, -0.25);
/// // t(0.975, 3) = 3.182446305; sd = 0.204124145; se = sd / 2
/// assert!((d.interval.low - (-0.25 - 3.182446305 * 0.102062073)).abs() < 1e-8);
/// assert!((d.p_value - 0.091_721_113).abs() < 1e-8);
/// ```
pub fn paired_mean_difference(differences: &[f64]) -> Option<MeanDifference> {
    let n = differences.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = differences.iter().sum::<f64>() / nf;
    let var = differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let std_dev = var.sqrt();
    let std_error = std_dev / nf.sqrt();
    let df = nf - 1.0;
    let half = t_quantile(0.975, df) * std_error;
    let p_value = if std_error == 0.0 {
        if mean == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        t_two_sided_p(mean / std_error, df)
    };
    Some(MeanDifference {
        n,
        mean,
        std_dev,
        std_error,
        interval: Interval {
            low: mean - half,
            high: mean + half,
        },
        p_value,
    })
}

/// The smallest change of a pass rate that `n` paired cases, `discordant_spread` being the
/// standard deviation of the per-case changes (−1, 0 or +1), detect at `alpha` with 80 % power:
/// `(t(1 − alpha/2, n − 1) + t(0.8, n − 1)) · spread / √n`, and never less than
/// [`fewest_significant_flips`]`/ n`, the smallest change the exact test can call significant at
/// all. `None` when even every case changing the same way would not be significant.
pub fn min_detectable_pass_rate(n: usize, discordant_spread: f64, alpha: f64) -> Option<f64> {
    let fewest = fewest_significant_flips(alpha);
    if n < fewest {
        return None;
    }
    let floor = fewest as f64 / n as f64;
    Some(min_detectable_mean(n, discordant_spread, alpha).map_or(floor, |m| m.max(floor)))
}

/// The smallest mean paired difference `n` cases whose differences spread by `std_dev` detect
/// at `alpha` with 80 % power: `(t(1 − alpha/2, n − 1) + t(0.8, n − 1)) · std_dev / √n`;
/// `None` for fewer than two cases.
pub fn min_detectable_mean(n: usize, std_dev: f64, alpha: f64) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let df = (n - 1) as f64;
    let factor = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df);
    Some(factor * std_dev / (n as f64).sqrt())
}

/// The quantile of Student's t distribution with `df` degrees of freedom at probability `p`
/// (0 < p < 1): the `t` with P(T ≤ t) = p.
///
/// Newton's method on the upper tail, from t = 0: the tail is convex for t > 0, so every step
/// lands short of the root and the iteration climbs to it without overshooting (doubling while
/// far, quadratically when near).
///
/// ```
/// use proposal_eval_engine::stats::t_quantile;
/// // The table value t(0.975, 10) = 2.228.
/// assert!((t_quantile(0.975, 10.0) - 2.228_138_851_986_274_7).abs() < 1e-9);
/// ```
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let target = 1.0 - p;
    let ln_density_norm =
        ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * std::f64::consts::PI).ln();
    let mut t = 0.0f64;
    for _ in 0..1000 {
        let tail = t_upper_tail(t, df);
        let density = (ln_density_norm - (df + 1.0) / 2.0 * (t * t / df).ln_1p()).exp();
        let step = (tail - target) / density;
        if !step.is_finite() {
            break;
        }
        t += step;
        if step.abs() <= 1e-14 * t.abs().max(1.0) {
            break;
        }
    }
    t
}

/// P(T > t) for t ≥ 0: `I_x(df/2, 1/2) / 2`, x = df / (df + t²).
fn t_upper_tail(t: f64, df: f64) -> f64 {
    0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom:
/// `1 − I_x(df/2, 1/2) / 2` for t ≥ 0, with x = df / (df + t²).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided p-value of a t statistic: P(|T| ≥ |t|) = I_x(df/2, 1/2), x = df / (df + t²).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (evaluated with
/// the modified Lentz method), on the side of x where it converges fast.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of I_x(a, b): 1 / (1 + d1 / (1 + d2 / (1 + …))), with
/// d(2m+1) = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and d(2m) = m(b−m)x / ((a+2m−1)(a+2m)).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut f = d;
    // Large `a` (a big suite's df / 2) needs on the order of √a steps.
    for m in 1..100_000 {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        f *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        f *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

/// ln Γ(x) for x > 0: the Lanczos approximation (g = 7, nine coefficients), about 15 digits.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
// Reference values are written as their source printed them (17 digits).
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance * expected.abs().max(1e-300),
            "{actual} is not {expected} (relative tolerance {tolerance})"
        );
    }

    // Exact values: 2 · Σ_{k ≤ min} C(n, k) / 2^n computed in rational arithmetic (Python's
    // fractions and math.comb), printed to 17 digits by mpmath 1.3.0.
    #[test]
    fn mcnemar_is_the_exact_binomial_tail() {
        // Small counts: exact fractions.
        assert_eq!(mcnemar(1, 5), 0.218_75); // 2 · 7/64
        assert_eq!(mcnemar(5, 1), 0.218_75);
        assert_eq!(mcnemar(0, 6), 0.031_25); // 2/64
        assert_eq!(mcnemar(0, 5), 0.0625); // 2/32: 5 flips are not enough at 0.05
        close(mcnemar(2, 8), 0.109_375, 1e-14); // 2 · 56/1024
        close(mcnemar(10, 0), 0.001_953_125, 1e-14); // 2/1024
        assert_eq!(mcnemar(3, 3), 1.0);
        assert_eq!(mcnemar(0, 0), 1.0);
        assert_eq!(mcnemar(0, 1), 1.0);
        // Large counts.
        close(mcnemar(30, 60), 0.002_060_265_680_963_075_6, 1e-10);
        close(mcnemar(120, 80), 0.005_685_155_996_750_305_1, 1e-10);
        close(mcnemar(400, 500), 0.000_956_444_136_918_946_07, 1e-9);
        // Past 1000 discordant cases the scale is set in logs (2^-n underflows).
        close(mcnemar(900, 1100), 8.457_089_535_503_927_3e-6, 1e-9);
        close(mcnemar(5000, 5300), 0.003_215_819_673_645_239, 1e-9);
        close(mcnemar(40, 1000), 4.867_315_547_354_427_9e-241, 1e-9);
        assert_eq!(mcnemar(0, 2000), 0.0);
        close(mcnemar(1000, 1000), 1.0, 0.0);
    }

    #[test]
    fn fewest_significant_flips_matches_the_test() {
        assert_eq!(fewest_significant_flips(0.05), 6);
        assert_eq!(fewest_significant_flips(0.01), 8); // 2/256 ≤ 0.01 < 2/128
        assert_eq!(fewest_significant_flips(0.0625), 5); // exactly 2/32
        assert_eq!(fewest_significant_flips(1.0), 1);
    }

    #[test]
    fn verdicts_follow_the_p_value_and_direction() {
        assert_eq!(verdict(6, 0, 0.05), Verdict::Regressed);
        assert_eq!(verdict(0, 6, 0.05), Verdict::Improved);
        assert_eq!(verdict(5, 0, 0.05), Verdict::NoSignificantChange);
        assert_eq!(verdict(0, 0, 0.05), Verdict::NoSignificantChange);
        assert_eq!(
            Verdict::NoSignificantChange.to_string(),
            "no significant change"
        );
        assert_eq!(
            serde_json::to_string(&Verdict::NoSignificantChange).unwrap(),
            "\"no_significant_change\""
        );
    }

    // Wilson bounds (p + z²/2n ± z √(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = √2 erf⁻¹(0.95),
    // computed by mpmath 1.3.0 at 40 digits.
    #[test]
    fn wilson_bounds_at_zero_n_and_between() {
        let w = wilson(0, 10).unwrap();
        assert_eq!(w.low, 0.0);
        close(w.high, 0.277_532_799_862_889_25, 1e-12);
        let w = wilson(10, 10).unwrap();
        close(w.low, 0.722_467_200_137_110_75, 1e-12);
        assert_eq!(w.high, 1.0);
        let w = wilson(3, 4).unwrap();
        close(w.low, 0.300_641_842_582_401_88, 1e-12);
        close(w.high, 0.954_412_739_190_299_44, 1e-12);
        let w = wilson(150, 200).unwrap();
        close(w.low, 0.685_659_016_879_541_69, 1e-12);
        close(w.high, 0.804_918_319_931_825_03, 1e-12);
        let w = wilson(81, 263).unwrap();
        close(w.low, 0.255_288_519_878_274_23, 1e-12);
        close(w.high, 0.366_209_576_982_800_07, 1e-12);
        let w = wilson(1, 1).unwrap();
        close(w.low, 0.206_549_314_377_237_39, 1e-12);
        assert_eq!(w.high, 1.0);
        assert_eq!(wilson(0, 0), None);
    }

    // Student's t quantiles: the tables (NIST/SEMATECH e-Handbook, table 1.3.6.7.2, to 3
    // places) agree with these 17-digit values, found by bisection on mpmath 1.3.0's
    // regularized incomplete beta at 40 digits.
    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, q975, q80) in [
            (1.0, 12.706_204_736_174_705, 1.376_381_920_471_173_5),
            (2.0, 4.302_652_729_749_463_9, 1.060_660_171_779_821_3),
            (3.0, 3.182_446_305_283_709_6, 0.978_472_312_363_304_44),
            (5.0, 2.570_581_835_636_315_5, 0.919_543_780_240_826_03),
            (10.0, 2.228_138_851_986_274_7, 0.879_057_828_550_588_69),
            (29.0, 2.045_229_642_132_704_3, 0.854_191_985_881_855_66),
            (30.0, 2.042_272_456_301_238_3, 0.853_767_261_471_297_63),
            (100.0, 1.983_971_518_523_552_3, 0.845_230_424_491_016_08),
            (1000.0, 1.962_339_080_826_408_5, 0.841_980_822_162_428_56),
        ] {
            close(t_quantile(0.975, df), q975, 1e-10);
            close(t_quantile(0.8, df), q80, 1e-10);
            close(t_quantile(0.025, df), -q975, 1e-10);
        }
        // At df = 20,000 the Cornish-Fisher expansion z + g1/ν + g2/ν² + g3/ν³ (mpmath, 30
        // digits) is exact to far below 1e-10: 1.2815938962102155 at p = 0.9.
        close(t_quantile(0.9, 20_000.0), 1.281_593_896_210_215_5, 1e-10);
        // Far out, it tends to the normal's 1.959964.
        close(t_quantile(0.975, 1e6), Z_95, 1e-5);
        assert_eq!(t_quantile(0.5, 4.0), 0.0);
        assert!(t_quantile(0.5, 0.0).is_nan());
    }

    #[test]
    fn t_interval_of_paired_differences() {
        // Differences -0.5, 0, -0.25, -0.25: mean -0.25, sd √(1/24) = 0.2041241452, se 0.1020620726;
        // half width t(0.975, 3) · se = 3.1824463053 · 0.1020620726 = 0.3248070619;
        // t = -2.449489743, two-sided p = I_{3/(3+6)}(1.5, 0.5). Reference values: mpmath 1.3.0
        // at 40 digits (betainc, and the quantile by bisection on it).
        let d = paired_mean_difference(&[-0.5, 0.0, -0.25, -0.25]).unwrap();
        assert_eq!(d.n, 4);
        assert_eq!(d.mean, -0.25);
        close(d.std_dev, 0.204_124_145_231_931_5, 1e-12);
        close(d.interval.low, -0.574_807_065_906_277_89, 1e-10);
        close(d.interval.high, 0.074_807_065_906_277_887, 1e-9);
        close(d.p_value, 0.091_721_113_311_571_914, 1e-10);
        assert_eq!(paired_mean_difference(&[0.3]), None);
        let none = paired_mean_difference(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!(
            (none.interval.low, none.interval.high, none.p_value),
            (0.0, 0.0, 1.0)
        );
    }

    #[test]
    fn minimum_detectable_effects() {
        // No discordant case among 200: only the exact test's floor, 6 / 200.
        assert_eq!(min_detectable_pass_rate(200, 0.0, 0.05), Some(0.03));
        // Too few cases for any change to be significant.
        assert_eq!(min_detectable_pass_rate(5, 0.5, 0.05), None);
        // 100 cases spread by 0.3: (t(0.975, 99) + t(0.8, 99)) · 0.3 / 10, the quantiles from
        // mpmath 1.3.0 as above.
        let expected = (1.984_216_951_586_417_5 + 0.845_267_031_953_496_82) * 0.03;
        close(min_detectable_mean(100, 0.3, 0.05).unwrap(), expected, 1e-9);
        assert_eq!(min_detectable_mean(1, 0.3, 0.05), None);
    }

    // A second, independent implementation: statrs 0.19 (its StudentsT and Binomial).
    #[test]
    fn agrees_with_statrs() {
        use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};
        for df in [1.0, 2.0, 4.0, 7.0, 15.0, 39.0, 120.0, 999.0, 20_000.0] {
            let t = StudentsT::new(0.0, 1.0, df).unwrap();
            // statrs's inverse drifts at very large df (2e-7 at 20,000; see below).
            let tolerance = if df > 1000.0 { 1e-6 } else { 1e-7 };
            for p in [0.6, 0.8, 0.9, 0.975, 0.995] {
                close(t_quantile(p, df), t.inverse_cdf(p), tolerance);
            }
            for x in [0.3, 1.5, 2.5, 6.0] {
                close(t_two_sided_p(x, df), 2.0 * (1.0 - t.cdf(x)), 1e-7);
            }
        }
        for (b, c) in [
            (0u64, 7u64),
            (4, 11),
            (33, 61),
            (480, 520),
            (700, 800),
            (2_600, 2_750),
        ] {
            let tail = Binomial::new(0.5, b + c).unwrap().cdf(b.min(c));
            close(mcnemar(b as usize, c as usize), (2.0 * tail).min(1.0), 1e-9);
        }
    }

    #[test]
    fn ln_gamma_at_known_points() {
        close(ln_gamma(1.0).exp(), 1.0, 1e-14);
        close(ln_gamma(5.0).exp(), 24.0, 1e-13);
        close(ln_gamma(0.5).exp(), std::f64::consts::PI.sqrt(), 1e-14);
        close(ln_gamma(0.25).exp(), 3.625_609_908_221_908_3, 1e-13);
    }
}
