//! Two run reports side by side: what `cargo proposal-eval compare BASE NEW` prints, and the
//! comparison `report --compare BASE` embeds in `report.html`.
//!
//! A case is the same case in both reports when its package, test binary, suite folder and case
//! path are (the key the report itself keeps cases by). Each case in both is a regression (passed,
//! now fails), a fix (failed, now passes), a score change (same verdict, the mean score moved by
//! at least `min_delta`) or unchanged; cases in one report only are added or removed. Field
//! accuracy is compared per suite and field. A regression is judged case by case, never on a
//! mean: an improvement elsewhere cannot hide one.
//!
//! Per suite and overall the comparison also says whether the change is larger than chance
//! (pass rates with Wilson intervals, the exact McNemar test, the paired score difference, the
//! minimum detectable effect, a verdict at `alpha`, usage before and after): `confidence`.
//!
//! Both reports are sorted by that key when built, so the cases are matched by one merge walk;
//! a baseline edited by hand out of order is sorted first. A report is read as a [`RunView`]
//! (`view`): only what a comparison uses, borrowed from the file's bytes.
//!
//! Each module has one job: `view` (what is read of a report), `changes` (the comparison),
//! `confidence` (its statistics, and their text), `render` (the terminal and markdown forms).

mod changes;
mod confidence;
mod render;
mod view;

pub use changes::{compare, Comparison, DEFAULT_MIN_DELTA};
pub use view::{read_view, RunView};
