// The first screen of a report page in headless Chromium against a blank page's, measured from
// outside the page through the DevTools protocol (issue 37: "the first screen within 2 s more
// than a blank page takes").
//
//   node --experimental-websocket page_first_screen.mjs REPORT_HTML [ROUNDS] [CHROMIUM]
//
// Each round starts one Chromium (a fresh profile) per page, the blank page and the report in
// turn, and for each: navigates to its file:// URL; asks the page every 10 ms whether its first
// screen is in the DOM (the report: the summary drawn and a first row of cases; the blank page:
// its one paragraph), each question answered only when the page's main thread is free; then
// asks for a screenshot, which Chromium answers once it has painted a frame. The first screen's
// time is from the navigation's start to that screenshot. Also printed: when the load event
// fired (the whole file read) and when every case was read (`#first-render`'s `data-all-ms`,
// the page's own clock). At the end: per page the median and quartiles, and of the report less
// the blank page in the same round. SCREENSHOT=FILE.png keeps the report's first-screen shot.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [report, roundsArg, chromiumArg] = process.argv.slice(2);
if (!report || !existsSync(report)) {
  console.error("usage: node --experimental-websocket page_first_screen.mjs REPORT_HTML [ROUNDS] [CHROMIUM]");
  process.exit(2);
}
const rounds = Number(roundsArg || 5);
const chromium = chromiumArg || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const scratch = mkdtempSync(join(tmpdir(), "page-first-screen-"));
const blank = join(scratch, "blank.html");
writeFileSync(blank, '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>blank</title></head>' +
  '<body><p id="blank">blank</p></body></html>\n');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function devtools(profile) {
  const child = spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"], { stdio: "ignore" });
  const portFile = join(profile, "DevToolsActivePort");
  for (let i = 0; i < 600 && !existsSync(portFile); i++) await sleep(50);
  await sleep(50);
  const port = readFileSync(portFile, "utf8").split("\n")[0];
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(targets.find((t) => t.type === "page").webSocketDebuggerUrl);
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
  let next = 1;
  const waiting = new Map(), events = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
    else if (msg.method) events.push([msg.method, performance.now()]);
  };
  const send = (method, params = {}) => new Promise((ok) => {
    const id = next++;
    waiting.set(id, ok);
    ws.send(JSON.stringify({ id, method, params }));
  });
  return { child, ws, send, events };
}

async function measure(file, shown) {
  const profile = mkdtempSync(join(scratch, "profile-"));
  const { child, ws, send, events } = await devtools(profile);
  try {
    await send("Page.enable");
    const start = performance.now();
    await send("Page.navigate", { url: "file://" + resolve(file) });
    for (;;) {
      const r = await send("Runtime.evaluate", { expression: shown, returnByValue: true });
      if (r.result && r.result.result && r.result.result.value === true) break;
      if (performance.now() - start > 120000) throw new Error("no first screen within 120 s");
      await sleep(10);
    }
    const shot = await send("Page.captureScreenshot", { format: "png" });
    const firstScreen = performance.now() - start;
    if (process.env.SCREENSHOT && file === report) {
      writeFileSync(process.env.SCREENSHOT, Buffer.from(shot.result.data, "base64"));
    }
    for (let i = 0; i < 2400 && !events.some(([m]) => m === "Page.loadEventFired"); i++) await sleep(50);
    const load = events.find(([m]) => m === "Page.loadEventFired");
    const all = await send("Runtime.evaluate", {
      expression: "(document.getElementById('first-render') || {dataset: {}}).dataset.allMs || null",
      returnByValue: true,
    });
    return { firstScreen, load: load ? load[1] - start : NaN, allMs: Number(all.result.result.value) };
  } finally {
    ws.close();
    child.kill("SIGKILL");
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    rmSync(profile, { recursive: true, force: true });
  }
}

const SHOWN_REPORT = "!!(document.querySelector('#summary *') && document.querySelector('#rows tr'))";
const SHOWN_BLANK = "!!document.getElementById('blank')";
const rows = { blank: [], report: [], extra: [], load: [], all: [] };
for (let r = 0; r < rounds; r++) {
  const b = await measure(blank, SHOWN_BLANK);
  const p = await measure(report, SHOWN_REPORT);
  rows.blank.push(b.firstScreen); rows.report.push(p.firstScreen);
  rows.extra.push(p.firstScreen - b.firstScreen); rows.load.push(p.load); rows.all.push(p.allMs);
  console.log(`round ${r + 1}: blank ${b.firstScreen.toFixed(0)} ms; report: first screen ` +
    `${p.firstScreen.toFixed(0)} ms, load event ${p.load.toFixed(0)} ms, every case read ${p.allMs} ms`);
}
const q = (xs, f) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(f * s.length))]; };
const line = (name, xs) => console.log(`${name}: median ${q(xs, 0.5).toFixed(0)} ms ` +
  `(quartiles ${q(xs, 0.25).toFixed(0)}-${q(xs, 0.75).toFixed(0)})`);
line("blank page, first screen", rows.blank);
line("report, first screen", rows.report);
line("report less blank, same round", rows.extra);
line("report, load event", rows.load);
line("report, every case read (its own clock)", rows.all);
rmSync(scratch, { recursive: true, force: true });
