// What bench/scale.mjs prints: per daemon, each figure at each step, how it grows per 1,000
// containers (or per 100 images) and whether that growth is straight, with the goal beside it;
// then engined against dockerd.
import { sideBySide } from "./table.mjs";

/** The least-squares slope of `ys` over `xs`, or undefined with fewer than two points. */
export function slope(xs, ys) {
  const pts = xs.map((x, i) => [x, ys[i]]).filter(([, y]) => typeof y === "number" && Number.isFinite(y));
  if (pts.length < 2) return undefined;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  const sxx = pts.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx ? pts.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx : undefined;
}

/**
 * How the second half of the range grew next to the first (same span each): about 1 for a
 * straight line, 3 for a quadratic. Only where the whole growth is big enough to tell (`floor`).
 */
export function bend(xs, ys, floor) {
  const last = xs.length - 1;
  const mid = xs.indexOf(xs[last] / 2);
  if (mid <= 0 || [ys[0], ys[mid], ys[last]].some((y) => typeof y !== "number")) return undefined;
  const first = ys[mid] - ys[0];
  const second = ys[last] - ys[mid];
  return ys[last] - ys[0] >= floor && first > 0 ? second / first : undefined;
}

/** The rows of the container steps: label, the step's field, unit, goal, the growth worth calling a bend. */
export const containerRows = [
  ["create, p50", "createP50", "ms", "no growth", 2],
  ["create, p99", "createP99", "ms", "no growth", 5],
  ["create, daemon CPU", "createCpu", "ms", "no growth", 1],
  ["GET /containers/json?all=1", "listAll", "ms", "straight (bend about 1)", 2],
  ["  daemon CPU", "listAllCpu", "ms", "straight (bend about 1)", 2],
  ["GET /containers/json (running)", "listRunning", "ms", "grows with the running ones only", 2],
  ["  daemon CPU", "listRunningCpu", "ms", "grows with the running ones only", 1],
  ["inspect by id", "inspectId", "ms", "no growth", 1],
  ["  daemon CPU", "inspectIdCpu", "ms", "no growth", 0.5],
  ["inspect by name", "inspectName", "ms", "no growth", 1],
  ["  daemon CPU", "inspectNameCpu", "ms", "no growth", 0.5],
  ["daemon RSS", "daemonRss", "MiB", "straight; per 1,000 <= dockerd's", 5],
  ["supervisor RSS (containerd)", "supervisorRss", "MiB", "straight", 5],
  ["monitors RSS (conmon / shims)", "monitorsRss", "MiB", "per running container <= dockerd's", 5],
];

export const imageRows = [
  ["GET /images/json", "listImages", "ms", "straight (bend about 1)", 2],
  ["  daemon CPU", "listImagesCpu", "ms", "straight (bend about 1)", 1],
  ["inspect an image by name", "inspectImage", "ms", "no growth", 1],
  ["  daemon CPU", "inspectImageCpu", "ms", "no growth", 0.5],
];

const fmt = (v) => (typeof v !== "number" || !Number.isFinite(v) ? "n/a" : v.toFixed(Math.abs(v) < 10 ? 2 : 1));

/** One daemon's table: the figure at each step, the slope per `per`, the bend, the goal. */
function daemonTable(name, steps, xKey, rows, per, perLabel) {
  if (!steps?.length) return;
  const xs = steps.map((s) => s[xKey]);
  const head = ["figure".padEnd(34), ...xs.map((x) => String(x).padStart(9)), `per ${perLabel}`.padStart(12), "bend".padStart(6), "  goal"];
  console.log(`\n${name}, by ${xKey === "count" ? "containers created" : "images"}`);
  console.log(head.join(" "));
  for (const [label, key, unit, goal, floor] of rows) {
    const ys = steps.map((s) => s[key]);
    if (ys.every((y) => typeof y !== "number")) continue;
    const m = slope(xs, ys);
    const b = bend(xs, ys, floor);
    const cells = [`${label} (${unit})`.padEnd(34), ...ys.map((y) => fmt(y).padStart(9)), (m === undefined ? "n/a" : `${m * per >= 0 ? "+" : ""}${fmt(m * per)}`).padStart(12), (b === undefined ? "-" : b.toFixed(1)).padStart(6), `  ${goal}`];
    console.log(cells.join(" "));
  }
}

/** Row labels for the comparison: an indented row ("  daemon CPU") is named after the row above it. */
const fullLabels = (rows) => {
  let above = "";
  return rows.map(([label, ...rest]) => [label.startsWith("  ") ? `${above}, ${label.trim()}` : (above = label), ...rest]);
};

/** Everything, for `{ engined, dockerd }` as bench/scale.mjs measured them. */
export function printScale(results, { max, running, images }) {
  for (const [name, r] of Object.entries(results)) {
    if (r.failed) {
      console.log(`\n${name}: n/a (${r.failed})`);
      continue;
    }
    daemonTable(name, r.steps?.ok, "count", containerRows, 1000, "1,000");
    if (r.steps?.ok) {
      const last = r.steps.ok.at(-1);
      console.log(`(${last.running} running at ${last.count}; ${last.monitors} monitor processes; the monitors' RSS per running container: ${fmt(last.monitorsRss / Math.max(1, last.monitors))} MiB)`);
    }
    if (r.steps?.na) console.log(`(${name}'s container steps stopped: ${r.steps.na})`);
    daemonTable(name, r.images?.ok, "images", imageRows, 100, "100 images");
    if (r.images?.na) console.log(`(${name}'s image steps stopped: ${r.images.na})`);
  }
  console.log("\nbend: how much the second half of the range grew next to the first half (same span):");
  console.log("about 1 is straight, 3 is quadratic; '-' where the whole growth is too small to tell.");

  // engined against dockerd: the figures at the largest step, and their growth
  const at = (r, key) => r.steps?.ok?.at(-1)?.[key];
  const growth = (r, key, list = r.steps?.ok, xKey = "count", per = 1000) => {
    const m = list && slope(list.map((s) => s[xKey]), list.map((s) => s[key]));
    return m === undefined ? undefined : m * per;
  };
  const table = sideBySide(results, 62);
  console.log(`\nengined against dockerd: ${max} containers created, ${running} running; ${images} images`);
  table.header();
  for (const [label, key, unit] of fullLabels(containerRows)) {
    const kind = unit === "MiB" ? "mib" : "ms";
    table.row(`${label}, at ${max}`, (r) => (r.steps?.na && !r.steps.ok ? r.steps : r), (r) => at(r, key), kind);
  }
  for (const [label, key, unit] of fullLabels(containerRows)) {
    const kind = unit === "MiB" ? "mib" : "ms";
    table.row(`${label}, growth per 1,000`, (r) => (r.steps?.na && !r.steps.ok ? r.steps : r), (r) => growth(r, key), kind, { ratio: false });
  }
  for (const [label, key] of fullLabels(imageRows)) {
    table.row(`${label}, at ${images} images`, (r) => (r.images?.na && !r.images.ok ? r.images : r), (r) => r.images?.ok?.at(-1)?.[key], "ms");
    table.row(`${label}, growth per 100 images`, (r) => (r.images?.na && !r.images.ok ? r.images : r), (r) => growth(r, key, r.images?.ok, "images", 100), "ms", { ratio: false });
  }
  table.printNotes();
  console.log("(growth rows: the least-squares slope over the steps, no ratio: a slope near 0 is noise on both sides)");
}
