/**
 * Aligned columns as the Docker CLI writes them (Go's text/tabwriter, elastic tabstops): cells
 * end with a tab; tab-terminated cells of consecutive lines form a column as wide as its widest
 * cell plus the padding (at least `minWidth`); the text after a line's last tab is not part of a
 * column and is not padded. Tables use minWidth 10 and padding 3; `version` uses 20 and 1.
 */

export interface TableOptions {
  minWidth?: number;
  padding?: number;
}

interface Cell {
  text: string;
  width: number;
}

/** Display width: one column per code point, as the CLI counts for the text it prints. */
function widthOf(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Aligns `text` (lines of tab-terminated cells, "\n" between lines) as the Docker CLI does. */
export function alignColumns(text: string, opts: TableOptions = {}): string {
  const minWidth = opts.minWidth ?? 10;
  const padding = opts.padding ?? 3;
  // \v terminates a cell as \t does; \f ends a line as \n does
  const lines: Cell[][] = text.split(/\n|\f/).map((line) => line.split(/\t|\v/).map((t) => ({ text: t, width: widthOf(t) })));
  const out: string[] = [];
  const widths: number[] = [];

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      let s = "";
      lines[i].forEach((cell, j) => {
        s += cell.text;
        if (j < widths.length && j < lines[i].length - 1) s += " ".repeat(Math.max(0, widths[j] - cell.width));
      });
      out[i] = s;
    }
  };

  // Go's format(): find blocks of lines that have a cell in `column`, size it, recurse right.
  const format = (line0: number, line1: number) => {
    const column = widths.length;
    let start = line0;
    for (let i = line0; i < line1; i++) {
      if (column >= lines[i].length - 1) continue;
      writeLines(start, i);
      let width = minWidth;
      let end = i;
      for (; end < line1; end++) {
        if (column >= lines[end].length - 1) break;
        width = Math.max(width, lines[end][column].width + padding);
      }
      widths.push(width);
      format(i, end);
      widths.pop();
      start = end;
      i = end - 1;
    }
    writeLines(start, line1);
  };
  format(0, lines.length);
  return out.join("\n");
}
