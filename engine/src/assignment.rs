//! Optimal one-to-one assignment, shared by the two `any_order` comparisons: strict proposals
//! paired with the fewest mismatches overall, and field-accuracy array elements paired so that
//! as many as possible match.

/// Optimal assignment of rows to columns (Hungarian algorithm), minimizing the total cost; among
/// equally good pairings, the one that keeps the most rows at their own index. Returns the
/// (row, column) pairs, `min(rows, columns)` of them, by row.
pub(crate) fn assign(cost: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let n = cost.len();
    let m = cost.first().map_or(0, Vec::len);
    if n == 0 || m == 0 {
        return Vec::new();
    }
    let transpose = n > m;
    let (rows, cols) = if transpose { (m, n) } else { (n, m) };
    let scale = (rows as i64) + 1;
    let at = |r: usize, c: usize| -> i64 {
        let (i, j) = if transpose { (c, r) } else { (r, c) };
        cost[i][j] as i64 * scale + i64::from(i != j)
    };
    const INF: i64 = i64::MAX / 4;
    let mut u = vec![0i64; rows + 1];
    let mut v = vec![0i64; cols + 1];
    let mut p = vec![0usize; cols + 1];
    let mut way = vec![0usize; cols + 1];
    for r in 1..=rows {
        p[0] = r;
        let mut j0 = 0;
        let mut minv = vec![INF; cols + 1];
        let mut used = vec![false; cols + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = INF;
            let mut j1 = 0;
            for j in 1..=cols {
                if !used[j] {
                    let cur = at(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=cols {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut pairs: Vec<(usize, usize)> = (1..=cols)
        .filter(|&c| p[c] != 0)
        .map(|c| {
            let r = p[c] - 1;
            if transpose {
                (c - 1, r)
            } else {
                (r, c - 1)
            }
        })
        .collect();
    pairs.sort_unstable();
    pairs
}
