// engined's and Docker's figures side by side, a row each, with how engined compares. A figure a
// daemon could not give prints "n/a (k)", its reason numbered under the table.

const kinds = {
  ms: { unit: "ms", lowerIsBetter: true, better: "faster", worse: "worse" },
  rate: { unit: "/s", lowerIsBetter: false, better: "faster", worse: "worse" },
  mib: { unit: "MiB", lowerIsBetter: true, better: "less", worse: "more" },
  factor: { unit: "x", lowerIsBetter: true, better: "less", worse: "more" },
  s: { unit: "s", lowerIsBetter: true, better: "less", worse: "more" },
};

/**
 * `results` is `{ engined, dockerd }`, each the object a bench measured for that daemon (absent:
 * not run; `failed`: the reason it gave nothing). A row's `pickObj` chooses a part of it (or
 * `{ na: reason }`), `pickValue` the number in that part.
 */
export function sideBySide(results, labelWidth = 44) {
  const notes = [];
  const note = (reason) => {
    let i = notes.indexOf(reason);
    if (i < 0) i = notes.push(reason) - 1;
    return { text: `n/a (${i + 1})` };
  };
  const cell = (r, pick) => {
    if (!r) return { text: "-" };
    if (r.failed) return note(r.failed);
    let v;
    try {
      v = pick(r);
    } catch {
      v = undefined;
    }
    if (v && typeof v === "object" && "na" in v) return note(v.na);
    if (typeof v !== "number" || !Number.isFinite(v)) return { text: "n/a" };
    return { value: v };
  };
  return {
    header(title = "") {
      console.log(`${title.padEnd(labelWidth)} ${"engined".padStart(14)} ${"dockerd".padStart(14)}`);
    },
    /** Within 5% reads "about the same"; `ratio: false` for figures too noisy to compare. */
    row(label, pickObj, pickValue, kind, { ratio: withRatio = true } = {}) {
      const k = kinds[kind];
      const pick = (r) => {
        const o = pickObj(r);
        return o && typeof o === "object" && "na" in o ? o : o === undefined ? undefined : pickValue(o);
      };
      const e = cell(results.engined, pick);
      const d = cell(results.dockerd, pick);
      const fmt = (c) => (c.value === undefined ? c.text : `${c.value.toFixed(c.value < 10 ? 2 : 1)} ${k.unit}`);
      let ratio = "";
      if (withRatio && e.value !== undefined && d.value !== undefined && e.value > 0 && d.value > 0) {
        const gain = k.lowerIsBetter ? d.value / e.value : e.value / d.value;
        ratio = Math.abs(gain - 1) < 0.05 ? "about the same" : gain >= 1 ? `engined ${gain.toFixed(1)}x ${k.better}` : `engined ${(1 / gain).toFixed(1)}x ${k.worse}`;
      }
      console.log(`${label.padEnd(labelWidth)} ${fmt(e).padStart(14)} ${fmt(d).padStart(14)}  ${ratio}`);
    },
    /** The reasons of the n/a cells, and what only runc could remove at the end. */
    printNotes() {
      notes.forEach((n, i) => console.log(`(${i + 1}) ${n}`));
      for (const [name, r] of Object.entries(results)) if (r.leftovers) console.log(`${name}: ${r.leftovers} container(s) left running had to be removed with runc directly`);
    },
  };
}
