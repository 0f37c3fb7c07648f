// What bench/pull.mjs prints at the end: the table of the daemons' medians (MB/s, peak RSS, CPU s)
// with engined/dockerd, each run's MB/s, the notes of a daemon that gave no figure; with --detail
// each run's CPU split, with --timeline when each layer reached each progress status.

/** One run's --timeline marks (marksOf in bench/pull.mjs): the first line and the end, then a line per layer. */
function printTimeline(marks) {
  const short = { "Pulling fs layer": "fs", Waiting: "wait", Downloading: "dl", "Verifying Checksum": "verify", "Download complete": "dl done", Extracting: "extr", "Pull complete": "done" };
  console.log(`    first line ${marks["first line"].toFixed(0)} ms, end ${marks.end.toFixed(0)} ms`);
  for (const [id, layer] of marks.layers) {
    console.log(`    ${id}: ${[...layer].map(([s, t]) => `${short[s] ?? s} ${t.toFixed(0)}`).join(", ")}`);
  }
}

/**
 * `results`: per daemon, what summary() in bench/pull.mjs gave. Then the image's `bytes`, its
 * `layers`, the `runs` asked for, the registry's `version`, and whether to print the `detail`
 * and the `timeline`.
 */
export function printReport(results, { bytes, layers, runs, version, detail, timeline }) {
  const notes = [];
  const cell = (r, key, digits) => {
    if (!r) return "-";
    if (r.na !== undefined) {
      let i = notes.indexOf(r.na);
      if (i < 0) i = notes.push(r.na) - 1;
      return `n/a (${i + 1})`;
    }
    return r[key].toFixed(digits);
  };
  const e = results.engined;
  const d = results.dockerd;
  console.log(`\npull of a ${(bytes / 1e6).toFixed(0)} MB image (${layers} layers, gzip), from docker-registry ${version} on 127.0.0.1, median of ${runs} runs`);
  console.log(`${"".padEnd(12)} ${"MB/s".padStart(10)} ${"peak RSS MiB".padStart(14)} ${"CPU s".padStart(7)}`);
  for (const [name, r] of Object.entries(results)) {
    let ratio = "";
    if (name === "dockerd" && e?.rate && d?.rate) {
      const x = e.rate / d.rate;
      ratio = `   engined/dockerd = ${x.toFixed(2)}${Math.abs(x - 1) < 0.05 ? " (about the same)" : ""}`;
    }
    if (r.n !== undefined && r.n < runs) ratio += `   (${r.n} of ${runs} runs)`;
    console.log(`${name.padEnd(12)} ${cell(r, "rate", 1).padStart(10)} ${cell(r, "rss", 1).padStart(14)} ${cell(r, "cpu", 2).padStart(7)}${ratio}`);
  }
  const each = Object.entries(results).filter(([, r]) => r.rates).map(([name, r]) => `${name} ${r.rates.map((x) => x.toFixed(1)).join(", ")}`);
  if (each.length) console.log(`(each run, MB/s: ${each.join("; ")})`);
  console.log("(MB/s: compressed bytes of the layers over the time from the request to the end of the progress stream;");
  console.log(" peak RSS: the daemon and all its child processes (unpigz, Docker's containerd, engined's supervisor if started),");
  console.log(" summed, sampled every 100 ms during the pull;");
  console.log(" CPU s: user + system seconds of the daemon and its child processes during the pull; medians of the runs)");
  notes.forEach((note, i) => console.log(`(${i + 1}) ${note}`));
  if (detail) {
    // each run's CPU seconds, user/system, by thread of the daemon and by child process
    for (const [name, r] of Object.entries(results)) {
      if (!r.splits) continue;
      console.log(`\n${name}: CPU s of each run, user/system`);
      r.splits.forEach((parts, i) => {
        const rows = [...parts].sort((a, b) => b[1][0] + b[1][1] - a[1][0] - a[1][1]).map(([who, [u, s]]) => `${who} ${u.toFixed(2)}/${s.toFixed(2)}`);
        console.log(`  run ${i + 1}: ${r.cpus[i].toFixed(2)} (${rows.join(", ")}); the registry ${r.registryCpus[i].toFixed(2)}`);
      });
    }
  }
  if (timeline) {
    // when each layer reached each status, ms from the request
    for (const [name, r] of Object.entries(results)) {
      if (!r.timelines) continue;
      console.log(`\n${name}: progress of each run, ms from the request to the first line of each status`);
      r.timelines.forEach((marks, i) => {
        console.log(`  run ${i + 1}:`);
        printTimeline(marks);
      });
    }
  }
}
