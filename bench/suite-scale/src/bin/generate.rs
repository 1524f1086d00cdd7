//! Writes a generated suite: `generate <suite folder> <count> [model|no-model|rubric]`, run from
//! `bench/suite-scale` (see [`suite_scale_bench::generate`] for the layout).

use suite_scale_bench::Shape;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parsed = match &args[1..] {
        [suite, count] => Some((suite, count, Shape::Model)),
        [suite, count, shape] if shape == "model" => Some((suite, count, Shape::Model)),
        [suite, count, shape] if shape == "no-model" => Some((suite, count, Shape::NoModel)),
        [suite, count, shape] if shape == "rubric" => Some((suite, count, Shape::Rubric)),
        _ => None,
    };
    let Some((suite, Ok(count), shape)) = parsed.map(|(s, c, shape)| (s, c.parse(), shape)) else {
        eprintln!("usage: generate <suite folder, crate-relative> <count> [model|no-model|rubric]");
        std::process::exit(2);
    };
    match suite_scale_bench::generate(suite, count, shape) {
        Ok(bytes) => eprintln!(
            "wrote {count} {shape:?} cases to {suite} ({:.1} MB)",
            bytes as f64 / 1e6
        ),
        Err(e) => {
            eprintln!("generate: cannot write {suite}: {e}");
            std::process::exit(1);
        }
    }
}
