/**
 * Go's json.Indent on the daemon's own bytes, as `inspect` prints: the keys' order, the numbers'
 * spelling and the escapes stay as the daemon wrote them; only whitespace changes. Empty `{}`
 * and `[]` stay on one line, as Go leaves them.
 */
export function indentJson(raw: string, indent = "    "): string {
  let out = "";
  let depth = 0;
  let i = 0;
  const newline = () => "\n" + indent.repeat(depth);
  while (i < raw.length) {
    const c = raw[i];
    if (c === '"') {
      let j = i + 1;
      while (j < raw.length && raw[j] !== '"') j += raw[j] === "\\" ? 2 : 1;
      out += raw.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "{" || c === "[") {
      // an empty object or array stays "{}" / "[]"
      let j = i + 1;
      while (j < raw.length && /\s/.test(raw[j])) j++;
      if (raw[j] === (c === "{" ? "}" : "]")) {
        out += c + raw[j];
        i = j + 1;
        continue;
      }
      depth++;
      out += c + newline();
      i++;
      continue;
    }
    if (c === "}" || c === "]") {
      depth--;
      out += newline() + c;
      i++;
      continue;
    }
    if (c === ",") {
      out += "," + newline();
      i++;
      continue;
    }
    if (c === ":") {
      out += ": ";
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** Go's json.Compact on the daemon's bytes. */
export function compactJson(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      let j = i + 1;
      while (j < raw.length && raw[j] !== '"') j += raw[j] === "\\" ? 2 : 1;
      out += raw.slice(i, j + 1);
      i = j;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}
