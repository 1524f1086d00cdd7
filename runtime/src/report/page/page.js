// report.html's script: reads the embedded report.json (and a comparison), draws the summary,
// the charts (inline SVG), the filtered and paged case rows and an opened case. The view is in
// the URL hash (#verdict=failed&suite=…&evaluator=…&q=…&sort=score&order=asc&page=2&case=…),
// so a link opens the same view. No network, no library.
"use strict";
(function () {
  const PAGE_SIZE = 100;
  const CHART_ROWS = 30;
  const $ = (id) => document.getElementById(id);
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  const pct = (x) => (x * 100).toFixed(1) + "%";
  const score = (x) => (x == null ? "–" : x.toFixed(2));
  const plural = (n, one, many) => n + " " + (n === 1 ? one : many || one + "s");
  // Numbers as the CLI writes them (cli/src/comparison/confidence.rs): p-values to four places at most,
  // durations over a second in seconds, costs under $0.0001 to two significant digits.
  const pText = (p) => (p < 0.0001 ? "< 0.0001" : p.toFixed(4).replace(/0+$/, "").replace(/\.$/, ""));
  const duration = (ms) => (ms < 1000 ? ms.toFixed(1) + " ms" : (ms / 1000).toFixed(1) + " s");
  const money = (usd) => "$" + (usd > 0 && usd < 0.0001 ? usd.toPrecision(2) : usd.toFixed(4));

  // Two stages. The script runs while the browser still reads the file: `report-summary` holds
  // report.json with only its first page of cases, enough for the first screen; the whole
  // report (`report-data`, `null` when the summary already holds every case) is read when the
  // document has loaded, and then the filters, other pages and any case work.
  const started = performance.now();
  function readJson(id) {
    const el = $(id);
    const value = JSON.parse(el.textContent);
    el.textContent = ""; // read once: the text need not stay in the document
    return value;
  }
  function loadError(e) {
    const p = $("load-error");
    p.textContent = "The report's data could not be read (" + e.message +
      "): rebuild it with `cargo proposal-eval report`.";
    p.hidden = false;
  }
  let report, comparison;
  try {
    report = readJson("report-summary");
    comparison = readJson("compare-data");
  } catch (e) {
    loadError(e);
    return;
  }
  let complete = false; // whether `cases` is every case
  let cases = [];
  const suites = report.suites || [];
  const totalCases = () => (complete ? cases.length : (report.totals || {}).cases || cases.length);

  // ---- identity and per-case facts computed once --------------------------------------------

  // A case's id as `CaseId::text` writes it (report/entry.rs): package, binary, suite folder and
  // case path, so two suites whose folders share a last name keep their rows and links apart.
  const caseId = (c) => c.package + "/" + c.binary + "/" + c.suite_dir + "//" + c.case;
  const suiteKey = (s) => s.package + "/" + s.binary + "/" + s.suite_dir;
  const suiteNames = {};
  for (const s of suites) suiteNames[s.suite] = (suiteNames[s.suite] || 0) + 1;
  // A suite's filter value: its name, or package/binary/folder when two share the name.
  const suiteValue = (s) => (suiteNames[s.suite] > 1 ? suiteKey(s) : s.suite);
  const suiteLabel = (s) => (suiteNames[s.suite] > 1 ? s.suite + " (" + s.package + "/" + s.binary + " " + s.suite_dir + ")" : s.suite);
  let caseSuite = [];
  const byId = new Map();
  const byTest = new Map();
  function setCases(list, all) {
    cases = list;
    complete = all;
    caseSuite = cases.map((c) => suiteValue(c));
    byId.clear();
    byTest.clear();
    cases.forEach((c, i) => {
      byId.set(caseId(c), i);
      if (!byTest.has(c.test)) byTest.set(c.test, i);
    });
    haystacks = null;
    cached = { key: null, rows: null };
  }
  let haystacks = null; // built on the first text filter
  function haystack(i) {
    if (!haystacks) {
      haystacks = cases.map((c) => {
        const parts = [c.test, c.suite, c.description || "", c.failure || ""];
        for (const e of c.evaluators || []) parts.push(e.evaluator, e.summary, (e.misses || []).join("\n"));
        return parts.join("\n").toLowerCase();
      });
    }
    return haystacks[i];
  }

  // ---- the view in the hash ------------------------------------------------------------------

  const KEYS = ["verdict", "suite", "evaluator", "q", "sort", "order", "page", "case"];
  function readView() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const view = {};
    for (const k of KEYS) view[k] = params.get(k) || "";
    return view;
  }
  function hashOf(view) {
    const params = new URLSearchParams();
    for (const k of KEYS) if (view[k]) params.set(k, view[k]);
    return "#" + params.toString();
  }
  // Changes the view: a new history entry, or (typing) the current one replaced.
  function go(changes, replace) {
    const view = Object.assign(readView(), changes);
    const hash = hashOf(view);
    if (replace) location.replace(hash);
    else location.hash = hash;
  }

  // ---- filtering and sorting -----------------------------------------------------------------

  // The checks and budget columns: the evaluator's verdict, its summary on hover; "–" where
  // it did not run.
  function verdictCell(e) {
    if (!e) return '<td class="muted">–</td>';
    return '<td><span class="' + (e.passed ? "pass" : "fail") + '" title="' + esc(e.summary) + '">' +
      (e.passed ? "pass" : "fail") + " " + e.score.toFixed(2) + "</span></td>";
  }
  function evaluatorOf(c, name) {
    for (const e of c.evaluators || []) if (e.evaluator === name) return e;
    return null;
  }
  let cached = { key: null, rows: null };
  function filtered(view) {
    const key = [view.verdict, view.suite, view.evaluator, view.q, view.sort, view.order].join("\u0000");
    if (cached.key === key) return cached.rows;
    const q = view.q.trim().toLowerCase();
    const rows = [];
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      if (view.suite && caseSuite[i] !== view.suite) continue;
      // With an evaluator chosen, the verdict is that evaluator's.
      let passed = c.passed;
      if (view.evaluator) {
        const e = evaluatorOf(c, view.evaluator);
        if (!e) continue;
        passed = e.passed;
      }
      if (view.verdict === "failed" && passed) continue;
      if (view.verdict === "passed" && !passed) continue;
      if (q && !haystack(i).includes(q)) continue;
      rows.push(i);
    }
    const sorter = SORTS[view.sort];
    if (sorter) {
      const dir = view.order === "desc" ? -1 : 1;
      rows.sort((a, b) => dir * sorter(cases[a], cases[b]) || a - b);
    }
    cached = { key, rows };
    return rows;
  }
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const SORTS = {
    verdict: (a, b) => cmp(a.passed, b.passed),
    case: (a, b) => cmp(a.test, b.test),
    suite: (a, b) => cmp(a.suite, b.suite) || cmp(a.test, b.test),
    score: (a, b) => cmp(a.score == null ? -1 : a.score, b.score == null ? -1 : b.score),
    cost: (a, b) => cmp(usageCost(a), usageCost(b)),
  };
  const usageCost = (c) => (c.usage ? (c.usage.cost_usd || 0) * 1e6 + c.usage.input_tokens + c.usage.output_tokens : 0);

  // How a case used its recording, in the words of the CLI table and JUnit.
  const RECORDING_TEXT = {
    replayed: "replayed",
    replayed_stale: "replayed (stale)",
    recorded: "recorded",
    pending: "recorded (pending review)",
    stale: "stale",
    none: "none",
    not_recorded: "not recorded",
  };
  const recordingText = (r) => RECORDING_TEXT[r] || r;

  // ---- summary -------------------------------------------------------------------------------

  function usageText(u) {
    if (!u) return "no model call";
    let text = plural(u.calls, "call") + ", " + u.input_tokens + " in / " + u.output_tokens +
      " out tokens, " + duration(u.latency_ms);
    if (u.cost_usd != null) text += ", " + money(u.cost_usd);
    if (u.unpriced_calls) text += " (" + u.unpriced_calls + " unpriced)";
    // The rubric judge's share apart from the agent's.
    if (u.judge) {
      const share = (who, x) => who + " " + plural(x.calls, "call") + (x.cost_usd != null ? " $" + x.cost_usd.toFixed(4) : "");
      text += "; " + share("agent", u.agent || { calls: u.calls - u.judge.calls }) + ", " + share("judge", u.judge);
    }
    return text;
  }
  function rateText(t) {
    const i = t.pass_rate_interval || t.interval;
    return pct(t.pass_rate) + (i ? " [" + pct(i.low) + ", " + pct(i.high) + "]" : "");
  }
  function drawSummary() {
    const t = report.totals || { cases: 0, passed: 0, failed: 0, pass_rate: 0 };
    $("meta").textContent = "Built " + (report.generated_at || "?") +
      (report.latest_run ? " · latest run " + report.latest_run : "") +
      " · " + plural(suites.length, "suite");
    const card = (id, label, value, cls) =>
      '<div class="card"><span class="n ' + (cls || "") + '" id="' + id + '">' + esc(value) +
      '</span><span class="muted">' + label + "</span></div>";
    let html = '<div class="cards">' +
      card("total-cases", "cases", t.cases) +
      card("total-passed", "passed", t.passed, "pass") +
      card("total-failed", "failed", t.failed, t.failed ? "fail" : "") +
      card("pass-rate", "pass rate, 95% interval " + (t.pass_rate_interval ?
        "[" + pct(t.pass_rate_interval.low) + ", " + pct(t.pass_rate_interval.high) + "]" : "–"),
        pct(t.pass_rate));
    if (t.older) html += card("total-older", "from an older run", t.older, "older");
    html += "</div><p>Recordings: " + t.replayed + " replayed, " + t.replayed_stale +
      " replayed stale, " + t.recorded + " recorded, " + t.stale + " refused as stale, " +
      t.no_recording + " without. Model calls: <span id=\"total-usage\">" + esc(usageText(t.usage)) +
      "</span>.</p>";
    const bad = report.unreadable_entries || [];
    if (bad.length) {
      html += '<div class="notice"><p>' + plural(bad.length, "unreadable entry line", "unreadable entry lines") +
        " left out:</p><ul>" + bad.map((b) => "<li>" + esc(b) + "</li>").join("") + "</ul></div>";
    }
    $("summary").innerHTML = html;
  }

  // ---- charts (inline SVG) -------------------------------------------------------------------

  // Horizontal bars: rows of { label, value (0..1), note, href, cls }.
  function barChart(id, caption, rows, total) {
    const rowH = 22, labelW = 220, barW = 300, noteW = 150;
    const h = rows.length * rowH + 4;
    let svg = '<svg id="' + id + '" role="img" aria-labelledby="' + id + '-cap" width="' +
      (labelW + barW + noteW) + '" height="' + h + '" viewBox="0 0 ' + (labelW + barW + noteW) + " " + h + '">';
    rows.forEach((r, k) => {
      const y = k * rowH + 2;
      const label = r.label.length > 32 ? "…" + r.label.slice(-31) : r.label;
      let bar = '<text x="' + (labelW - 6) + '" y="' + (y + 14) + '" text-anchor="end">' + esc(label) + "</text>" +
        '<rect class="track" x="' + labelW + '" y="' + (y + 3) + '" width="' + barW + '" height="14"/>' +
        '<rect class="' + (r.cls || "bar") + '" x="' + labelW + '" y="' + (y + 3) + '" width="' +
        (barW * Math.max(0, Math.min(1, r.value))).toFixed(1) + '" height="14"><title>' +
        esc(r.label + ": " + r.note) + "</title></rect>" +
        '<text x="' + (labelW + barW + 6) + '" y="' + (y + 14) + '">' + esc(r.note) + "</text>";
      if (r.href) bar = '<a href="' + esc(r.href) + '">' + bar + "</a>";
      svg += bar;
    });
    svg += "</svg>";
    const shown = total > rows.length ? " (the " + rows.length + " lowest of " + total + ")" : "";
    return '<figure class="chart"><figcaption id="' + id + '-cap">' + esc(caption + shown) +
      "</figcaption>" + (rows.length ? svg : '<p class="muted">nothing to show</p>') + "</figure>";
  }
  function histogram(id, caption, buckets) {
    const w = 480, h = 160, left = 36, bottom = 22, top = 14;
    const max = Math.max(1, ...buckets.map((b) => b.count));
    const colW = (w - left) / buckets.length;
    let svg = '<svg id="' + id + '" role="img" aria-labelledby="' + id + '-cap" width="' + w +
      '" height="' + h + '" viewBox="0 0 ' + w + " " + h + '">' +
      '<line class="axis" x1="' + left + '" y1="' + (h - bottom) + '" x2="' + w + '" y2="' + (h - bottom) + '"/>';
    buckets.forEach((b, k) => {
      const bh = ((h - bottom - top) * b.count) / max;
      const x = left + k * colW;
      svg += '<rect class="bar" x="' + (x + 2).toFixed(1) + '" y="' + (h - bottom - bh).toFixed(1) +
        '" width="' + (colW - 4).toFixed(1) + '" height="' + bh.toFixed(1) + '"><title>' +
        esc("scores " + b.from.toFixed(1) + "–" + b.to.toFixed(1) + ": " + plural(b.count, "case")) +
        "</title></rect>" +
        (b.count ? '<text x="' + (x + colW / 2).toFixed(1) + '" y="' + (h - bottom - bh - 3).toFixed(1) +
          '" text-anchor="middle">' + b.count + "</text>" : "") +
        '<text class="tick" x="' + (x + colW / 2).toFixed(1) + '" y="' + (h - 6) + '" text-anchor="middle">' +
        b.from.toFixed(1) + "-" + b.to.toFixed(1) + "</text>";
    });
    svg += "</svg>";
    return '<figure class="chart"><figcaption id="' + id + '-cap">' + esc(caption) + "</figcaption>" + svg + "</figure>";
  }
  function drawCharts() {
    const bySuite = suites.map((s) => ({
      label: suiteLabel(s),
      value: s.pass_rate,
      note: pct(s.pass_rate) + " of " + s.cases,
      href: hashOf({ suite: suiteValue(s) }),
      cls: "bar-pass",
    }));
    bySuite.sort((a, b) => a.value - b.value);
    const fields = new Map();
    for (const s of suites) {
      for (const f of s.field_accuracy || []) {
        const acc = fields.get(f.path) || { hits: 0, total: 0 };
        acc.hits += f.hits;
        acc.total += f.total;
        fields.set(f.path, acc);
      }
    }
    const byField = [...fields].map(([path, f]) => ({
      label: path,
      value: f.total ? f.hits / f.total : 0,
      note: pct(f.total ? f.hits / f.total : 0) + " (" + f.hits + "/" + f.total + ")",
    }));
    byField.sort((a, b) => a.value - b.value || cmp(a.label, b.label));
    const buckets = [];
    for (let k = 0; k < 10; k++) buckets.push({ from: k / 10, to: (k + 1) / 10, count: 0 });
    for (const s of suites) (s.score_distribution || []).forEach((b, k) => { if (buckets[k]) buckets[k].count += b.count; });
    $("charts").innerHTML =
      barChart("chart-suites", "Pass rate per suite", bySuite.slice(0, CHART_ROWS), bySuite.length) +
      barChart("chart-fields", "Accuracy per field", byField.slice(0, CHART_ROWS), byField.length) +
      histogram("chart-scores", "Score distribution (cases)", buckets);
  }

  // ---- comparison ----------------------------------------------------------------------------

  function drawComparison() {
    if (!comparison) return;
    const c = comparison;
    const points = (d) => (d >= 0 ? "+" : "") + (d * 100).toFixed(1) + " pt";
    let html = "<h2>Compared with " + esc(c.base.name) + "</h2><p>Pass rate " + pct(c.base.pass_rate) +
      " → " + pct(c.new.pass_rate) + " (" + points(c.new.pass_rate - c.base.pass_rate) + "); overall: <strong>" +
      esc((c.overall.verdict || "").replace(/_/g, " ")) + "</strong> at α = " + c.alpha + ".</p>";
    const named = {};
    for (const s of c.suites || []) named[s.suite] = (named[s.suite] || 0) + 1;
    const rows = (c.suites || []).map((s) => ({
      label: named[s.suite] > 1 ? s.suite + " (" + s.suite_dir + ")" : s.suite,
      value: s.new.pass_rate - s.base.pass_rate,
      s,
    }));
    // Deltas per suite: a diverging bar chart, then the numbers.
    const w = 640, rowH = 22, labelW = 200, mid = labelW + 160, half = 150;
    let svg = '<svg id="chart-deltas" role="img" aria-labelledby="chart-deltas-cap" width="' + w + '" height="' +
      (rows.length * rowH + 4) + '" viewBox="0 0 ' + w + " " + (rows.length * rowH + 4) + '">' +
      '<line class="axis" x1="' + mid + '" y1="0" x2="' + mid + '" y2="' + rows.length * rowH + '"/>';
    rows.forEach((r, k) => {
      const y = k * rowH + 2, len = Math.min(1, Math.abs(r.value)) * half;
      svg += '<text x="' + (labelW - 6) + '" y="' + (y + 14) + '" text-anchor="end">' + esc(r.label) + "</text>" +
        '<rect class="' + (r.value < 0 ? "bar-fail" : "bar-pass") + '" x="' + (r.value < 0 ? mid - len : mid).toFixed(1) +
        '" y="' + (y + 3) + '" width="' + len.toFixed(1) + '" height="14"><title>' + esc(r.label + ": " + points(r.value)) +
        "</title></rect>" + '<text x="' + (mid + half + 10) + '" y="' + (y + 14) + '">' + esc(points(r.value)) + "</text>";
    });
    svg += "</svg>";
    html += '<figure class="chart"><figcaption id="chart-deltas-cap">Pass rate change per suite</figcaption>' + svg + "</figure>";
    // The significance table, as `compare` prints it: the whole run, then each suite.
    const change = (before, after, text) => {
      const pct = before ? " (" + ((after - before) / before * 100 >= 0 ? "+" : "") +
        ((after - before) / before * 100).toFixed(1) + "%)" : "";
      return text(before) + " → " + text(after) + pct;
    };
    const usage = (x, key, text) => {
      if (!x.base_usage && !x.new_usage) return "–";
      const get = (u) => (u ? key(u) : 0);
      return change(get(x.base_usage), get(x.new_usage), text);
    };
    const detectable = (x) => (x.min_detectable_pass_rate != null ?
      (x.min_detectable_pass_rate * 100).toFixed(1) + " pp (pass rate)" :
      "none with " + x.paired + " paired") +
      (x.min_detectable_score != null ? ", " + x.min_detectable_score.toFixed(3) + " (score)" : "");
    html += '<table id="significance"><caption>Significance at α = ' + c.alpha + ' (95% intervals)</caption><thead><tr>' +
      '<th scope="col">Suite</th><th scope="col">Verdict</th><th scope="col">Baseline</th><th scope="col">Now</th>' +
      '<th scope="col" class="num">Pass → fail</th><th scope="col" class="num">Fail → pass</th>' +
      '<th scope="col" class="num">McNemar p</th><th scope="col">Mean score change</th><th scope="col">Detectable (MDE)</th>' +
      '<th scope="col">Tokens</th><th scope="col">Latency</th><th scope="col">Cost</th></tr></thead><tbody>';
    const overall = Object.assign({ suite: "overall" }, c.overall);
    for (const s of [overall].concat(c.suites || [])) {
      const name = s === overall ? "<strong>overall</strong>" : esc(s.suite) + ' <span class="muted">' +
        esc(s.package + "/" + s.binary + " " + s.suite_dir) + "</span>";
      html += '<tr data-suite="' + esc(s === overall ? "" : s.suite_dir) + '"><td>' + name + "</td><td>" +
        esc((s.verdict || "").replace(/_/g, " ")) + "</td><td>" + (s.base.interval ? rateText(s.base) : "–") +
        "</td><td>" + (s.new.interval ? rateText(s.new) : "–") + '</td><td class="num">' + s.pass_to_fail +
        '</td><td class="num">' + s.fail_to_pass + '</td><td class="num">' + esc(pText(s.p_value)) + "</td><td>" +
        (s.score ? (s.score.mean >= 0 ? "+" : "") + s.score.mean.toFixed(3) + " [" + s.score.interval.low.toFixed(3) + ", " +
          s.score.interval.high.toFixed(3) + "] (p " + pText(s.score.p_value) + ")" : "–") + "</td><td>" + esc(detectable(s)) +
        "</td><td>" + usage(s, (u) => u.input_tokens + u.output_tokens, String) +
        "</td><td>" + usage(s, (u) => u.latency_ms, duration) +
        "</td><td>" + usage(s, (u) => u.cost_usd || 0, money) + "</td></tr>";
    }
    html += "</tbody></table>";
    const verdict = (p) => (p == null ? "–" : p ? "pass" : "fail");
    const table = (id, title, list) => {
      if (!list || !list.length) return "";
      let t = "<h3>" + esc(title) + " (" + list.length + ')</h3><table id="' + id + '"><thead><tr><th scope="col">Case</th>' +
        '<th scope="col">Verdict</th><th scope="col">Score</th><th scope="col">Why</th></tr></thead><tbody>';
      for (const x of list) {
        const id = caseId(x);
        const name = x.new_passed != null ? '<a href="' + esc(hashOf({ case: id })) + '">' + esc(x.test) + "</a>" : esc(x.test);
        t += '<tr data-test="' + esc(x.test) + '" data-id="' + esc(id) + '"><td>' + name + "</td><td>" + verdict(x.base_passed) + " → " +
          verdict(x.new_passed) + "</td><td>" + score(x.base_score) + " → " + score(x.new_score) + "</td><td>" +
          esc(x.why || "") + "</td></tr>";
      }
      return t + "</tbody></table>";
    };
    html += table("regressions", "Regressions", c.regressions) + table("fixes", "Fixes", c.fixes) +
      table("score-changes", "Score changes", c.score_changes) + table("flaky", "Flaky", c.flaky) +
      table("added", "Added", c.added) + table("removed", "Removed", c.removed);
    $("comparison").innerHTML = html;
    $("comparison").hidden = false;
  }

  // ---- filters, rows, pager ------------------------------------------------------------------

  function fillFilters() {
    const suiteSelect = $("f-suite");
    for (const s of suites) {
      const o = document.createElement("option");
      o.value = suiteValue(s);
      o.textContent = suiteLabel(s);
      suiteSelect.appendChild(o);
    }
    const names = new Set();
    for (const s of suites) for (const e of s.evaluators || []) names.add(e.evaluator);
    for (const name of [...names].sort()) {
      const o = document.createElement("option");
      o.value = o.textContent = name;
      $("f-evaluator").appendChild(o);
    }
    $("f-verdict").addEventListener("change", (e) => go({ verdict: e.target.value, page: "" }));
    $("f-suite").addEventListener("change", (e) => go({ suite: e.target.value, page: "" }));
    $("f-evaluator").addEventListener("change", (e) => go({ evaluator: e.target.value, page: "" }));
    let typing = 0;
    $("f-text").addEventListener("input", (e) => {
      clearTimeout(typing);
      typing = setTimeout(() => go({ q: e.target.value, page: "" }, true), 200);
    });
    $("f-clear").addEventListener("click", () => go({ verdict: "", suite: "", evaluator: "", q: "", page: "" }));
    for (const b of document.querySelectorAll("button.sort")) {
      b.addEventListener("click", () => {
        const view = readView();
        const order = view.sort === b.dataset.sort && view.order !== "desc" ? "desc" : "asc";
        go({ sort: b.dataset.sort, order, page: "" });
      });
    }
  }
  function setSelect(el, value) {
    el.value = value;
    if (el.value !== value) {
      // A value from a link that no option has (a suite not in this report): shown as is.
      const o = document.createElement("option");
      o.value = o.textContent = value;
      el.appendChild(o);
      el.value = value;
    }
  }
  function drawRows(view) {
    setSelect($("f-verdict"), view.verdict);
    setSelect($("f-suite"), view.suite);
    setSelect($("f-evaluator"), view.evaluator);
    if (document.activeElement !== $("f-text")) $("f-text").value = view.q;
    for (const th of document.querySelectorAll("#case-table th")) {
      const b = th.querySelector("button.sort");
      if (b && b.dataset.sort === view.sort) th.setAttribute("aria-sort", view.order === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
    $("case-table").dataset.sorted = view.sort ? view.sort + " " + (view.order || "asc") : "";
    if (!complete && (view.verdict || view.suite || view.evaluator || view.q || view.sort || (parseInt(view.page, 10) || 1) > 1)) {
      $("count").textContent = "Reading " + plural(totalCases(), "case") + "…";
      $("rows").innerHTML = "";
      $("pager").innerHTML = "";
      return;
    }
    const rows = filtered(view);
    const all = totalCases();
    const pages = Math.max(1, Math.ceil((complete ? rows.length : all) / PAGE_SIZE));
    const page = Math.min(pages, Math.max(1, parseInt(view.page, 10) || 1));
    const from = (page - 1) * PAGE_SIZE, to = Math.min(rows.length, from + PAGE_SIZE);
    const filteredBy = view.verdict || view.suite || view.evaluator || view.q;
    $("count").textContent = (filteredBy ? rows.length + " of " + plural(all, "case") + " match" :
      plural(all, "case")) + (rows.length ? "; showing " + (from + 1) + "–" + to : "") + ".";
    const open = view.case;
    let html = "";
    for (let k = from; k < to; k++) {
      const i = rows[k], c = cases[i], id = caseId(c);
      const evals = (c.evaluators || []).map((e) =>
        '<span class="' + verdictClass(e) + '">' + esc(e.evaluator) + " " + e.score.toFixed(2) + "</span>").join(", ");
      html += '<tr data-test="' + esc(c.test) + '" data-id="' + esc(id) + '"' +
        (open === id || open === c.test ? ' class="open"' : "") + ">" +
        '<td><span class="badge ' + (c.passed ? "pass" : "fail") + '">' + (c.passed ? "pass" : "fail") + "</span>" +
        (c.older ? ' <span class="badge older" title="from a run older than the latest">older</span>' : "") + "</td>" +
        '<td><a href="' + esc(hashOf(Object.assign({}, view, { case: id }))) + '">' + esc(c.test) + "</a>" +
        (c.description ? '<div class="muted">' + esc(c.description) + "</div>" : "") + "</td>" +
        "<td>" + esc(c.suite) + '</td><td class="num">' + score(c.score) + "</td><td>" + evals + "</td>" +
        verdictCell(evaluatorOf(c, "checks")) + verdictCell(evaluatorOf(c, "budget")) +
        "<td>" + esc(recordingText(c.recording)) + "</td><td>" + esc(c.usage ? usageText(c.usage) : "–") + "</td></tr>";
    }
    $("rows").innerHTML = html;
    const button = (label, p, disabled) =>
      '<button type="button" data-page="' + p + '"' + (disabled ? " disabled" : "") + ">" + label + "</button>";
    $("pager").innerHTML = pages > 1 ? button("« First", 1, page === 1) + button("‹ Previous", page - 1, page === 1) +
      "<span>page " + page + " of " + pages + "</span>" + button("Next ›", page + 1, page === pages) +
      button("Last »", pages, page === pages) : "";
  }

  // ---- one case ------------------------------------------------------------------------------

  // An evaluator that passed only because its failing statements are advisory (the judge is
  // below its calibration bar) is not shown as a plain pass.
  const advisoryMiss = (e) => (e.verdicts || []).some((v) => v.advisory && !v.passed);
  const verdictClass = (e) => (!e.passed ? "fail" : advisoryMiss(e) ? "advisory" : "pass");

  function json(value) {
    if (value == null) return '<p class="muted">none</p>';
    // A value over the size cap arrives as a string (its first 64 KiB and a note).
    return "<pre>" + esc(typeof value === "string" ? value : JSON.stringify(value, null, 2)) + "</pre>";
  }
  // The failure body (mismatches, then a unified diff), each diff line marked.
  function diffText(text) {
    let inDiff = false;
    const lines = text.replace(/\n$/, "").split("\n").map((line) => {
      if (line.startsWith("--- ") || line.startsWith("+++ ")) { inDiff = true; return '<span class="hunk">' + esc(line) + "</span>"; }
      if (inDiff && line.startsWith("@@")) return '<span class="hunk">' + esc(line) + "</span>";
      if (inDiff && line.startsWith("+")) return '<span class="add">' + esc(line) + "</span>";
      if (inDiff && line.startsWith("-")) return '<span class="del">' + esc(line) + "</span>";
      return esc(line) + "\n";
    });
    return '<pre class="diff">' + lines.join("") + "</pre>";
  }
  function evaluatorBlock(e) {
    const word = !e.passed ? "fail" : advisoryMiss(e) ? "pass (advisory misses)" : "pass";
    let html = '<div class="evaluator ' + (e.passed ? "passed" : "failed") + '" data-evaluator="' + esc(e.evaluator) + '">' +
      "<h4>" + esc(e.evaluator) + ' <span class="badge ' + verdictClass(e) + '">' + word +
      "</span> " + e.score.toFixed(2) + "</h4><p>" + esc(e.summary) + "</p>";
    if (e.misses && e.misses.length && !e.rendered) {
      html += '<ul class="misses">' + e.misses.map((m) => "<li>" + esc(m) + "</li>").join("") + "</ul>";
    }
    if (e.rendered) html += diffText(e.rendered);
    if (e.fields && e.fields.length) {
      html += '<p>Fields: ' + e.fields.map((f) => '<span class="' + (f.hit ? "pass" : "fail") + '">' +
        (f.hit ? "✓ " : "✗ ") + esc(f.path) + "</span>").join(", ") + "</p>";
    }
    if (e.verdicts && e.verdicts.length) {
      // The judge's answer (holds / does not hold) and the statement's outcome (passed / failed)
      // apart: a `must not` statement passes when it does not hold.
      html += '<table class="judge"><caption>The judge\'s verdicts</caption><thead><tr><th scope="col">Statement</th>' +
        '<th scope="col">Answer</th><th scope="col">Outcome</th><th scope="col">Reason</th></tr></thead><tbody>';
      for (const v of e.verdicts) {
        const holds = v.holds != null ? v.holds : v.passed !== /^must not: /.test(v.statement);
        const answer = (h) => (h ? "holds" : "does not hold");
        const votes = (x) => (x ? ' <span class="muted votes">(' + x.holds + " holds, " + x.does_not_hold + " does not)</span>" : "");
        let samples = "";
        if (v.samples && v.samples.length) {
          samples = '<ol class="samples">' + v.samples.map((a) => "<li>" + (a == null ? '<span class="muted">no verdict</span>' :
            answer(a.holds) + votes(a.votes) + ', <span class="' + (a.passed ? "pass" : "fail") + '">' + (a.passed ? "passed" : "failed") + "</span>") + "</li>").join("") + "</ol>";
        }
        html += "<tr><td>" + esc(v.statement) + '</td><td class="answer">' + answer(holds) + votes(v.votes) + samples +
          '</td><td class="outcome ' + (v.passed ? "pass" : "fail") + '">' + (v.passed ? "passed" : "failed") +
          (v.advisory ? ' <span class="muted">(advisory)</span>' : "") + "</td><td>" + esc(v.reason) + "</td></tr>";
      }
      html += "</tbody></table>";
    }
    return html + "</div>";
  }
  // An expected step: its tool, its arguments, then any other key it has.
  function stepText(step) {
    if (step == null) return '<span class="muted">–</span>';
    if (typeof step !== "object" || typeof step.tool !== "string") return "<code>" + esc(JSON.stringify(step)) + "</code>";
    const rest = Object.assign({}, step);
    delete rest.tool;
    delete rest.args;
    return "<code>" + esc(step.tool) + "</code>" + (step.args !== undefined ? " <code>" + esc(JSON.stringify(step.args)) + "</code>" : "") +
      (Object.keys(rest).length ? ' <span class="muted">' + esc(JSON.stringify(rest)) + "</span>" : "");
  }
  function trajectoryBlock(c) {
    const calls = c.trajectory || [];
    const aligned = (c.evaluators || []).filter((e) => Array.isArray(e.alignment));
    if (!calls.length && !aligned.length) return "";
    // The calls of one model response were asked for together (parallel): their order means nothing.
    const parallel = (t) => (t.response == null || calls.filter((u) => u.response === t.response).length < 2 ? "" :
      ' <span class="muted">parallel, model call ' + (t.response + 1) + "</span>");
    const call = (k) => (k == null || !calls[k] ? '<span class="muted">–</span>' :
      "#" + (k + 1) + " <code>" + esc(calls[k].tool) + "</code> <code>" + esc(JSON.stringify(calls[k].args)) + "</code>" + parallel(calls[k]));
    let html = '<section id="trajectory" aria-labelledby="trajectory-title"><h3 id="trajectory-title">Trajectory (' +
      plural(calls.length, "tool call") + ")</h3>";
    if (aligned.length) {
      for (const e of aligned) {
        html += '<table class="alignment" data-evaluator="' + esc(e.evaluator) + '"><caption>Alignment by ' + esc(e.evaluator) +
          '</caption><thead><tr><th scope="col">Expected step</th><th scope="col">Call</th><th scope="col">Status</th>' +
          '<th scope="col">Mismatches</th></tr></thead><tbody>';
        for (const row of e.alignment) {
          html += '<tr class="st-' + esc(row.status) + '"><td>' + stepText(row.step) + "</td><td>" + call(row.call) + '</td><td class="status">' +
            esc(row.status) + "</td><td>" + esc((row.mismatches || []).join("; ")) + "</td></tr>";
        }
        html += "</tbody></table>";
      }
    } else {
      html += '<ol class="calls">' + calls.map((t) => "<li><code>" + esc(t.tool) + "</code> <code>" +
        esc(JSON.stringify(t.args)) + "</code>" + parallel(t) + "</li>").join("") + "</ol>";
    }
    return html + "</section>";
  }
  function callsBlock(c) {
    const calls = c.calls || [];
    let html = '<section id="model-calls" aria-labelledby="model-calls-title"><h3 id="model-calls-title">Model calls</h3>' +
      "<p>" + esc(usageText(c.usage)) + "</p>";
    if (calls.length) {
      const n = (x, d) => (x == null ? "–" : d == null ? String(x) : x.toFixed(d));
      html += '<table><thead><tr><th scope="col">#</th><th scope="col">Kind</th><th scope="col">Model</th>' +
        '<th scope="col" class="num">Input tokens</th><th scope="col" class="num">Output tokens</th>' +
        '<th scope="col" class="num">Latency</th><th scope="col" class="num">Cost</th></tr></thead><tbody>';
      calls.forEach((k, i) => {
        html += "<tr><td>" + (i + 1) + "</td><td>" + esc(k.kind) + "</td><td>" + esc(k.model || "–") + '</td><td class="num">' +
          n(k.input_tokens) + '</td><td class="num">' + n(k.output_tokens) + '</td><td class="num">' + (k.latency_ms == null ? "–" : duration(k.latency_ms)) +
          '</td><td class="num">' + (k.cost_usd == null ? "–" : money(k.cost_usd)) + "</td></tr>";
      });
      html += "</tbody></table>";
    }
    return html + "</section>";
  }
  function drawCase(view, changed) {
    const panel = $("case-detail");
    const i = view.case ? (byId.has(view.case) ? byId.get(view.case) : byTest.get(view.case)) : undefined;
    if (i === undefined && view.case && !complete) {
      panel.hidden = false;
      panel.innerHTML = "<p>Reading the cases…</p>";
      return;
    }
    if (i === undefined) {
      panel.hidden = !view.case;
      panel.innerHTML = view.case ? "<p>No case <code>" + esc(view.case) + "</code> in this report.</p>" : "";
      return;
    }
    const c = cases[i];
    const s = c.samples;
    const facts = [
      ["Verdict", '<span class="badge ' + (c.passed ? "pass" : "fail") + '">' + (c.passed ? "pass" : "fail") + "</span> score " + score(c.score)],
      ["Suite", esc(c.suite) + ' <span class="muted">' + esc(c.suite_dir) + "</span>"],
      ["Test binary", esc(c.package + " / " + c.binary)],
      ["Fixture", "<code>" + esc(c.fixture) + "</code>"],
      ["Recording", esc(recordingText(c.recording)) + (c.recording_path ? " · <code id=\"recording-path\">" + esc(c.recording_path) + "</code>" : "")],
      ["Run", esc(c.run || "–") + " · finished " + esc(c.finished_at) + (c.older ? ' <span class="badge older">older run</span>' : "")],
    ];
    if (s) facts.push(["Samples", s.passed + " of " + s.verdicts.length + " passed (rule " + esc(JSON.stringify(s.pass)) + "), scores " +
      esc(s.scores.map(score).join(", "))]);
    let html = '<div class="head"><h2 id="case-title">' + esc(c.test) + '</h2><a href="' + esc(hashOf(Object.assign({}, view, { case: "" }))) +
      '" id="case-close">Close (Esc)</a></div>' + (c.description ? "<p>" + esc(c.description) + "</p>" : "") +
      '<dl class="facts">' + facts.map(([k, v]) => "<dt>" + k + "</dt><dd>" + v + "</dd>").join("") + "</dl>";
    // The failure text once: the evaluators show theirs; a failure no evaluator explains (the
    // code's error) under its own heading.
    const explained = (c.evaluators || []).some((e) => !e.passed && (e.rendered || (e.misses || []).length));
    if (c.failure && !explained) html += '<section id="failure"><h3>Failure</h3>' + diffText(c.failure) + "</section>";
    if (c.story) {
      html += '<p id="story-left-out" class="muted">This case\u2019s input, output and model calls are not in this page ' +
        "(it holds the stories of as many cases as it can open with, failing cases first). They are in " +
        '<code id="story-journal">' + esc(c.story.journal) + "</code>, bytes " + c.story.offset + "\u2013" +
        (c.story.offset + c.story.length) + ", beside this page.</p>";
    } else {
      // An input (or an output that was its `expected`) its fixture no longer holds is not shown; why is.
      const input = c.input_missing ? '<p id="input-missing" class="muted">' + esc(c.input_missing) + "</p>" : json(c.input);
      const output = c.output_missing ? '<p id="output-missing" class="muted">' + esc(c.output_missing) + "</p>" : json(c.output);
      html += '<div class="two"><section id="case-input"><h3>Input</h3>' + input + "</section>" +
        '<section id="case-output"><h3>Output</h3>' + output + "</section></div>";
    }
    html += '<section id="evaluators"><h3>Evaluators</h3>' + ((c.evaluators || []).map(evaluatorBlock).join("") ||
      '<p class="muted">none ran</p>') + "</section>";
    html += trajectoryBlock(c) + callsBlock(c);
    panel.innerHTML = html;
    panel.dataset.case = caseId(c);
    panel.hidden = false;
    if (changed) {
      // Opened from the list below: brought into view; on load it is at the top already.
      if (panel.getBoundingClientRect().top < 0) panel.scrollIntoView({ block: "start" });
      panel.focus({ preventScroll: true });
    }
  }

  // ---- the whole view ------------------------------------------------------------------------

  let shownCase = null;
  function render() {
    const view = readView();
    drawRows(view);
    drawCase(view, view.case !== shownCase && view.case !== "");
    if (!view.case && shownCase) {
      // Back to the list: focus the row of the case just closed.
      const row = document.querySelector('#rows tr[data-id="' + CSS.escape(shownCase) + '"] a');
      if (row) row.focus();
    }
    shownCase = view.case;
  }
  setCases(report.cases || [], false);
  drawSummary();
  drawCharts();
  drawComparison();
  fillFilters();
  $("pager").addEventListener("click", (e) => {
    const p = e.target.closest("button[data-page]");
    if (p) go({ page: p.dataset.page });
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && readView().case) go({ case: "" });
  });
  window.addEventListener("hashchange", render);
  render();
  const first = $("first-render");
  first.dataset.scriptMs = started.toFixed(0);
  first.dataset.ms = performance.now().toFixed(0);
  requestAnimationFrame(() => { first.dataset.frameMs = performance.now().toFixed(0); });

  function readAll() {
    try {
      const whole = readJson("report-data");
      setCases(whole ? whole.cases || [] : cases, true);
    } catch (e) {
      loadError(e);
      return;
    }
    render();
    first.dataset.allMs = performance.now().toFixed(0);
    first.textContent = "First screen drawn in " + first.dataset.ms + " ms; all " + plural(cases.length, "case") +
      " read in " + first.dataset.allMs + " ms.";
    document.body.dataset.rendered = "true";
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", readAll);
  else readAll();
})();
