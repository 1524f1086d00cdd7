//! Times the fold a whole run makes at its end: `results.jsonl` and the run's journal read, the
//! latest line of each case kept, `results.jsonl`, `report.json` and `report.html` written.
//!
//! `fold_time REPORT_DIR [rounds]`: `REPORT_DIR` is a `target/proposal-eval` a whole run of a
//! generated suite left (its `runs/` journal and `results.jsonl`). Before each round the
//! journals' times are set to now, so the fold takes them up as it does at the end of a run.

use std::path::Path;
use std::time::{Instant, SystemTime};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: fold_time REPORT_DIR [rounds]");
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("rounds"));
    let dir = Path::new(&dir);
    let mut times = Vec::new();
    for _ in 0..rounds {
        for journal in std::fs::read_dir(dir.join("runs"))
            .expect("runs/")
            .flatten()
        {
            let file = std::fs::File::options()
                .append(true)
                .open(journal.path())
                .expect("a journal");
            file.set_modified(SystemTime::now()).expect("its time");
        }
        // A change in the report, as a run makes: every file is written.
        let _ = std::fs::remove_file(dir.join("report.json"));
        let start = Instant::now();
        let report = proposal_eval::__internal::report::fold_at_run_end(dir).expect("the fold");
        let took = start.elapsed().as_secs_f64();
        println!("fold of {} cases: {took:.3} s", report.totals.cases);
        times.push(took);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "median {:.3} s (min {:.3}, max {:.3}) over {rounds} rounds",
        times[rounds / 2],
        times[0],
        times[rounds - 1]
    );
}
